//! What each user command does, one function per command; each returns
//! the process's exit code.

use super::print::{at, booking_line, full_kind, pool_names, print_json, show_booking, table, BOOKING_HEADER};
use super::when::Zone;
use super::{config, Api, BookArgs, FitArgs, FreeArgs};
use anyhow::Context;
use app::model::short_kind;
use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

/// A pool by name or id, among those the caller may book.
async fn pool(api: &Api, wanted: &str) -> anyhow::Result<Value> {
    let pools = api.get("/api/v1/pools").await?;
    pools
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == wanted || p["id"] == wanted)
        .cloned()
        .with_context(|| format!("no pool `{wanted}` among the ones you may book (see `berth pools`)"))
}

pub(super) async fn pools(api: &Api, json: bool) -> anyhow::Result<i32> {
    let pools = api.get("/api/v1/pools").await?;
    if json {
        print_json(&pools);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = pools
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let kinds: Vec<String> = p["kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|k| format!("{} ×{}", short_kind(k["kind"].as_str().unwrap_or_default()), k["capacity"]))
                .collect();
            let approval = if p["requires_approval"] == true { "yes" } else { "no" };
            vec![p["name"].as_str().unwrap_or_default().to_string(), kinds.join(", "), approval.into()]
        })
        .collect();
    println!("{}", table(&["POOL", "KINDS", "APPROVAL"], &rows));
    Ok(0)
}

pub(super) async fn free(api: &Api, args: FreeArgs) -> anyhow::Result<i32> {
    let FreeArgs { pool: wanted, kind, from, days, tz, json } = args;
    let zone = zone(api, tz.as_deref()).await?;
    let pool = pool(api, &wanted).await?;
    let kinds: Vec<&str> = pool["kinds"].as_array().into_iter().flatten().filter_map(|k| k["kind"].as_str()).collect();
    let kind = match (kind, kinds.as_slice()) {
        (Some(kind), _) => full_kind(&kind),
        (None, [only]) => only.to_string(),
        (None, _) => anyhow::bail!("--kind: {wanted} has several kinds: {}", kinds.join(", ")),
    };
    let start = zone.parse("--from", &from)?;
    let end = start + chrono::Duration::days(i64::from(days));
    let path = format!("/api/v1/pools/{}/availability", pool["id"].as_str().unwrap_or_default());
    let url = reqwest::Url::parse_with_params(
        &format!("{}{path}", api.base),
        &[("kind", kind.as_str()), ("from", &start.to_rfc3339()), ("to", &end.to_rfc3339())],
    )?;
    let steps = api.get(&url[url::Position::BeforePath..]).await?;
    if json {
        print_json(&steps);
        return Ok(0);
    }
    let rows = steps
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| Ok(vec![zone.show(at(&s["start"])?), zone.show(at(&s["end"])?), s["free"].to_string()]))
        .collect::<anyhow::Result<Vec<_>>>()?;
    println!("{} {}", pool["name"].as_str().unwrap_or_default(), short_kind(&kind));
    println!("{}", table(&["FROM", "UNTIL", "FREE"], &rows));
    Ok(0)
}

