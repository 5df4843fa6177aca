//! The load rows of `make reliability` (`.ci/reliability.sh` starts the
//! real server and PostgreSQL and passes them in): `ATTEMPTS` mixed
//! requests from `CLIENTS` concurrent clients — book (a fifth touching one
//! of the client's own bookings, a tenth in the slot running now, a
//! twentieth across the next daylight-saving change in the pools this
//! switches to Europe/Berlin; three in ten joining the waitlist when full),
//! cancel, extend, end early — each outcome kept as the client saw it; then
//! an independent history check against the database: every acknowledged
//! booking and waitlist entry is there exactly as last acknowledged, every
//! other booking is a waitlist promotion (of the entry's window) or the
//! outcome of an unanswered request, and the capacity sweep finds nothing. With `RESTART_CMD`, PostgreSQL is restarted a third of the way
//! in and the outage is measured: every answer while it is down should be a
//! 503 within 2 s. Prints `KEY value` lines the script turns into a table.

use chrono::{DateTime, Duration, DurationRound, Utc};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

#[path = "reliability/client.rs"]
mod client;

const KINDS: [&str; 2] = ["nvidia.com/gpu", "nvidia.com/mig-1g.24gb"];

/// A booking request's identity, to find a refused one in the database.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Window {
    user: usize,
    pool: Uuid,
    kind: String,
    quantity: i32,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

/// What a client was told about one booking, last answer wins.
#[derive(Clone, Debug)]
struct Acknowledged {
    window: Window,
    state: &'static str,
}

#[derive(Default)]
struct History {
    acknowledged: HashMap<Uuid, Acknowledged>,
    /// Waitlist entries (`202`), by entry id.
    waitlisted: HashMap<Uuid, Window>,
    refused: Vec<Window>,
    /// Creations whose answer never came (connection errors, 503): either outcome is right.
    uncertain: HashSet<Window>,
    /// Bookings a cancel, extend or end of which went unanswered: any state is right.
    unsettled: HashSet<Uuid>,
    latencies_ms: Vec<f64>,
    statuses: HashMap<u16, usize>,
    /// During the outage: answers that were not a 503 within 2 s.
    outage_bad: usize,
    outage_503: usize,
    first_success_after_restart: Option<Instant>,
}

struct Shared {
    url: String,
    tokens: Vec<String>,
    pools: Vec<Uuid>,
    /// Pools in Europe/Berlin, and the next change of its clocks.
    dst_pools: Vec<Uuid>,
    dst_change: DateTime<Utc>,
    attempts: usize,
    started: AtomicUsize,
    restart_at: Option<usize>,
    restarted: Mutex<Option<(Instant, Option<Instant>)>>,
    history: Mutex<History>,
}

fn lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set (run make reliability)"))
}

enum Op {
    Book(Window, bool),
    Cancel(Uuid),
    Extend(Uuid, DateTime<Utc>),
    End(Uuid),
}

/// The next moment after `from` at which Europe/Berlin's UTC offset changes.
fn next_dst_change(from: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::Offset;
    let offset = |at: DateTime<Utc>| at.with_timezone(&chrono_tz::Europe::Berlin).offset().fix();
    let mut at = from.duration_trunc(Duration::hours(1)).unwrap();
    while offset(at + Duration::hours(1)) == offset(at) {
        at += Duration::hours(1);
    }
    at + Duration::hours(1)
}

