//! Idle reclaim and no-shows, from the sampler's minutes: an idle session is
//! warned, then ended with its capacity back in the pool; a busy one is left
//! alone (and its warning withdrawn); a never-opened idle one is a no-show;
//! a gap in the measurements decides nothing; a pool with reclaim off is
//! never touched.

use crate::common;

use app::backend::sessions::idle_reclaim::{card_notes, pass, Reclaimed};
use axum::http::{Method, StatusCode};
use common::{slot, Fixture, GPU, MIG};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// A live booking of Ada's started 20 minutes ago, two hours to go.
async fn live(db: &PgPool, kind: &str, mode: &str, opened: bool) -> Uuid {
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
         SELECT p.id, $1, u.id, m.tenant_id, 1, $2, now() - interval '20 minutes', now() + interval '2 hours', 'active'
         FROM pool p, app_user u JOIN membership m ON m.user_id = u.id
         WHERE p.name = $3 AND u.email = 'ada@a.test' RETURNING id",
    )
    .bind(kind)
    .bind(mode)
    .bind(server::seed::DEMO_POOL)
    .fetch_one(db)
    .await
    .unwrap();
    if opened {
        sqlx::query("INSERT INTO workspace_open (booking_id) VALUES ($1)").bind(id).execute(db).await.unwrap();
    }
    id
}

/// The sampler's minutes for the last `minutes` whole minutes, all at `busy`.
async fn sampled(db: &PgPool, booking: Uuid, busy: f32, minutes: i32) {
    common::clear_of_the_minute_turn().await;
    sqlx::query(
        "INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, power_w, devices, simulated)
         SELECT $1, date_trunc('minute', now()) - make_interval(mins => k), $2, 1000, 50, 1, false
         FROM generate_series(1, $3) k",
    )
    .bind(booking)
    .bind(busy)
    .bind(minutes)
    .execute(db)
    .await
    .unwrap();
}

async fn state_of(db: &PgPool, id: Uuid) -> (String, Option<String>, bool, bool) {
    sqlx::query_as(
        "SELECT state, released_as, idle_since IS NOT NULL, planned_ends_at IS NOT NULL AND ends_at <= now() FROM booking WHERE id = $1",
    )
    .bind(id)
    .fetch_one(db)
    .await
    .unwrap()
}

#[tokio::test]
async fn idle_sessions_are_warned_then_ended_busy_ones_kept_and_no_shows_released() {
    let f = Fixture::new().await;
    let idle = live(&f.db, GPU, "interactive", true).await;
    let busy = live(&f.db, MIG, "interactive", true).await;
    let no_show = live(&f.db, MIG, "interactive", false).await;
    let gappy = live(&f.db, MIG, "interactive", true).await;
    let serving = live(&f.db, MIG, "inference", false).await;
    for (id, busy_fraction, minutes) in
        [(idle, 0.02, 20), (busy, 0.8, 20), (no_show, 0.01, 20), (gappy, 0.0, 3), (serving, 0.0, 20)]
    {
        sampled(&f.db, id, busy_fraction, minutes).await;
    }
    assert_eq!(pass(&f.db).await.unwrap(), Reclaimed::default(), "reclaim is off by default");

    let policy = json!({"enabled": true, "threshold_pct": 10, "idle_minutes": 5, "grace_minutes": 5});
    let path = format!("/api/v1/pools/{}/idle-policy", f.lab);
    let (status, body) = f.call(Method::PUT, &path, Some(&f.admin), Some(policy)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let bad = json!({"enabled": true, "threshold_pct": 0, "idle_minutes": 5, "grace_minutes": 5});
    let (status, body) = f.call(Method::PUT, &path, Some(&f.admin), Some(bad)).await;
    assert_eq!((status, body["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("threshold_pct")));

    // The GPU is taken: Bob cannot book it now.
    assert_eq!(f.book(&f.bob, GPU, 1, slot(0), slot(4)).await.0, StatusCode::CONFLICT);

    let first = pass(&f.db).await.unwrap();
    assert_eq!(first, Reclaimed { warned: 2, cleared: 0, ended: 0, no_shows: 1 }, "idle + inference warned");
    assert_eq!(state_of(&f.db, idle).await, ("active".into(), None, true, false));
    assert_eq!(state_of(&f.db, busy).await, ("active".into(), None, false, false));
    assert_eq!(state_of(&f.db, gappy).await, ("active".into(), None, false, false), "a gap is not idleness");
    assert!(state_of(&f.db, serving).await.2, "inference is never a no-show, but can idle");
    assert_eq!(state_of(&f.db, no_show).await, ("completed".into(), Some("no_show".into()), false, true));

    let notes = card_notes(&f.db, &[idle, busy, no_show], &chrono_tz::UTC).await.unwrap();
    assert!(notes[&idle].starts_with("Idle: the GPUs have been below 10 %"), "{notes:?}");
    assert!(notes[&no_show].contains("no-show"), "{notes:?}");
    assert!(!notes.contains_key(&busy));

    // Nothing more happens until the grace time has passed.
    assert_eq!(pass(&f.db).await.unwrap(), Reclaimed::default());
    sqlx::query("UPDATE booking SET idle_since = now() - interval '11 minutes' WHERE id = $1")
        .bind(idle)
        .execute(&f.db)
        .await
        .unwrap();
    // The inference session became busy again: its warning is withdrawn.
    sqlx::query("UPDATE usage_minute SET busy = 0.9 WHERE booking_id = $1").bind(serving).execute(&f.db).await.unwrap();
    let second = pass(&f.db).await.unwrap();
    assert_eq!(second, Reclaimed { warned: 0, cleared: 1, ended: 1, no_shows: 0 });
    assert_eq!(state_of(&f.db, idle).await, ("completed".into(), Some("idle".into()), false, true));
    let reason: String = sqlx::query_scalar(
        "SELECT reason FROM booking_event WHERE booking_id = $1 AND to_state = 'completed' AND actor_id IS NULL",
    )
    .bind(idle)
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!(reason.contains("below 10 % for 10 min"), "{reason}");

    // Its GPU is back in the pool.
    let (status, body) = f.book(&f.bob, GPU, 1, slot(0), slot(4)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}