pub(super) async fn book(api: &Api, args: BookArgs) -> anyhow::Result<i32> {
    let BookArgs { pool: wanted, kind, units, from, length, mode, waitlist, tz, json } = args;
    let zone = zone(api, tz.as_deref()).await?;
    let pool = pool(api, &wanted).await?;
    let start = zone.parse("--from", &from)?;
    let body = json!({
        "pool_id": pool["id"], "kind": full_kind(&kind), "quantity": units,
        "start": start, "end": start + length, "mode": mode, "waitlist": waitlist,
    });
    let answer = api.call(Method::POST, "/api/v1/bookings", Some(body)).await?;
    if json {
        print_json(&answer.body);
        return Ok(if answer.status.is_success() { 0 } else { 1 });
    }
    match answer.status {
        StatusCode::CREATED => {
            let b = &answer.body;
            println!(
                "booked {}: {} {} ×{}, {} – {} ({})",
                b["id"].as_str().unwrap_or_default(),
                pool["name"].as_str().unwrap_or_default(),
                short_kind(b["kind"].as_str().unwrap_or_default()),
                b["quantity"],
                zone.show(at(&b["start"])?),
                zone.show(at(&b["end"])?),
                b["state"].as_str().unwrap_or_default()
            );
            if let Some(warning) = b["warning"].as_str() {
                eprintln!("warning: {warning}");
            }
        }
        StatusCode::ACCEPTED => {
            let e = &answer.body;
            println!(
                "on the waitlist {}: place {} for {} – {}",
                e["id"].as_str().unwrap_or_default(),
                e["position"],
                zone.show(at(&e["window"]["start"])?),
                zone.show(at(&e["window"]["end"])?)
            );
        }
        _ => {
            eprintln!("refused: {}", answer.body["message"].as_str().unwrap_or("the portal refused"));
            if let (Ok(s), Ok(e)) = (at(&answer.body["next_free"]["start"]), at(&answer.body["next_free"]["end"])) {
                eprintln!("next free window: {} – {}", zone.show(s), zone.show(e));
            }
            return Ok(1);
        }
    }
    Ok(0)
}

pub(super) async fn ls(api: &Api, all: bool, tz: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let zone = zone(api, tz).await?;
    let path = if all { "/api/v1/bookings" } else { "/api/v1/bookings?mine=true" };
    let bookings = api.get(path).await?;
    let now = Utc::now();
    let shown: Vec<&Value> = bookings
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| {
            all || (matches!(b["state"].as_str(), Some("pending" | "approved" | "active"))
                && at(&b["end"]).is_ok_and(|end| end > now))
        })
        .collect();
    if json {
        print_json(&Value::Array(shown.into_iter().cloned().collect()));
        return Ok(0);
    }
    let names = pool_names(api).await?;
    let rows = shown.iter().map(|b| booking_line(b, &names, zone)).collect::<anyhow::Result<Vec<_>>>()?;
    if rows.is_empty() {
        println!("no bookings{}", if all { "" } else { " ahead (--all shows past ones)" });
    } else {
        println!("{}", table(&BOOKING_HEADER, &rows));
    }
    Ok(0)
}

pub(super) async fn show(api: &Api, id: Uuid, tz: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let b = api.get(&format!("/api/v1/bookings/{id}")).await?;
    show_booking(api, &b, zone(api, tz).await?, json).await?;
    Ok(0)
}

pub(super) async fn extend(api: &Api, id: Uuid, to: &str, tz: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let zone = zone(api, tz).await?;
    let end = zone.parse("--to", to)?;
    let answer = api.call(Method::POST, &format!("/api/v1/bookings/{id}/extend"), Some(json!({ "end": end }))).await?;
    if answer.status == StatusCode::ACCEPTED && !json {
        println!(
            "extension requested: an admin of the pool decides (request {})",
            answer.body["id"].as_str().unwrap_or_default()
        );
        return Ok(0);
    }
    let b = answer.ok()?;
    show_booking(api, &b, zone, json).await?;
    Ok(0)
}

pub(super) async fn end(api: &Api, id: Uuid, json: bool) -> anyhow::Result<i32> {
    let b = api.post(&format!("/api/v1/bookings/{id}/end"), json!({})).await?;
    show_booking(api, &b, zone(api, None).await?, json).await?;
    Ok(0)
}

pub(super) async fn cancel(api: &Api, id: Uuid, json: bool) -> anyhow::Result<i32> {
    let b = api.post(&format!("/api/v1/bookings/{id}/cancel"), json!({})).await?;
    show_booking(api, &b, zone(api, None).await?, json).await?;
    Ok(0)
}

