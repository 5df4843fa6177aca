//! How answers are shown: tables padded to their widest cell, or the
//! API's own JSON.

use super::http::Api;
use super::when::Zone;
use anyhow::Context;
use app::model::short_kind;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// `nvidia.com/…` names for the short ones people type.
pub(super) fn full_kind(kind: &str) -> String {
    if kind.contains('/') {
        kind.to_string()
    } else {
        format!("nvidia.com/{}", kind.to_ascii_lowercase())
    }
}

pub(super) fn at(value: &Value) -> anyhow::Result<DateTime<Utc>> {
    value.as_str().and_then(|s| s.parse().ok()).with_context(|| format!("the portal sent `{value}` as a time"))
}

pub(super) fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

/// Columns padded to their widest cell.
pub(super) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(header.to_vec())];
    out.extend(rows.iter().map(|row| line(row.iter().map(String::as_str).collect())));
    out.join("\n")
}

pub(super) fn booking_line(
    b: &Value,
    names: &std::collections::HashMap<String, String>,
    zone: Zone,
) -> anyhow::Result<Vec<String>> {
    let pool = b["pool_id"].as_str().and_then(|id| names.get(id)).cloned().unwrap_or_else(|| "?".into());
    Ok(vec![
        b["id"].as_str().unwrap_or_default().to_string(),
        pool,
        short_kind(b["kind"].as_str().unwrap_or_default()),
        b["quantity"].to_string(),
        zone.show(at(&b["start"])?),
        zone.show(at(&b["end"])?),
        b["state"].as_str().unwrap_or_default().to_string(),
    ])
}

pub(super) const BOOKING_HEADER: [&str; 7] = ["ID", "POOL", "KIND", "UNITS", "START", "END", "STATE"];

/// Pool names by id, to show bookings by.
pub(super) async fn pool_names(api: &Api) -> anyhow::Result<std::collections::HashMap<String, String>> {
    let pools = api.get("/api/v1/pools").await?;
    Ok(pools
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["id"].as_str().unwrap_or_default().to_string(), p["name"].as_str().unwrap_or_default().to_string()))
        .collect())
}

pub(super) async fn show_booking(api: &Api, b: &Value, zone: Zone, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(b);
        return Ok(());
    }
    let names = pool_names(api).await?;
    let line = booking_line(b, &names, zone)?;
    for (name, value) in BOOKING_HEADER.iter().zip(line) {
        println!("{:<6} {value}", name.to_lowercase());
    }
    println!("{:<6} {}", "mode", b["mode"].as_str().unwrap_or_default());
    Ok(())
}
