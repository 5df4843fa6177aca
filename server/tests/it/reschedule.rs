//! Moving or resizing a booking (the calendar's drag) through the REST API:
//! the new window answers to a new booking's rules without the booking's
//! own units, refusals name the next free window of the new length, and
//! only its holders (or admins) move it, and only before it begins.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{at, slot, Fixture, MIG};
use serde_json::{json, Value};

async fn move_to(f: &Fixture, token: &str, id: &str, start: i64, end: i64) -> (StatusCode, Value) {
    let body = json!({"start": slot(start), "end": slot(end)});
    f.call(Method::POST, &format!("/api/v1/bookings/{id}/move"), Some(token), Some(body)).await
}

async fn booked(f: &Fixture, token: &str, units: i32, start: i64, end: i64) -> String {
    let (status, body) = f.book(token, MIG, units, slot(start), slot(end)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_booking_moves_where_it_fits_counting_everyone_but_itself() {
    let f = Fixture::new().await;
    let ada = booked(&f, &f.ada, 1, 8, 10).await;
    // Carol fills the other three slices from 8 to 10: a move by one slot
    // fits only because ada's own unit is not counted twice.
    booked(&f, &f.carol, 3, 8, 10).await;
    let (status, moved) = move_to(&f, &f.ada, &ada, 9, 11).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!((at(&moved["start"]), at(&moved["end"])), (slot(9), slot(11)));
    // Resized: the same start, a later end.
    let (status, moved) = move_to(&f, &f.ada, &ada, 9, 14).await;
    assert_eq!((status, at(&moved["end"])), (StatusCode::OK, slot(14)), "{moved}");
    let why: String =
        sqlx::query_scalar("SELECT reason FROM booking_event WHERE booking_id = $1::uuid ORDER BY at DESC LIMIT 1")
            .bind(&ada)
            .fetch_one(&f.db)
            .await
            .unwrap();
    assert!(why.starts_with("moved to "), "the audit trail says so: {why}");

    // Bob fills every slice from 20 to 24: moving there is refused with the
    // earliest window of the new length (2 slots) that fits.
    booked(&f, &f.bob, 4, 20, 24).await;
    let (status, refused) = move_to(&f, &f.ada, &ada, 20, 22).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "capacity_exceeded");
    let next = &refused["next_free"];
    assert_eq!((at(&next["start"]), at(&next["end"])), (slot(24), slot(26)), "{refused}");
    // Nothing half-written: the booking kept its window.
    let (_, kept) = f.call(Method::GET, &format!("/api/v1/bookings/{ada}"), Some(&f.ada), None).await;
    assert_eq!((at(&kept["start"]), at(&kept["end"])), (slot(9), slot(14)));
}

#[tokio::test]
async fn only_its_holders_move_it_only_before_it_begins_and_bad_windows_are_named() {
    let f = Fixture::new().await;
    let ada = booked(&f, &f.ada, 1, 8, 10).await;
    assert_eq!(move_to(&f, &f.bob, &ada, 12, 14).await.0, StatusCode::NOT_FOUND, "another tenant's is not there");
    assert_eq!(
        move_to(&f, &f.carol, &ada, 12, 14).await.0,
        StatusCode::FORBIDDEN,
        "a teammate sees it, may not move it"
    );
    assert_eq!(move_to(&f, &f.admin, &ada, 12, 14).await.0, StatusCode::OK);
    for (start, end, field) in [(-8, -6, "start"), (12, 12, "end"), (12, 2000, "end")] {
        let (status, err) = move_to(&f, &f.ada, &ada, start, end).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{start}-{end}: {err}");
        assert_eq!(err["field"], field, "{err}");
    }
    let body = json!({"start": slot(12) + chrono::Duration::minutes(5), "end": slot(14)});
    let (status, err) = f.call(Method::POST, &format!("/api/v1/bookings/{ada}/move"), Some(&f.ada), Some(body)).await;
    assert_eq!(
        (status, err["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("start")),
        "off the grid: {err}"
    );
    let body = json!({"start": slot(12), "end": slot(14), "units": 9});
    let (status, _) = f.call(Method::POST, &format!("/api/v1/bookings/{ada}/move"), Some(&f.ada), Some(body)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "unknown fields are refused");
    // Where each window is approved, an approved booking is moved by an admin.
    let lab = format!("/api/v1/pools/{}", f.lab);
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"requires_approval": true}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, err) = move_to(&f, &f.ada, &ada, 16, 18).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("not_movable")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("approves each window"), "{err}");
    assert_eq!(move_to(&f, &f.admin, &ada, 16, 18).await.0, StatusCode::OK);
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"requires_approval": false}))).await;
    assert_eq!(status, StatusCode::OK);
    // A session under way keeps its start.
    let live = f.place(MIG, 1, (common::current_slot(), slot(4)), "active").await.to_string();
    let (status, err) = move_to(&f, &f.ada, &live, 6, 8).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("not_movable")), "{err}");
    // A canceled one holds nothing to move.
    let (status, _) =
        f.call(Method::POST, &format!("/api/v1/bookings/{ada}/cancel"), Some(&f.ada), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(move_to(&f, &f.ada, &ada, 12, 14).await.0, StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_maintenance_window_and_the_tenants_quota_answer_a_move_as_they_answer_a_booking() {
    let f = Fixture::new().await;
    let ada = booked(&f, &f.ada, 1, 8, 10).await;
    let blackout = json!({"start": slot(30), "end": slot(34), "reason": "driver upgrade"});
    let (status, body) =
        f.call(Method::POST, &format!("/api/v1/pools/{}/blackouts", f.lab), Some(&f.admin), Some(blackout)).await;
    assert!(status.is_success(), "{body}");
    let (status, err) = move_to(&f, &f.ada, &ada, 31, 33).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("blackout")), "{err}");
    // team-a may hold one slice at once: moving ada's one slice is no second one.
    let quota = json!([{"pool_id": f.lab, "kind": MIG, "max_units": 1}]);
    let (status, body) = f.call(Method::PUT, "/api/v1/tenants/team-a/quotas", Some(&f.admin), Some(quota)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(move_to(&f, &f.ada, &ada, 9, 11).await.0, StatusCode::OK);
    // But growing it into the hours carol holds is a second one at once.
    booked(&f, &f.carol, 1, 12, 14).await;
    let (status, err) = move_to(&f, &f.ada, &ada, 9, 13).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("quota_exceeded")), "{err}");
    let (_, kept) = f.call(Method::GET, &format!("/api/v1/bookings/{ada}"), Some(&f.ada), None).await;
    assert_eq!((at(&kept["start"]), at(&kept["end"])), (slot(9), slot(11)));
}
