//! Moving or resizing a booking (the calendar's drag) through the REST API:
//! the new window answers to a new booking's rules without the booking's
//! own units, refusals name the next free window of the new length, and
//! only its owner (or an admin) moves it, only before it begins, and only
//! where a new booking could go: not in a retired pool, nor in one that no
//! longer takes its tenant. An approval binds to the window it was shown.

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
    // My bookings' card reads no note of the move as a decision (it once
    // said "Approved: moved to 2026-11-29T14:00:00+00:00").
    let who = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let page = app::backend::bookings::mine::load(&f.db, &who, "UTC").await.unwrap();
    let card = page.upcoming.iter().find(|c| c.booking.id.to_string() == ada).unwrap();
    assert_eq!(card.decision, None, "a move is no decision");

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

#[tokio::test]
async fn a_move_or_extension_answers_to_admission_a_retired_pool_and_the_pools_tenants() {
    let f = Fixture::new().await;
    let ada = booked(&f, &f.ada, 1, 8, 10).await;
    let live = f.place(MIG, 1, (common::current_slot(), slot(4)), "active").await.to_string();
    let lab = format!("/api/v1/pools/{}", f.lab);
    let extend = |id: &str| format!("/api/v1/bookings/{id}/extend");
    // The pool now takes only team-b: a new booking of ada's is refused, and so are new windows of her old ones.
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"tenants": ["team-b"]}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = f.book(&f.ada, MIG, 1, slot(12), slot(14)).await;
    assert_eq!((status, refused["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pool_id")), "{refused}");
    let (status, err) = move_to(&f, &f.ada, &ada, 12, 14).await;
    assert_eq!((status, &err["message"]), (StatusCode::UNPROCESSABLE_ENTITY, &refused["message"]), "{err}");
    let (status, err) = f.call(Method::POST, &extend(&live), Some(&f.ada), Some(json!({"end": slot(5)}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pool_id")), "{err}");
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"tenants": []}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(move_to(&f, &f.ada, &ada, 12, 14).await.0, StatusCode::OK, "open to every tenant again");

    // Retired: it keeps its bookings where they are and takes no new window.
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"retired": true}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, err) = move_to(&f, &f.ada, &ada, 16, 18).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pool_id")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("retired"), "{err}");
    let (status, err) = f.call(Method::POST, &extend(&live), Some(&f.ada), Some(json!({"end": slot(5)}))).await;
    assert!(
        status == StatusCode::UNPROCESSABLE_ENTITY && err["message"].as_str().unwrap().contains("retired"),
        "{err}"
    );
    let (status, moved) = f.call(Method::GET, &format!("/api/v1/bookings/{ada}"), Some(&f.ada), None).await;
    assert_eq!((status, at(&moved["start"])), (StatusCode::OK, slot(12)), "nothing half-written");
}

#[tokio::test]
async fn an_approval_binds_to_the_window_the_admin_was_shown() {
    let f = Fixture::new().await;
    let lab = format!("/api/v1/pools/{}", f.lab);
    let (status, _) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"requires_approval": true}))).await;
    assert_eq!(status, StatusCode::OK);
    let ada = booked(&f, &f.ada, 1, 8, 10).await;
    let admin = app::backend::accounts::tokens::authenticate(&f.db, &f.admin).await.unwrap().unwrap();
    let shown = app::backend::bookings::approvals::queue(&f.db, &admin).await.unwrap();
    let shown: Vec<_> = shown.iter().map(|p| (p.id, app::model::Window { start: p.start, end: p.end })).collect();
    // Ada drags her pending booking elsewhere after the admin loaded the queue.
    assert_eq!(move_to(&f, &f.ada, &ada, 20, 24).await.0, StatusCode::OK, "a pending booking moves freely");
    let decided = app::backend::bookings::approvals::decide(&f.db, &admin, &shown, true, "").await.unwrap();
    assert!(!decided[0].ok && decided[0].message.contains("moved after it was shown"), "{decided:?}");
    let (_, seen) = f.call(Method::GET, &format!("/api/v1/bookings/{ada}"), Some(&f.ada), None).await;
    assert_eq!(seen["state"], "pending", "nothing approved: {seen}");
    // Over the REST API: the window shown, as start and end.
    let approve = format!("/api/v1/bookings/{ada}/approve");
    let stale = json!({"start": slot(8), "end": slot(10)});
    let (status, err) = f.call(Method::POST, &approve, Some(&f.admin), Some(stale)).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("moved_since_shown")), "{err}");
    let (status, err) = f.call(Method::POST, &approve, Some(&f.admin), Some(json!({"start": slot(20)}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end")), "{err}");
    // Shown again, the window it asks for now is approved.
    let fresh = app::backend::bookings::approvals::queue(&f.db, &admin).await.unwrap();
    let fresh: Vec<_> = fresh.iter().map(|p| (p.id, app::model::Window { start: p.start, end: p.end })).collect();
    let decided = app::backend::bookings::approvals::decide(&f.db, &admin, &fresh, true, "").await.unwrap();
    assert!(decided[0].ok, "{decided:?}");
    // The approvals page's form names the window too; a bare id is refused.
    let form = |ids: String| {
        let request = axum::http::Request::post("/rpc/admin/approvals/decide")
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {}", f.admin))
            .header(axum::http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(axum::body::Body::from(format!("ids%5B%5D={ids}&decision=approve")))
            .unwrap();
        common::raw(&f.app, request)
    };
    let (status, err) = form(ada.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(err.to_string().contains("IDs must each name a booking and the window shown"), "{err}");
}
