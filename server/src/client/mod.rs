//! `berth` user commands: the REST API from a shell (never the database).
//! Human tables by default, `--json` for scripts (the API's own JSON); a
//! refusal prints its reason (and the next free window) and exits 1.

mod config;
mod http;
mod when;

use anyhow::Context;
use app::model::short_kind;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use http::Api;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;
use when::Zone;

#[derive(Subcommand)]
pub enum Command {
    /// Save the portal's URL and an API token (asked on stdin; make one on the
    /// portal's Tokens page) in ~/.config/berth/config.toml, mode 0600.
    Login {
        #[arg(long)]
        url: url::Url,
    },
    /// The pools you may book, with their kinds and units.
    Pools {
        #[arg(long)]
        json: bool,
    },
    /// Free units of a pool's kind over the next days, one line per change.
    Free {
        /// Pool name or id.
        pool: String,
        /// Kind, e.g. gpu or mig-1g.24gb (needed when the pool has several).
        #[arg(long)]
        kind: Option<String>,
        /// From when ("2026-12-01 09:00", a date, or now).
        #[arg(long, default_value = "now")]
        from: String,
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=62))]
        days: u16,
        /// IANA zone for the times typed and shown (default: this computer's).
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Book a window.
    Book {
        /// Pool name or id.
        pool: String,
        /// Kind, e.g. gpu or mig-1g.24gb.
        #[arg(long)]
        kind: String,
        #[arg(long, default_value_t = 1)]
        units: i32,
        /// Start ("2026-12-01 09:00" in your zone, a date, or now).
        #[arg(long)]
        from: String,
        /// Length, e.g. 3h, 90m or 1h30m.
        #[arg(long = "for", value_parser = when::duration)]
        length: chrono::Duration,
        /// interactive (a workspace) or inference (a serving endpoint).
        #[arg(long, default_value = "interactive")]
        mode: String,
        /// Wait for exactly this window when it is full.
        #[arg(long)]
        waitlist: bool,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Your upcoming and live bookings (--all: every one you may see, past too).
    Ls {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One booking.
    Show {
        id: Uuid,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Move a booking's end later.
    Extend {
        id: Uuid,
        #[arg(long)]
        to: String,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// End a live booking now (its GPUs return to the pool).
    End {
        id: Uuid,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a booking that has not started.
    Cancel {
        id: Uuid,
        #[arg(long)]
        json: bool,
    },
    /// Print the ready workspace's URL (--browser opens it).
    Open {
        id: Uuid,
        #[arg(long)]
        browser: bool,
    },
    /// Print your calendar feed's address (subscribe to it in a calendar app).
    Ics,
}

/// Runs a user command; a failure is one line on stderr and exit code 1.
pub async fn run(command: Command) -> anyhow::Result<()> {
    match dispatch(command).await {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("berth: {err:#}");
            std::process::exit(1)
        }
    }
}

/// `nvidia.com/…` names for the short ones people type.
fn full_kind(kind: &str) -> String {
    if kind.contains('/') {
        kind.to_string()
    } else {
        format!("nvidia.com/{}", kind.to_ascii_lowercase())
    }
}

fn at(value: &Value) -> anyhow::Result<DateTime<Utc>> {
    value.as_str().and_then(|s| s.parse().ok()).with_context(|| format!("the portal sent `{value}` as a time"))
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

/// Columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
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

async fn pool_names(api: &Api) -> anyhow::Result<std::collections::HashMap<String, String>> {
    let pools = api.get("/api/v1/pools").await?;
    Ok(pools
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["id"].as_str().unwrap_or_default().to_string(), p["name"].as_str().unwrap_or_default().to_string()))
        .collect())
}

fn booking_line(
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

const BOOKING_HEADER: [&str; 7] = ["ID", "POOL", "KIND", "UNITS", "START", "END", "STATE"];

async fn dispatch(command: Command) -> anyhow::Result<i32> {
    if let Command::Login { url } = &command {
        return login(url).await;
    }
    let (base, token) = config::load()?;
    let api = Api::new(base, token)?;
    match command {
        Command::Login { .. } => unreachable!("handled above"),
        Command::Pools { json } => {
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
        }
        Command::Free { pool: wanted, kind, from, days, tz, json } => {
            let zone = Zone::of(tz.as_deref())?;
            let pool = pool(&api, &wanted).await?;
            let kinds: Vec<&str> =
                pool["kinds"].as_array().into_iter().flatten().filter_map(|k| k["kind"].as_str()).collect();
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
        }
        Command::Book { pool: wanted, kind, units, from, length, mode, waitlist, tz, json } => {
            let zone = Zone::of(tz.as_deref())?;
            let pool = pool(&api, &wanted).await?;
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
                    if let (Ok(s), Ok(e)) =
                        (at(&answer.body["next_free"]["start"]), at(&answer.body["next_free"]["end"]))
                    {
                        eprintln!("next free window: {} – {}", zone.show(s), zone.show(e));
                    }
                    return Ok(1);
                }
            }
        }
        Command::Ls { all, tz, json } => {
            let zone = Zone::of(tz.as_deref())?;
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
            let names = pool_names(&api).await?;
            let rows = shown.iter().map(|b| booking_line(b, &names, zone)).collect::<anyhow::Result<Vec<_>>>()?;
            if rows.is_empty() {
                println!("no bookings{}", if all { "" } else { " ahead (--all shows past ones)" });
            } else {
                println!("{}", table(&BOOKING_HEADER, &rows));
            }
        }
        Command::Show { id, tz, json } => {
            let b = api.get(&format!("/api/v1/bookings/{id}")).await?;
            show_booking(&api, &b, Zone::of(tz.as_deref())?, json).await?;
        }
        Command::Extend { id, to, tz, json } => {
            let zone = Zone::of(tz.as_deref())?;
            let end = zone.parse("--to", &to)?;
            let answer =
                api.call(Method::POST, &format!("/api/v1/bookings/{id}/extend"), Some(json!({ "end": end }))).await?;
            if answer.status == StatusCode::ACCEPTED && !json {
                println!(
                    "extension requested: an admin of the pool decides (request {})",
                    answer.body["id"].as_str().unwrap_or_default()
                );
                return Ok(0);
            }
            let b = answer.ok()?;
            show_booking(&api, &b, zone, json).await?;
        }
        Command::End { id, json } => {
            let b = api.post(&format!("/api/v1/bookings/{id}/end"), json!({})).await?;
            show_booking(&api, &b, Zone::Local, json).await?;
        }
        Command::Cancel { id, json } => {
            let b = api.post(&format!("/api/v1/bookings/{id}/cancel"), json!({})).await?;
            show_booking(&api, &b, Zone::Local, json).await?;
        }
        Command::Open { id, browser } => {
            let answer = api.call(Method::GET, &format!("/bookings/{id}/open"), None).await?;
            let location = answer.body["location"].as_str().map(str::to_owned);
            let Some(location) = location.filter(|_| answer.status.is_redirection()) else {
                return Err(answer.ok().err().unwrap_or_else(|| anyhow::anyhow!("the workspace is not ready")));
            };
            println!("{location}");
            if browser {
                std::process::Command::new("xdg-open").arg(&location).status().context("cannot run xdg-open")?;
            }
        }
        Command::Ics => {
            let feed = api.get("/api/v1/me/calendar-feed").await?;
            match feed["url"].as_str() {
                Some(url) => println!("{url}"),
                None => anyhow::bail!("the address cannot be shown again; regenerate it on the portal's Settings page"),
            }
        }
    }
    Ok(0)
}

async fn show_booking(api: &Api, b: &Value, zone: Zone, json: bool) -> anyhow::Result<()> {
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

async fn login(url: &url::Url) -> anyhow::Result<i32> {
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
