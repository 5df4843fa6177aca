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

async fn client(shared: Arc<Shared>, index: usize) {
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(10)).build().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(index as u64 * 7919 + 1);
    let user = index % shared.tokens.len();
    let token = &shared.tokens[user];
    let slot = Duration::minutes(15);
    // My acknowledged, still-held bookings (id, window), to cancel, extend or touch.
    let mut mine: Vec<(Uuid, Window)> = Vec::new();
    loop {
        let n = shared.started.fetch_add(1, Ordering::SeqCst);
        if n >= shared.attempts {
            return;
        }
        if shared.restart_at == Some(n) {
            let command = env("RESTART_CMD");
            *shared.restarted.lock().unwrap() = Some((Instant::now(), None));
            let shared = shared.clone();
            tokio::spawn(async move {
                let status = tokio::process::Command::new("sh").arg("-c").arg(&command).status().await;
                let mut restarted = shared.restarted.lock().unwrap();
                if let Some((_, up)) = restarted.as_mut() {
                    *up = Some(Instant::now());
                }
                assert!(status.is_ok_and(|s| s.success()), "{command} failed");
            });
        }
        let roll: f64 = rng.random();
        let now = Utc::now();
        let running: Vec<Uuid> =
            mine.iter().filter(|(_, w)| w.start <= now && now < w.end).map(|(id, _)| *id).collect();
        let op = if roll < 0.12 && !mine.is_empty() {
            Op::Cancel(mine[rng.random_range(0..mine.len())].0)
        } else if roll < 0.20 && !mine.is_empty() {
            let (id, window) = &mine[rng.random_range(0..mine.len())];
            Op::Extend(*id, window.end + slot * rng.random_range(1..=4))
        } else if roll < 0.25 && !running.is_empty() {
            Op::End(running[rng.random_range(0..running.len())])
        } else {
            let current = now.duration_trunc(slot).unwrap();
            let any_pool = shared.pools[rng.random_range(0..shared.pools.len())];
            let kind = KINDS[rng.random_range(0..2)].to_string();
            let shape: f64 = rng.random();
            let (pool, kind, start, end) = match mine.get(rng.random_range(0..mine.len().max(1) * 5)) {
                _ if shape < 0.10 => (any_pool, kind, current, current + slot * rng.random_range(1..=4)),
                _ if shape < 0.15 => {
                    let pool = shared.dst_pools[rng.random_range(0..shared.dst_pools.len())];
                    let change = shared.dst_change;
                    (pool, kind, change - slot * rng.random_range(1..=8), change + slot * rng.random_range(1..=8))
                }
                // A fifth of the time (when there is one): right after one of mine, touching it.
                Some((_, w)) => (w.pool, w.kind.clone(), w.end, w.end + slot * rng.random_range(1..=32)),
                None => {
                    let start = current + slot + slot * rng.random_range(0..26 * 96);
                    (any_pool, kind, start, start + slot * rng.random_range(1..=32))
                }
            };
            let window = Window { user, pool, kind, quantity: rng.random_range(1..=2), start, end };
            Op::Book(window, rng.random_bool(0.3))
        };
        let (request, window) = match &op {
            Op::Book(w, waitlist) => (
                http.post(format!("{}/api/v1/bookings", shared.url)).json(&json!({
                    "pool_id": w.pool, "kind": w.kind, "quantity": w.quantity,
                    "start": w.start, "end": w.end, "mode": "interactive", "waitlist": waitlist,
                })),
                Some(w.clone()),
            ),
            Op::End(id) => (http.post(format!("{}/api/v1/bookings/{id}/end", shared.url)), None),
            Op::Cancel(id) => (
                http.post(format!("{}/api/v1/bookings/{id}/cancel", shared.url)).json(&json!({"reason": "load"})),
                None,
            ),
            Op::Extend(id, end) => {
                (http.post(format!("{}/api/v1/bookings/{id}/extend", shared.url)).json(&json!({"end": end})), None)
            }
        };
        let sent = Instant::now();
        let answer = request.bearer_auth(token).send().await;
        let (status, body) = match answer {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.json::<Value>().await.unwrap_or(Value::Null))
            }
            Err(_) => (0, Value::Null),
        };
        let took = sent.elapsed();
        let mut history = shared.history.lock().unwrap();
        history.latencies_ms.push(took.as_secs_f64() * 1000.0);
        *history.statuses.entry(status).or_default() += 1;
        let outage = *shared.restarted.lock().unwrap();
        if let Some((began, up)) = outage {
            let answered_at = sent + took;
            let ok = matches!(status, 200 | 201 | 202 | 409 | 422);
            let during = answered_at >= began && history.first_success_after_restart.is_none();
            if during && ok && up.is_some() {
                history.first_success_after_restart = Some(answered_at);
            } else if during && !ok {
                if status == 503 && took <= std::time::Duration::from_secs(2) {
                    history.outage_503 += 1;
                } else {
                    history.outage_bad += 1;
                }
            }
        }
        match (op, status) {
            (Op::Book(w, _), 201) => {
                let id: Uuid = body["id"].as_str().and_then(|s| s.parse().ok()).expect("a created booking's id");
                history.acknowledged.insert(id, Acknowledged { window: w.clone(), state: "approved" });
                mine.push((id, w));
            }
            (Op::Book(w, true), 202) => {
                let id: Uuid = body["id"].as_str().and_then(|s| s.parse().ok()).expect("a waitlist entry's id");
                history.waitlisted.insert(id, w);
            }
            (Op::Book(w, _), 409 | 422) => history.refused.push(w),
            (Op::Book(w, _), _) => {
                history.uncertain.insert(w);
            }
            (Op::End(id), 200) => {
                let end = body["end"].as_str().and_then(|s| s.parse().ok()).expect("the ended booking's end");
                if let Some(a) = history.acknowledged.get_mut(&id) {
                    a.window.end = end;
                    a.state = "completed";
                }
                mine.retain(|(m, _)| *m != id);
            }
            (Op::Cancel(id), 200) => {
                if let Some(a) = history.acknowledged.get_mut(&id) {
                    a.state = "canceled";
                }
                mine.retain(|(m, _)| *m != id);
            }
            (Op::Extend(id, end), 200) => {
                if let Some(a) = history.acknowledged.get_mut(&id) {
                    a.window.end = end;
                }
                if let Some((_, w)) = mine.iter_mut().find(|(m, _)| *m == id) {
                    w.end = end;
                }
            }
            // An unanswered cancel or extend leaves that booking's outcome open: stop touching it,
            // and the check accepts either state for it.
            (Op::Cancel(id) | Op::Extend(id, _) | Op::End(id), s) if !matches!(s, 409 | 422 | 404) => {
                history.acknowledged.remove(&id);
                history.unsettled.insert(id);
                mine.retain(|(m, _)| *m != id);
                if let Some(w) = window {
                    history.uncertain.insert(w);
                }
            }
            _ => {}
        }
    }
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
    let tasks: Vec<_> = (0..clients).map(|i| tokio::spawn(client(shared.clone(), i))).collect();
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
