//! The waitlist over HTTP: a request refused for capacity or quota joins it
//! with `"waitlist": true` (202); when room frees — cancel, end early,
//! reject, capacity raised, blackout removed, quota raised — the earliest
//! entry that fits becomes a booking through the same admission, FIFO among
//! those that fit; users see their position, leave, and entries expire.

use crate::common;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use common::{slot, Fixture, GPU, MIG};
use serde_json::{json, Value};

async fn wait(f: &Fixture, token: &str, kind: &str, quantity: i32, start: DateTime<Utc>, end: DateTime<Utc>) -> Value {
    let body = json!({
        "pool_id": f.lab, "kind": kind, "quantity": quantity,
        "start": start, "end": end, "mode": "interactive", "waitlist": true,
    });
    let (status, entry) = f.call(Method::POST, "/api/v1/bookings", Some(token), Some(body)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{entry}");
    assert_eq!(entry["state"], "waiting", "{entry}");
    entry
}

/// The caller's entries by id: (state, position, booking id).
async fn entry(f: &Fixture, token: &str, id: &Value) -> (String, Option<i64>, Option<String>) {
    let (status, list) = f.call(Method::GET, "/api/v1/waitlist", Some(token), None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let e = list.as_array().unwrap().iter().find(|e| e["id"] == *id).unwrap_or_else(|| panic!("{id} not in {list}"));
    (e["state"].as_str().unwrap().to_string(), e["position"].as_i64(), e["booking_id"].as_str().map(Into::into))
}

async fn cancel(f: &Fixture, token: &str, booking: &Value) {
    let path = format!("/api/v1/bookings/{}/cancel", booking["id"].as_str().unwrap());
    let (status, body) = f.call(Method::POST, &path, Some(token), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_full_window_is_waited_for_and_booked_when_the_holder_cancels() {
    let f = Fixture::new().await;
    let (_, held) = f.book(&f.ada, GPU, 1, slot(8), slot(12)).await;
    // Without asking to wait it is refused as before, and nothing is stored.
    let (status, err) = f.book(&f.bob, GPU, 1, slot(8), slot(12)).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("capacity_exceeded")), "{err}");
    assert_eq!(f.call(Method::GET, "/api/v1/waitlist", Some(&f.bob), None).await.1, json!([]));

    let bob = wait(&f, &f.bob, GPU, 1, slot(8), slot(12)).await;
    assert_eq!(bob["position"], 1);
    let carol = wait(&f, &f.carol, GPU, 1, slot(9), slot(11)).await;
    assert_eq!(carol["position"], 2, "a place per pool+kind, in the order they joined");
    // Own entries only; an admin sees all.
    let (_, mine) = f.call(Method::GET, "/api/v1/waitlist", Some(&f.bob), None).await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    let (_, all) = f.call(Method::GET, "/api/v1/waitlist", Some(&f.admin), None).await;
    assert_eq!(all.as_array().unwrap().len(), 2);
    // A request that fits is booked even when it offers to wait.
    let body = json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(8), "end": slot(9), "mode": "interactive", "waitlist": true});
    assert_eq!(f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(body)).await.0, StatusCode::CREATED);

    cancel(&f, &f.ada, &held).await;
    let (state, position, booking) = entry(&f, &f.bob, &bob["id"]).await;
    assert_eq!((state.as_str(), position), ("admitted", None));
    let booking = booking.expect("the entry points at its booking");
    let (status, booked) = f.call(Method::GET, &format!("/api/v1/bookings/{booking}"), Some(&f.bob), None).await;
    assert_eq!(
        (status, booked["state"].as_str(), booked["quantity"].as_i64()),
        (StatusCode::OK, Some("approved"), Some(1))
    );
    let reason: String = sqlx::query_scalar("SELECT reason FROM booking_event WHERE booking_id = $1::uuid")
        .bind(&booking)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(reason, format!("admitted from the waitlist (entry {})", bob["id"].as_str().unwrap()));
    // Carol's window overlaps Bob's new booking: she keeps waiting, now first.
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await.0, "waiting");
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await.1, Some(1));
}

#[tokio::test]
async fn the_earliest_entry_that_fits_goes_first() {
    let f = Fixture::new().await;
    let (_, three) = f.book(&f.ada, MIG, 3, slot(8), slot(12)).await;
    let (_, one) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    let two = wait(&f, &f.bob, MIG, 2, slot(8), slot(12)).await;
    let first_single = wait(&f, &f.carol, MIG, 1, slot(8), slot(12)).await;
    let second_single = wait(&f, &f.bob, MIG, 1, slot(8), slot(12)).await;

    // One unit frees: the pair does not fit, so the first single does; the second waits.
    cancel(&f, &f.ada, &one).await;
    assert_eq!(entry(&f, &f.bob, &two["id"]).await.0, "waiting");
    assert_eq!(entry(&f, &f.carol, &first_single["id"]).await.0, "admitted");
    assert_eq!(entry(&f, &f.bob, &second_single["id"]).await.0, "waiting");
    // Three free: the pair (earlier) and then the single.
    cancel(&f, &f.ada, &three).await;
    assert_eq!(entry(&f, &f.bob, &two["id"]).await.0, "admitted");
    assert_eq!(entry(&f, &f.bob, &second_single["id"]).await.0, "admitted");
}