/// id, pool, kind, quantity, start, end, state, owner's email.
type StoredRow = (Uuid, Uuid, String, i32, DateTime<Utc>, DateTime<Utc>, String, String);
/// id, pool, kind, quantity, start, end, the booking it became, requester's email.
type WaitlistRow = (Uuid, Uuid, String, i32, DateTime<Utc>, DateTime<Utc>, Option<Uuid>, String);

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[tokio::main]
async fn main() {
    let clients: usize = env("CLIENTS").parse().unwrap();
    let attempts: usize = env("ATTEMPTS").parse().unwrap();
    let restart = std::env::var("RESTART_CMD").is_ok();
    let url = env("BERTH_URL");
    let pools: Vec<Uuid> = lines(&env("POOLS")).iter().map(|p| p.parse().unwrap()).collect();
    // Two pools keep Berlin's time, and take bookings far enough ahead to
    // reach its next clock change.
    let dst_pools = pools[..2].to_vec();
    for pool in &dst_pools {
        let patched = reqwest::Client::new()
            .patch(format!("{url}/api/v1/pools/{pool}"))
            .bearer_auth(env("ADMIN_TOKEN"))
            .json(&json!({ "time_zone": "Europe/Berlin", "horizon_days": 366 }))
            .send()
            .await
            .expect("PATCH the pool");
        assert!(patched.status().is_success(), "PATCH pool: {}", patched.status());
    }
    let shared = Arc::new(Shared {
        url,
        tokens: lines(&env("TOKENS")),
        dst_change: next_dst_change(Utc::now()),
        dst_pools,
        pools,
        attempts,
        started: AtomicUsize::new(0),
        restart_at: restart.then_some(attempts / 3),
        restarted: Mutex::new(None),
        history: Mutex::new(History::default()),
    });
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients).map(|i| tokio::spawn(client::run(shared.clone(), i))).collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let history = std::mem::take(&mut *shared.history.lock().unwrap());

    // The history check, against the database itself.
    let db = sqlx::PgPool::connect(&env("DATABASE_URL")).await.unwrap();
    let rows: Vec<StoredRow> = sqlx::query_as(
        "SELECT b.id, b.pool_id, b.kind, b.quantity, b.starts_at, b.ends_at, b.state, u.email
         FROM booking b JOIN app_user u ON u.id = b.user_id WHERE b.extends_id IS NULL",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let users: HashMap<String, usize> =
        lines(&env("EMAILS")).into_iter().enumerate().map(|(i, email)| (email, i)).collect();
    let stored: HashMap<Uuid, (Window, String)> = rows
        .into_iter()
        .filter_map(|(id, pool, kind, quantity, start, end, state, email)| {
            let user = *users.get(&email)?;
            Some((id, (Window { user, pool, kind, quantity, start, end }, state)))
        })
        .collect();
    let missing = history
        .acknowledged
        .iter()
        .filter(|(id, a)| match stored.get(id) {
            // Approved may since have become active or completed by the worker.
            Some((w, state)) => {
                *w != a.window
                    || (a.state == "canceled") != (state == "canceled")
                    || (a.state == "completed" && state != "completed")
                    || !matches!(state.as_str(), "approved" | "active" | "completed" | "canceled")
            }
            None => true,
        })
        .count();
    // Waitlist entries as acknowledged, and the bookings promoted from them
    // (the client never hears of those): each with its entry's window.
    let entries: Vec<WaitlistRow> = sqlx::query_as(
        "SELECT w.id, w.pool_id, w.kind, w.quantity, w.starts_at, w.ends_at, w.booking_id, u.email
         FROM waitlist_entry w JOIN app_user u ON u.id = w.user_id",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let entries: HashMap<Uuid, (Window, Option<Uuid>)> = entries
        .into_iter()
        .filter_map(|(id, pool, kind, quantity, start, end, booking, email)| {
            Some((id, (Window { user: *users.get(&email)?, pool, kind, quantity, start, end }, booking)))
        })
        .collect();
    let waitlist_missing =
        history.waitlisted.iter().filter(|(id, w)| entries.get(id).is_none_or(|(stored, _)| stored != *w)).count();
    let promoted: HashMap<Uuid, &Window> =
        entries.values().filter_map(|(w, booking)| booking.map(|b| (b, w))).collect();
    let promoted_wrong =
        promoted.iter().filter(|(id, w)| stored.get(id).is_none_or(|(stored, _)| stored != **w)).count();
    let acknowledged_ids: HashSet<&Uuid> = history.acknowledged.keys().collect();
    let unacknowledged: Vec<&Window> = stored
        .iter()
        .filter(|(id, _)| {
            !acknowledged_ids.contains(id) && !promoted.contains_key(id) && !history.unsettled.contains(*id)
        })
        .map(|(_, (w, _))| w)
        .collect();
    let refused: HashSet<&Window> = history.refused.iter().collect();
    let present_refused =
        unacknowledged.iter().filter(|w| refused.contains(*w) && !history.uncertain.contains(**w)).count();
    let unexplained = unacknowledged.iter().filter(|w| !history.uncertain.contains(**w)).count();
    let sweep = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql/capacity-sweep.sql")).unwrap();
    let violations: i64 =
        sqlx::query_scalar(&format!("SELECT count(*) FROM ({sweep}) v")).fetch_one(&db).await.unwrap();

    let mut latencies = history.latencies_ms.clone();
    latencies.sort_by(f64::total_cmp);
    let mut statuses: Vec<_> = history.statuses.iter().collect();
    statuses.sort();
    println!("CLIENTS {clients}");
    println!("ATTEMPTS {}", history.latencies_ms.len());
    println!("ATTEMPTS_PER_S {:.0}", history.latencies_ms.len() as f64 / elapsed);
    println!("P50_MS {:.1}", percentile(&latencies, 0.5));
    println!("P99_MS {:.1}", percentile(&latencies, 0.99));
    println!("STATUSES {}", statuses.iter().map(|(s, n)| format!("{s}:{n}")).collect::<Vec<_>>().join(" "));
    println!("ACKNOWLEDGED {}", history.acknowledged.len());
    println!("REFUSED {}", history.refused.len());
    println!("UNCERTAIN {}", history.uncertain.len());
    println!("CAPACITY_VIOLATIONS {violations}");
    println!("ACKNOWLEDGED_MISSING {missing}");
    println!("REFUSED_PRESENT {present_refused}");
    println!("UNEXPLAINED_PRESENT {unexplained}");
    println!("WAITLISTED {}", history.waitlisted.len());
    println!("WAITLIST_MISSING {waitlist_missing}");
    println!("PROMOTED {}", promoted.len());
    println!("PROMOTED_WRONG {promoted_wrong}");
    println!("ENDED_EARLY {}", history.acknowledged.values().filter(|a| a.state == "completed").count());
    println!("DST_CHANGE {}", shared.dst_change.to_rfc3339());
    if restart {
        let (began, up) = shared.restarted.lock().unwrap().unwrap_or((started, None));
        let recovered = history.first_success_after_restart.zip(up).map(|(at, up)| at.saturating_duration_since(up));
        println!("OUTAGE_503_WITHIN_2S {}", history.outage_503);
        println!("OUTAGE_OTHER {}", history.outage_bad);
        println!("DATABASE_DOWN_S {:.1}", up.map_or(f64::NAN, |up| (up - began).as_secs_f64()));
        println!("RECOVERED_AFTER_UP_S {:.1}", recovered.map_or(f64::NAN, |d| d.as_secs_f64()));
    }
}
