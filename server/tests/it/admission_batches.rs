//! One admission batch decides requests for several pools and kinds at once
//! (the queue gathers whatever arrives while the previous batch is in its
//! transaction). Each request must get the answer it would get alone: a
//! kind's capacity counts only that kind's requests, and a pool that is
//! gone, retired or lacks the kind refuses only the requests that ask it.

use crate::common;

use app::backend::accounts::tokens;
use app::backend::admission::admit::{Admission, Outcome};
use app::backend::admission::queue::admit_batch;
use app::backend::admission::request::Request;
use app::backend::admission::AdmissionQueue;
use app::backend::error::ServiceError;
use app::model::{Mode, Principal, Window};
use axum::http::{Method, StatusCode};
use common::{call, fresh_db, slot, test_state, token_for, GPU, MIG};
use serde_json::json;
use server::router;
use uuid::Uuid;

struct Setup {
    db: sqlx::PgPool,
    app: axum::Router,
    /// An admin's API token.
    admin: String,
    /// A user of tenant `lab`.
    principal: Principal,
    pools: Vec<Uuid>,
}

/// A fresh database with the named pools, each with one whole GPU and two
/// MIG slices, open to every tenant.
async fn setup(names: &[&str]) -> Setup {
    let db = fresh_db().await;
    let admin = token_for(&db, "root@ops.test", app::model::Role::Admin, "ops").await;
    let user = token_for(&db, "ada@lab.test", app::model::Role::User, "lab").await;
    let principal = tokens::authenticate(&db, &user).await.unwrap().unwrap();
    let app = router(test_state(db.clone()));
    let mut pools = Vec::new();
    for name in names {
        let kinds = json!([{"kind": GPU, "capacity": 1}, {"kind": MIG, "capacity": 2}]);
        let (status, pool) =
            call(&app, Method::POST, "/api/v1/pools", Some(&admin), Some(json!({"name": name, "kinds": kinds}))).await;
        assert_eq!(status, StatusCode::CREATED, "{pool}");
        pools.push(pool["id"].as_str().unwrap().parse::<Uuid>().unwrap());
    }
    Setup { db, app, admin, principal, pools }
}

fn request(principal: &Principal, pool_id: Uuid, kind: &str, quantity: i32, from: i64, to: i64) -> Request {
    Request {
        principal: principal.clone(),
        tenant: principal.tenants[0].clone(),
        pool_id,
        kind: kind.to_string(),
        quantity,
        mode: Mode::Interactive,
        image: None,
        note: String::new(),
        window: Window { start: slot(from), end: slot(to) },
        join_waitlist: false,
        entry: None,
        provenance: Default::default(),
    }
}

/// `Ok(booking id)`, or the refusal's error code.
fn verdict(outcome: &Outcome) -> Result<Uuid, String> {
    match outcome {
        Outcome::Decided(Ok(Admission::Booked(booking))) => Ok(booking.id),
        Outcome::Decided(Ok(Admission::Waitlisted(_))) => Err("waitlisted".into()),
        Outcome::Waits(_) => Err("asked to wait, not joined".into()),
        Outcome::Crowded(_) => Err("capacity_exceeded".into()),
        Outcome::Decided(Err(ServiceError::Invalid(field))) => Err(format!("invalid {}", field.field)),
        Outcome::Decided(Err(err)) => Err(err.public_message()),
    }
}

