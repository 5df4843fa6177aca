//! Tenant quotas and the waitlist under contention: 64 clients of 4 tenants
//! book, cancel, extend, join and leave the waitlist at random across two
//! pools (one in Europe/Berlin, one in UTC, windows reaching over the next
//! ISO week boundary) through the real router; independent SQL sweeps then
//! prove that no capacity, concurrency-quota or weekly-quota limit was ever
//! exceeded, that no waitlist entry was promoted twice or out of turn, that
//! every promotion is a booking event, and that the sweeps themselves would
//! have seen a violation.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{call, fresh_db, slot, test_state, token_for};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use server::router;
use uuid::Uuid;

const CLIENTS: usize = 64;
const TENANTS: [&str; 4] = ["north", "south", "east", "west"];
const ATTEMPTS_PER_CLIENT: usize = 30;
const KINDS: [(&str, i32); 2] = [("nvidia.com/gpu", 8), ("nvidia.com/mig-1g.24gb", 12)];
const MAX_UNITS: i32 = 3;
const HOURS_PER_WEEK: f64 = 12.0;

type Violation = (String, Uuid, Uuid, String, chrono::DateTime<chrono::Utc>, f64, f64);

#[derive(Default)]
struct Tally {
    created: usize,
    capacity_refusals: usize,
    quota_refusals: usize,
    extended: usize,
    canceled: usize,
    waitlisted: usize,
    left: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_quota_or_capacity_is_ever_exceeded_under_contention() {
    let db = fresh_db().await;
    let admin = token_for(&db, "root@ops.test", app::model::Role::Admin, "ops").await;
    let app = router(test_state(db.clone()));
    let mut pools = Vec::new();
    for (name, zone) in [("alpha", "Europe/Berlin"), ("beta", "UTC")] {
        let kinds: Vec<_> = KINDS.iter().map(|(kind, capacity)| json!({"kind": kind, "capacity": capacity})).collect();
        let body = json!({"name": name, "kinds": kinds, "time_zone": zone});
        let (status, pool) = call(&app, Method::POST, "/api/v1/pools", Some(&admin), Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{pool}");
        pools.push(pool["id"].as_str().unwrap().to_string());
    }
    let mut tokens = Vec::new();
    for client in 0..CLIENTS {
        let tenant = TENANTS[client % TENANTS.len()];
        tokens.push(token_for(&db, &format!("user{client}@{tenant}.test"), app::model::Role::User, tenant).await);
    }
    let quotas: Vec<_> = pools
        .iter()
        .flat_map(|pool| {
            KINDS.iter().map(move |(kind, _)| {
                json!({"pool_id": pool, "kind": kind, "max_units": MAX_UNITS, "gpu_hours_per_week": HOURS_PER_WEEK})
            })
        })
        .collect();
    for tenant in TENANTS {
        let path = format!("/api/v1/tenants/{tenant}/quotas");
        let (status, body) = call(&app, Method::PUT, &path, Some(&admin), Some(json!(quotas))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    let mut clients = Vec::new();
    for (client, token) in tokens.into_iter().enumerate() {
        let (app, pools) = (app.clone(), pools.clone());
        clients.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(1000 + client as u64);
            let mut tally = Tally::default();
            let mut mine: Vec<(Uuid, i64)> = Vec::new();
            let mut waiting: Vec<Uuid> = Vec::new();
            for _ in 0..ATTEMPTS_PER_CLIENT {
                let roll = rng.random_range(0..10);
                let refused = |tally: &mut Tally, body: &serde_json::Value| match body["error"].as_str() {
                    Some("capacity_exceeded") => tally.capacity_refusals += 1,
                    Some("quota_exceeded") => tally.quota_refusals += 1,
                    _ => panic!("unexpected refusal {body}"),
                };
                if roll == 9 && !waiting.is_empty() {
                    let id = waiting.swap_remove(rng.random_range(0..waiting.len()));
                    let (status, body) =
                        call(&app, Method::DELETE, &format!("/api/v1/waitlist/{id}"), Some(&token), None).await;
                    match status {
                        StatusCode::OK => tally.left += 1,
                        // Admitted in the meantime.
                        StatusCode::CONFLICT => assert_eq!(body["error"], "not_waiting", "{body}"),
                        other => panic!("leaving answered {other}: {body}"),
                    }
                } else if roll < 2 && !mine.is_empty() {
                    let (id, _) = mine.swap_remove(rng.random_range(0..mine.len()));
                    let path = format!("/api/v1/bookings/{id}/cancel");
                    let (status, body) = call(&app, Method::POST, &path, Some(&token), None).await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                    tally.canceled += 1;
                } else if roll < 4 && !mine.is_empty() {
                    let pick = rng.random_range(0..mine.len());
                    let new_end = mine[pick].1 + rng.random_range(1..5);
                    let path = format!("/api/v1/bookings/{}/extend", mine[pick].0);
                    let (status, body) =
                        call(&app, Method::POST, &path, Some(&token), Some(json!({"end": slot(new_end)}))).await;
                    match status {
                        StatusCode::OK => {
                            mine[pick].1 = new_end;
                            tally.extended += 1;
                        }
                        StatusCode::CONFLICT => refused(&mut tally, &body),
                        other => panic!("extend answered {other}: {body}"),
                    }
                } else {
                    let (kind, _) = KINDS[rng.random_range(0..KINDS.len())];
                    // A third offer to wait, for one of a few windows, so identical
                    // entries (whose order FIFO fixes) are common.
                    let wait = rng.random_range(0..3) == 0;
                    // Up to 50 hours ahead: across the next Monday in at least one zone on most days.
                    let (start, end) = if wait {
                        let start = [40, 80, 120][rng.random_range(0..3)];
                        (start, start + [4, 8][rng.random_range(0..2)])
                    } else {
                        let start = rng.random_range(0..200);
                        (start, start + rng.random_range(1..12))
                    };
                    let body = json!({
                        "pool_id": pools[rng.random_range(0..pools.len())], "kind": kind,
                        "quantity": rng.random_range(1..3), "start": slot(start), "end": slot(end), "mode": "interactive",
                        "waitlist": wait,
                    });
                    let (status, answer) = call(&app, Method::POST, "/api/v1/bookings", Some(&token), Some(body)).await;
                    match status {
                        StatusCode::CREATED => {
                            mine.push((answer["id"].as_str().unwrap().parse().unwrap(), end));
                            tally.created += 1;
                        }
                        StatusCode::ACCEPTED => {
                            waiting.push(answer["id"].as_str().unwrap().parse().unwrap());
                            tally.waitlisted += 1;
                        }
                        StatusCode::CONFLICT => refused(&mut tally, &answer),
                        other => panic!("booking answered {other}: {answer}"),
                    }
                }
            }
            tally
        }));
    }
    let mut all = Tally::default();
    for client in clients {
        let t = client.await.unwrap();
        all.created += t.created;
        all.capacity_refusals += t.capacity_refusals;
        all.quota_refusals += t.quota_refusals;
        all.extended += t.extended;
        all.canceled += t.canceled;
        all.waitlisted += t.waitlisted;
        all.left += t.left;
    }
    let promoted: i64 = sqlx::query_scalar("SELECT count(*) FROM waitlist_entry WHERE state = 'admitted'")
        .fetch_one(&db)
        .await
        .unwrap();
    println!(
        "{} attempts: {} created, {} refused for capacity, {} refused for quota, {} extended, {} canceled, \
         {} waitlisted, {} promoted from the waitlist, {} left it",
        CLIENTS * ATTEMPTS_PER_CLIENT,
        all.created,
        all.capacity_refusals,
        all.quota_refusals,
        all.extended,
        all.canceled,
        all.waitlisted,
        promoted,
        all.left
    );
    assert!(all.created > 100 && all.quota_refusals > 100, "the run must contend for the quotas");
    assert!(all.extended > 10 && all.canceled > 10);
    assert!(all.waitlisted > 50 && promoted > 10, "the run must wait and promote");

    let capacity: Vec<(Uuid, String, chrono::DateTime<chrono::Utc>, i64, i32)> =
        sqlx::query_as(include_str!("../sql/capacity-sweep.sql")).fetch_all(&db).await.unwrap();
    assert!(capacity.is_empty(), "overbooked instants: {capacity:?}");
    let quota: Vec<Violation> = sqlx::query_as(include_str!("../sql/quota-sweep.sql")).fetch_all(&db).await.unwrap();
    assert!(quota.is_empty(), "quota violations: {quota:?}");
    let booked: i64 = sqlx::query_scalar("SELECT count(*) FROM booking").fetch_one(&db).await.unwrap();
    assert_eq!(booked, all.created as i64 + promoted, "no lost and no phantom bookings");
    let out_of_turn: Vec<(String, Uuid)> =
        sqlx::query_as(include_str!("../sql/waitlist-sweep.sql")).fetch_all(&db).await.unwrap();
    assert!(out_of_turn.is_empty(), "waitlist violations: {out_of_turn:?}");
    // Every freed unit was offered at once: nothing still waiting fits now.
    assert_eq!(app::backend::waitlist::sweep(&db).await.unwrap(), (0, 0));

    // The waitlist sweep sees an entry promoted twice and one admitted out of turn.
    let (twice, event): (Uuid, Uuid) = sqlx::query_as(
        "SELECT e.id, b.id FROM waitlist_entry e JOIN booking b ON b.id = e.booking_id WHERE e.state = 'admitted' LIMIT 1",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    sqlx::query("INSERT INTO booking_event (booking_id, to_state, reason) VALUES ($1, 'approved', $2)")
        .bind(event)
        .bind(format!("admitted from the waitlist (entry {twice})"))
        .execute(&db)
        .await
        .unwrap();
    // An identical entry that joined earlier and still waits.
    sqlx::query(
        "INSERT INTO waitlist_entry (id, seq, pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at)
         OVERRIDING SYSTEM VALUE
         SELECT gen_random_uuid(), 0, pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at
         FROM waitlist_entry WHERE id = $1",
    )
    .bind(twice)
    .execute(&db)
    .await
    .unwrap();
    let caught: Vec<(String, Uuid)> =
        sqlx::query_as(include_str!("../sql/waitlist-sweep.sql")).fetch_all(&db).await.unwrap();
    let kinds: std::collections::BTreeSet<&str> = caught.iter().map(|v| v.0.as_str()).collect();
    assert!(kinds.contains("promoted_twice") && kinds.contains("out_of_turn"), "{caught:?}");

    // The sweep sees a violation when there is one: a row written around admission.
    sqlx::query(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
         SELECT q.pool_id, q.kind, m.user_id, q.tenant_id, 4, 'interactive', $1, $2, 'approved'
         FROM tenant_quota q JOIN membership m ON m.tenant_id = q.tenant_id LIMIT 1",
    )
    .bind(slot(300))
    .bind(slot(300 + 4 * 4))
    .execute(&db)
    .await
    .unwrap();
    let caught: Vec<Violation> = sqlx::query_as(include_str!("../sql/quota-sweep.sql")).fetch_all(&db).await.unwrap();
    let kinds: std::collections::BTreeSet<&str> = caught.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["gpu_hours_per_week", "max_units"], "{caught:?}");
}