#[tokio::test]
async fn a_quota_refusal_waits_until_the_quota_is_raised() {
    let f = Fixture::new().await;
    let quotas = |units: i32| json!([{"pool_id": f.lab, "kind": MIG, "max_units": units}]);
    let path = "/api/v1/tenants/team-a/quotas";
    assert_eq!(f.call(Method::PUT, path, Some(&f.admin), Some(quotas(1))).await.0, StatusCode::OK);
    assert_eq!(f.book(&f.ada, MIG, 1, slot(8), slot(12)).await.0, StatusCode::CREATED);
    let (status, err) = f.book(&f.carol, MIG, 1, slot(8), slot(12)).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("quota_exceeded")), "{err}");
    let carol = wait(&f, &f.carol, MIG, 1, slot(8), slot(12)).await;
    assert_eq!(f.call(Method::PUT, path, Some(&f.admin), Some(quotas(2))).await.0, StatusCode::OK);
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await.0, "admitted");
}

#[tokio::test]
async fn raised_capacity_and_a_removed_blackout_admit_waiting_entries() {
    let f = Fixture::new().await;
    assert_eq!(f.book(&f.ada, GPU, 1, slot(8), slot(12)).await.0, StatusCode::CREATED);
    let bob = wait(&f, &f.bob, GPU, 1, slot(8), slot(12)).await;
    let raise = json!({"kinds": [{"kind": GPU, "capacity": 2, "replicas_per_unit": 4, "vram_gb_per_unit": 96}]});
    let pool = format!("/api/v1/pools/{}", f.lab);
    assert_eq!(f.call(Method::PATCH, &pool, Some(&f.admin), Some(raise)).await.0, StatusCode::OK);
    assert_eq!(entry(&f, &f.bob, &bob["id"]).await.0, "admitted");

    // Room freed under a blackout is not room: the entry waits for the blackout's removal.
    let (_, full) = f.book(&f.ada, GPU, 2, slot(20), slot(24)).await;
    let carol = wait(&f, &f.carol, GPU, 1, slot(20), slot(24)).await;
    let blackout = json!({"start": slot(20), "end": slot(24), "reason": "firmware", "overlapping": "keep"});
    let (status, created) =
        f.call(Method::POST, &format!("/api/v1/pools/{}/blackouts", f.lab), Some(&f.admin), Some(blackout)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    cancel(&f, &f.ada, &full).await;
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await.0, "waiting");
    let id = created["blackout"]["id"].as_str().unwrap();
    assert_eq!(
        f.call(Method::DELETE, &format!("/api/v1/blackouts/{id}"), Some(&f.admin), None).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await.0, "admitted");
}

#[tokio::test]
async fn users_leave_the_list_and_started_windows_expire() {
    let f = Fixture::new().await;
    assert_eq!(f.book(&f.ada, GPU, 1, slot(8), slot(12)).await.0, StatusCode::CREATED);
    let bob = wait(&f, &f.bob, GPU, 1, slot(8), slot(12)).await;
    let path = format!("/api/v1/waitlist/{}", bob["id"].as_str().unwrap());
    // Someone else's entry is not theirs to see or remove.
    assert_eq!(f.call(Method::DELETE, &path, Some(&f.carol), None).await.0, StatusCode::NOT_FOUND);
    let (status, left) = f.call(Method::DELETE, &path, Some(&f.bob), None).await;
    assert_eq!((status, left["state"].as_str()), (StatusCode::OK, Some("left")), "{left}");
    let (status, again) = f.call(Method::DELETE, &path, Some(&f.bob), None).await;
    assert_eq!((status, again["error"].as_str()), (StatusCode::CONFLICT, Some("not_waiting")), "{again}");
    let (_, log) = f.call(Method::GET, "/api/v1/audit?action=waitlist", Some(&f.admin), None).await;
    let actions: Vec<&str> = log["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"waitlist.join") && actions.contains(&"waitlist.leave"), "{log}");

    // An entry whose window has started reads as expired, and the sweep records it.
    let carol = wait(&f, &f.carol, GPU, 1, slot(8), slot(12)).await;
    sqlx::query("UPDATE waitlist_entry SET starts_at = now() - interval '1 minute' WHERE id = $1::uuid")
        .bind(carol["id"].as_str().unwrap())
        .execute(&f.db)
        .await
        .unwrap();
    assert_eq!(entry(&f, &f.carol, &carol["id"]).await, ("expired".into(), None, None));
    assert_eq!(app::backend::waitlist::sweep(&f.db).await.unwrap(), (1, 0));
    let stored: String = sqlx::query_scalar("SELECT state FROM waitlist_entry WHERE id = $1::uuid")
        .bind(carol["id"].as_str().unwrap())
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(stored, "expired");
}

#[tokio::test]
async fn one_user_waits_for_at_most_ten_windows_of_a_kind() {
    let f = Fixture::new().await;
    assert_eq!(f.book(&f.ada, GPU, 1, slot(0), slot(96)).await.0, StatusCode::CREATED);
    for i in 0..10 {
        wait(&f, &f.bob, GPU, 1, slot(i * 8), slot(i * 8 + 4)).await;
    }
    let body = json!({"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": slot(88), "end": slot(92), "mode": "interactive", "waitlist": true});
    let (status, err) = f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(body.clone())).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("waitlist_full")), "{err}");
    // Another kind, or another user, is not affected.
    let (_, mig) = f.book(&f.ada, MIG, 4, slot(0), slot(8)).await;
    assert_eq!(mig["quantity"], 4);
    wait(&f, &f.bob, MIG, 1, slot(0), slot(8)).await;
    assert_eq!(f.call(Method::POST, "/api/v1/bookings", Some(&f.carol), Some(body)).await.0, StatusCode::ACCEPTED);
}