#[tokio::test]
async fn a_batch_across_pools_and_kinds_decides_each_request_as_if_alone() {
    let Setup { db, app, admin, principal, pools } = setup(&["alpha", "beta", "gamma"]).await;
    let (alpha, beta, gamma) = (pools[0], pools[1], pools[2]);
    let (status, body) =
        call(&app, Method::PATCH, &format!("/api/v1/pools/{gamma}"), Some(&admin), Some(json!({"retired": true})))
            .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let batch = [
        request(&principal, alpha, GPU, 1, 4, 8),          // fits: alpha's one GPU
        request(&principal, beta, GPU, 1, 4, 8),           // fits: beta's GPU is its own
        request(&principal, alpha, GPU, 1, 6, 10),         // overlaps the first in the same kind
        request(&principal, alpha, MIG, 2, 4, 8),          // alpha's slices are another kind
        request(&principal, Uuid::new_v4(), GPU, 1, 4, 8), // no such pool
        request(&principal, gamma, GPU, 1, 4, 8),          // retired
        request(&principal, beta, "nvidia.com/mig-7g.80gb", 1, 4, 8), // beta has no such kind
        request(&principal, alpha, MIG, 1, 6, 10),         // alpha's slices are full by now
        request(&principal, beta, MIG, 2, 6, 10),          // beta's slices are free
    ];
    let refs: Vec<&Request> = batch.iter().collect();
    let outcomes = admit_batch(&db, &refs).await.unwrap();
    let verdicts: Vec<Result<Uuid, String>> = outcomes.iter().map(verdict).collect();

    let booked: Vec<bool> = verdicts.iter().map(Result::is_ok).collect();
    assert_eq!(booked, [true, true, false, true, false, false, false, false, true], "{verdicts:?}");
    assert_eq!(verdicts[2], Err("capacity_exceeded".into()));
    assert_eq!(verdicts[4], Err("invalid pool_id".into()));
    assert_eq!(verdicts[5], Err("invalid pool_id".into()));
    assert_eq!(verdicts[6], Err("invalid kind".into()));
    assert_eq!(verdicts[7], Err("capacity_exceeded".into()));

    // The rows are exactly the admitted ones, each in the pool and kind it asked for.
    let rows: Vec<(Uuid, Uuid, String, i32)> =
        sqlx::query_as("SELECT id, pool_id, kind, quantity FROM booking ORDER BY starts_at, pool_id, kind")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (verdict, asked) in verdicts.iter().zip(&batch) {
        if let Ok(id) = verdict {
            let row = rows.iter().find(|r| r.0 == *id).expect("an admitted booking has its row");
            assert_eq!((row.1, row.2.as_str(), row.3), (asked.pool_id, asked.kind.as_str(), asked.quantity));
        }
    }
    // Both capacity refusals are unmet demand in the reports, under their own pool and kind.
    let refusals: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT pool_id, kind FROM booking_refusal ORDER BY kind").fetch_all(&db).await.unwrap();
    assert_eq!(refusals, [(alpha, GPU.to_string()), (alpha, MIG.to_string())]);
}

/// Requests submitted together before the queue's task first runs (one
/// thread: it cannot run until they all wait) form one batch. A request the
/// database refuses to store (a NUL byte, which the API refuses earlier)
/// fails the batch; its kinds are then decided one at a time, so only that
/// request fails.
#[tokio::test(flavor = "current_thread")]
async fn one_kinds_failure_is_not_every_kinds() {
    let Setup { db, principal, pools, .. } = setup(&["alpha", "beta"]).await;
    let admissions = AdmissionQueue::new(db.clone());
    let good = request(&principal, pools[0], GPU, 1, 4, 8);
    let bad = Request { note: "bad\0note".into(), ..request(&principal, pools[1], GPU, 1, 4, 8) };
    let also_good = request(&principal, pools[0], GPU, 1, 8, 12);
    let (good, bad, also_good) =
        tokio::join!(admissions.submit(good), admissions.submit(bad), admissions.submit(also_good));

    assert!(matches!(good, Ok(Admission::Booked(_))), "{good:?}");
    assert!(matches!(also_good, Ok(Admission::Booked(_))), "{also_good:?}");
    assert!(matches!(bad, Err(ServiceError::Internal(_))), "{bad:?}");
    let stored: Vec<Uuid> = sqlx::query_scalar("SELECT pool_id FROM booking").fetch_all(&db).await.unwrap();
    assert_eq!(stored, [pools[0], pools[0]]);
}
