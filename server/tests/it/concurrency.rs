//! The capacity invariant under contention: 64 concurrent clients make 2 240
//! random book / cancel / extend attempts across two pools through the real
//! router and PostgreSQL; then an independent SQL sweep checks every instant,
//! and the outcomes are reconciled with the rows.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{call, fresh_db, slot, test_state, token_for};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use server::router;
use std::collections::HashMap;
use uuid::Uuid;

const CLIENTS: usize = 64;
const ATTEMPTS_PER_CLIENT: usize = 35;
const KINDS: [(&str, i32); 2] = [("nvidia.com/gpu", 2), ("nvidia.com/mig-1g.24gb", 5)];

#[derive(Default)]
struct Outcome {
    /// note → (booking id, expected final end, canceled)
    created: HashMap<String, (Uuid, String, bool)>,
    refused_notes: Vec<String>,
    capacity_refusals: usize,
    extends_ok: usize,
    cancels_ok: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_instant_is_ever_overbooked_and_every_answer_matches_the_rows() {
    let db = fresh_db().await;
    let admin = token_for(&db, "root@ops.test", app::model::Role::Admin, "ops").await;
    let app = router(test_state(db.clone()));
    let mut pools = Vec::new();
    for name in ["alpha", "beta"] {
        let kinds: Vec<_> = KINDS.iter().map(|(kind, capacity)| json!({"kind": kind, "capacity": capacity})).collect();
        let (status, pool) =
            call(&app, Method::POST, "/api/v1/pools", Some(&admin), Some(json!({"name": name, "kinds": kinds}))).await;
        assert_eq!(status, StatusCode::CREATED);
        pools.push(pool["id"].as_str().unwrap().to_string());
    }

    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let token = token_for(
            &db,
            &format!("user{client}@load.test"),
            app::model::Role::User,
            if client % 2 == 0 { "even" } else { "odd" },
        )
        .await;
        let (app, pools) = (app.clone(), pools.clone());
        clients.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(client as u64);
            let mut outcome = Outcome::default();
            let mut mine: Vec<(String, Uuid, i64)> = Vec::new(); // note, id, end slot
            for attempt in 0..ATTEMPTS_PER_CLIENT {
                let roll = rng.random_range(0..10);
                if roll < 2 && !mine.is_empty() {
                    let (note, id, _) = mine.swap_remove(rng.random_range(0..mine.len()));
                    let (status, body) = call(&app, Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&token), None).await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                    outcome.created.get_mut(&note).unwrap().2 = true;
                    outcome.cancels_ok += 1;
                } else if roll < 4 && !mine.is_empty() {
                    let pick = rng.random_range(0..mine.len());
                    let new_end = mine[pick].2 + rng.random_range(1..5);
                    let (status, body) = call(&app, Method::POST, &format!("/api/v1/bookings/{}/extend", mine[pick].1), Some(&token), Some(json!({"end": slot(new_end)}))).await;
                    match status {
                        StatusCode::OK => {
                            mine[pick].2 = new_end;
                            outcome.created.get_mut(&mine[pick].0).unwrap().1 = slot(new_end).to_rfc3339();
                            outcome.extends_ok += 1;
                        }
                        StatusCode::CONFLICT => assert_eq!(body["error"], "capacity_exceeded"),
                        other => panic!("extend answered {other}: {body}"),
                    }
                } else {
                    let (kind, _) = KINDS[rng.random_range(0..KINDS.len())];
                    let start = rng.random_range(0..48);
                    let end = start + rng.random_range(1..9);
                    let note = format!("client {client} attempt {attempt}");
                    let body = json!({
                        "pool_id": pools[rng.random_range(0..pools.len())], "kind": kind, "quantity": rng.random_range(1..3),
                        "start": slot(start), "end": slot(end), "mode": "interactive", "note": note,
                    });
                    let (status, answer) = call(&app, Method::POST, "/api/v1/bookings", Some(&token), Some(body)).await;
                    match status {
                        StatusCode::CREATED => {
                            let id: Uuid = answer["id"].as_str().unwrap().parse().unwrap();
                            outcome.created.insert(note.clone(), (id, slot(end).to_rfc3339(), false));
                            mine.push((note, id, end));
                        }
                        StatusCode::CONFLICT => {
                            assert_eq!(answer["error"], "capacity_exceeded");
                            outcome.capacity_refusals += 1;
                            outcome.refused_notes.push(note);
                        }
                        other => panic!("booking answered {other}: {answer}"),
                    }
                }
            }
            outcome
        }));
    }
    let mut all = Outcome::default();
    for client in clients {
        let outcome = client.await.unwrap();
        all.created.extend(outcome.created);
        all.refused_notes.extend(outcome.refused_notes);
        all.capacity_refusals += outcome.capacity_refusals;
        all.extends_ok += outcome.extends_ok;
        all.cancels_ok += outcome.cancels_ok;
    }
    let attempts = CLIENTS * ATTEMPTS_PER_CLIENT;
    println!(
        "{attempts} attempts: {} created, {} refused for capacity, {} extended, {} canceled",
        all.created.len(),
        all.capacity_refusals,
        all.extends_ok,
        all.cancels_ok
    );
    assert!(all.created.len() > 100 && all.capacity_refusals > 100, "the run must contend for capacity");
    assert!(all.extends_ok > 10 && all.cancels_ok > 10);

    // Independent check, in SQL only (the same query the benchmark runs).
    let violations: Vec<(Uuid, String, chrono::DateTime<chrono::Utc>, i64, i32)> =
        sqlx::query_as(include_str!("../sql/capacity-sweep.sql")).fetch_all(&db).await.unwrap();
    assert!(violations.is_empty(), "overbooked instants: {violations:?}");

    // Every 201 exists with its final end and state; every refusal left no row.
    let rows: Vec<(Uuid, String, chrono::DateTime<chrono::Utc>, String)> =
        sqlx::query_as("SELECT id, note, ends_at, state FROM booking").fetch_all(&db).await.unwrap();
    assert_eq!(rows.len(), all.created.len(), "no lost and no phantom bookings");
    for (id, note, end, state) in rows {
        let (expected_id, expected_end, canceled) = &all.created[&note];
        assert_eq!(&id, expected_id);
        assert_eq!(&end.to_rfc3339(), expected_end, "{note}");
        assert_eq!(state, if *canceled { "canceled" } else { "approved" }, "{note}");
    }
    let leaked: i64 = sqlx::query_scalar("SELECT count(*) FROM booking WHERE note = ANY($1)")
        .bind(&all.refused_notes)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(leaked, 0);
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM booking_event").fetch_one(&db).await.unwrap();
    assert_eq!(events as usize, all.created.len() + all.extends_ok + all.cancels_ok, "one audit event per change");
}
