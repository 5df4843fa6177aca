//! One of the `CLIENTS` concurrent clients of `make reliability`: its share
//! of the mixed requests, each outcome kept as the client saw it.

use super::*;

pub(crate) async fn run(shared: Arc<Shared>, index: usize) {
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