pub(super) async fn open(api: &Api, id: Uuid, browser: bool) -> anyhow::Result<i32> {
    let answer = api.call(Method::GET, &format!("/bookings/{id}/open"), None).await?;
    let location = answer.body["location"].as_str().map(str::to_owned);
    let Some(location) = location.filter(|_| answer.status.is_redirection()) else {
        return Err(answer.ok().err().unwrap_or_else(|| anyhow::anyhow!("the workspace is not ready")));
    };
    println!("{location}");
    if browser {
        std::process::Command::new("xdg-open").arg(&location).status().context("cannot run xdg-open")?;
    }
    Ok(0)
}

pub(super) async fn ics(api: &Api) -> anyhow::Result<i32> {
    let feed = api.get("/api/v1/me/calendar-feed").await?;
    match feed["url"].as_str() {
        Some(url) => println!("{url}"),
        None => anyhow::bail!("the address cannot be shown again; regenerate it on the portal's Settings page"),
    }
    Ok(0)
}

pub(super) async fn login(url: &url::Url) -> anyhow::Result<i32> {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        eprint!("API token (make one at {}tokens): ", url.as_str());
    }
    let mut token = String::new();
    std::io::stdin().lock().read_line(&mut token)?;
    let token = token.trim().to_string();
    anyhow::ensure!(!token.is_empty(), "no token given");
    let base = url.as_str().trim_end_matches('/').to_string();
    let me = Api::new(base.clone(), token.clone())?.get("/api/v1/me").await?;
    let path = config::save(&config::Config { url: Some(base), token: Some(token) })?;
    println!(
        "signed in as {} <{}>; saved in {}",
        me["name"].as_str().unwrap_or_default(),
        me["email"].as_str().unwrap_or_default(),
        path.display()
    );
    Ok(0)
}

/// `--tz` if given, else the zone the signed-in person chose in Settings
/// (or their browser reported), else the computer's.
async fn zone(api: &Api, tz: Option<&str>) -> anyhow::Result<Zone> {
    if tz.is_some() {
        return Zone::of(tz);
    }
    let chosen = api.get("/api/v1/me/time-zone").await?;
    Zone::of(chosen["time_zone"].as_str())
}

pub(super) async fn fit(api: &Api, args: FitArgs) -> anyhow::Result<i32> {
    let FitArgs { model, params_b, layers, kv_heads, head_dim, precision, workload, context, sequences, json } = args;
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.append_pair("precision", &precision).append_pair("workload", &workload);
    query.append_pair("context", &context.to_string()).append_pair("sequences", &sequences.to_string());
    if let Some(model) = &model {
        query.append_pair("model", model);
    }
    let numbers = [("layers", layers), ("kv_heads", kv_heads), ("head_dim", head_dim)];
    for (name, value) in numbers.into_iter().filter_map(|(n, v)| v.map(|v| (n, v.to_string()))) {
        query.append_pair(name, &value);
    }
    if let Some(params) = params_b {
        query.append_pair("params_b", &params.to_string());
    }
    let answer = api.get(&format!("/api/v1/fit?{}", query.finish())).await?;
    if json {
        print_json(&answer);
        return Ok(0);
    }
    println!("{}", answer["verdict"].as_str().unwrap_or_default());
    for line in answer["estimate"]["arithmetic"].as_array().into_iter().flatten() {
        println!("  {}", line.as_str().unwrap_or_default());
    }
    let rows: Vec<Vec<String>> = answer["kinds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            let units = k["units"].as_i64().map_or_else(|| "-".to_string(), |n| n.to_string());
            let kind = short_kind(k["kind"].as_str().unwrap_or_default());
            vec![
                k["pool"].as_str().unwrap_or_default().to_string(),
                kind,
                units,
                k["note"].as_str().unwrap_or_default().to_string(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        println!("{}", table(&["POOL", "KIND", "UNITS", "WHY"], &rows));
    }
    Ok(0)
}
