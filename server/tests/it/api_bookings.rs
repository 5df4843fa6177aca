//! Bookings over HTTP: admission, refusals with `next_free`, visibility per
//! tenant, and every lifecycle action with its permissions and audit trail.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{at, slot, Fixture, GPU, MIG};
use serde_json::json;

#[tokio::test]
async fn a_booking_that_fits_is_created_approved_and_audited() {
    let f = Fixture::new().await;
    let (status, booking) = f.book(&f.ada, MIG, 2, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    assert_eq!(booking["state"], "approved");
    assert_eq!(booking["quantity"], 2);
    assert_eq!(booking["mine"], true);
    assert_eq!(booking["tenant"], "team-a");
    assert_eq!(booking["image"], "quay.io/jupyter/pytorch-notebook:cuda12-latest", "pool's default image");
    assert_eq!(at(&booking["start"]), slot(4));
    let events: Vec<(Option<String>, String, String)> =
        sqlx::query_as("SELECT from_state, to_state, reason FROM booking_event WHERE booking_id = $1::text::uuid")
            .bind(booking["id"].as_str())
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert_eq!(events, [(None, "approved".to_string(), "booked".to_string())]);
}

#[tokio::test]
async fn back_to_back_full_capacity_bookings_both_fit() {
    let f = Fixture::new().await;
    assert_eq!(f.book(&f.ada, MIG, 4, slot(4), slot(8)).await.0, StatusCode::CREATED);
    assert_eq!(f.book(&f.bob, MIG, 4, slot(8), slot(12)).await.0, StatusCode::CREATED);
    // A window spanning both has a peak of 4, so even one more unit does not fit...
    let (status, err) = f.book(&f.carol, MIG, 1, slot(6), slot(10)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // ...but the whole GPU is a separate kind.
    assert_eq!(f.book(&f.carol, GPU, 1, slot(6), slot(10)).await.0, StatusCode::CREATED);
    assert_eq!(err["error"], "capacity_exceeded");
    assert_eq!(err["peak_used"], 4);
    assert_eq!(at(&err["next_free"]["start"]), slot(12), "{err}");
    assert_eq!(at(&err["next_free"]["end"]), slot(16), "same length as asked");
}

#[tokio::test]
async fn refusals_leave_nothing_behind() {
    let f = Fixture::new().await;
    f.book(&f.ada, GPU, 1, slot(0), slot(40)).await;
    let (status, err) = f.book(&f.bob, GPU, 1, slot(10), slot(20)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(at(&err["next_free"]["start"]), slot(40));
    let cases = [
        (f.book(&f.bob, MIG, 0, slot(4), slot(8)).await, "quantity"),
        (f.book(&f.bob, MIG, 5, slot(4), slot(8)).await, "quantity"),
        (f.book(&f.bob, MIG, 1, slot(8), slot(8)).await, "end"),
        (f.book(&f.bob, MIG, 1, slot(8), slot(4)).await, "end"),
        (f.book(&f.bob, MIG, 1, slot(4) + chrono::Duration::minutes(5), slot(8)).await, "start"),
        (f.book(&f.bob, MIG, 1, slot(-8), slot(4)).await, "start"),
        (f.book(&f.bob, MIG, 1, slot(4), slot(4 + 30 * 96)).await, "end"),
        (f.book(&f.bob, "nvidia.com/mig-3g.48gb", 1, slot(4), slot(8)).await, "kind"),
    ];
    for ((status, err), field) in cases {
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
        assert_eq!(err["field"], field, "{err}");
    }
    let ancient = chrono::DateTime::parse_from_rfc3339("0001-01-01T00:00:00Z").unwrap().to_utc();
    let (status, err) = f.book(&f.bob, MIG, 1, ancient, slot(4)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("start")), "{err}");
    let (status, err) = f.call(Method::GET, "/api/v1/bookings?from=0001-01-01T00:00:00Z", Some(&f.bob), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("from")), "{err}");
    let unknown_pool = json!({"pool_id": uuid::Uuid::new_v4(), "kind": MIG, "quantity": 1, "start": slot(4), "end": slot(8), "mode": "inference"});
    let (status, err) = f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(unknown_pool)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pool_id")));
    let (count, events): (i64, i64) =
        sqlx::query_as("SELECT (SELECT count(*) FROM booking), (SELECT count(*) FROM booking_event)")
            .fetch_one(&f.db)
            .await
            .unwrap();
    assert_eq!((count, events), (1, 1));
}

#[tokio::test]
async fn a_window_may_start_in_the_current_slot_and_be_ended_early() {
    let f = Fixture::new().await;
    let (status, running) = f.book(&f.ada, GPU, 1, common::current_slot(), slot(4)).await;
    assert_eq!(status, StatusCode::CREATED, "{running}");
    let id = running["id"].as_str().unwrap();
    assert_eq!(
        f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&f.carol), None).await.0,
        StatusCode::FORBIDDEN
    );
    let (status, ended) = f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{ended}");
    assert_eq!(ended["state"], "completed");
    assert!(at(&ended["end"]) <= chrono::Utc::now());
    // The capacity is free from now on.
    assert_eq!(f.book(&f.bob, GPU, 1, slot(0), slot(4)).await.0, StatusCode::CREATED);

    let (_, future) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    let (status, err) = f
        .call(Method::POST, &format!("/api/v1/bookings/{}/end", future["id"].as_str().unwrap()), Some(&f.ada), None)
        .await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("not_started")));
}

#[tokio::test]
async fn each_tenant_sees_its_own_bookings_and_only_occupancy_of_others() {
    let f = Fixture::new().await;
    let (_, booking) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    let path = format!("/api/v1/bookings/{}", booking["id"].as_str().unwrap());

    let (status, own) = f.call(Method::GET, &path, Some(&f.ada), None).await;
    assert_eq!((status, own["user_email"].as_str()), (StatusCode::OK, Some("ada@a.test")));
    let (status, teammate) = f.call(Method::GET, &path, Some(&f.carol), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(teammate.get("user_email").is_none() && teammate.get("note").is_none(), "{teammate}");
    assert_eq!(teammate["mine"], false);
    assert_eq!(f.call(Method::GET, &path, Some(&f.bob), None).await.0, StatusCode::NOT_FOUND);
    let (_, as_admin) = f.call(Method::GET, &path, Some(&f.admin), None).await;
    assert_eq!(as_admin["user_email"], "ada@a.test");

    // Bob sees the occupancy in the shared pool, without who booked it.
    let (status, list) = f.call(Method::GET, "/api/v1/bookings", Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert!(list[0].get("user_email").is_none() && list[0].get("tenant").is_none());
    // Nor which booking it is: its id names ada's session's namespace, and
    // so her workspace's host (`berth-<tenant>-<first 8 hex>.<domain>`).
    let real = booking["id"].as_str().unwrap();
    let shown = list[0]["id"].as_str().unwrap();
    assert!(shown != real && !shown.starts_with(&real[..8]), "occupancy carries no booking id: {shown}");
    let (_, as_teammate) = f.call(Method::GET, "/api/v1/bookings", Some(&f.carol), None).await;
    assert_eq!(as_teammate[0]["id"].as_str(), Some(shown), "the same opaque id for everyone who sees occupancy");
    let (_, as_admin_list) = f.call(Method::GET, "/api/v1/bookings", Some(&f.admin), None).await;
    assert_eq!(as_admin_list[0]["id"].as_str(), Some(real), "admins see the booking itself");
    let (_, mine) = f.call(Method::GET, "/api/v1/bookings?mine=true", Some(&f.bob), None).await;
    assert_eq!(mine.as_array().unwrap().len(), 0);
    let (_, mine) = f.call(Method::GET, "/api/v1/bookings?mine=true", Some(&f.ada), None).await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    let later = format!("/api/v1/bookings?pool_id={}&from={}", f.lab, slot(8).to_rfc3339().replace('+', "%2B"));
    assert_eq!(
        f.call(Method::GET, &later, Some(&f.ada), None).await.1.as_array().unwrap().len(),
        0,
        "[a,b) ends before b"
    );
    let bad = f.call(Method::GET, "/api/v1/bookings?mine=perhaps", Some(&f.ada), None).await;
    assert_eq!((bad.0, bad.1["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("mine")));
}

#[tokio::test]
async fn cancel_frees_capacity_and_only_the_owner_or_an_admin_may() {
    let f = Fixture::new().await;
    let (_, booking) = f.book(&f.ada, MIG, 4, slot(4), slot(8)).await;
    let cancel = format!("/api/v1/bookings/{}/cancel", booking["id"].as_str().unwrap());
    assert_eq!(f.call(Method::POST, &cancel, Some(&f.bob), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(f.call(Method::POST, &cancel, Some(&f.carol), None).await.0, StatusCode::FORBIDDEN);
    assert_eq!(f.book(&f.bob, MIG, 1, slot(4), slot(8)).await.0, StatusCode::CONFLICT);

    let (status, canceled) =
        f.call(Method::POST, &cancel, Some(&f.ada), Some(json!({"reason": "plans changed"}))).await;
    assert_eq!((status, canceled["state"].as_str()), (StatusCode::OK, Some("canceled")));
    assert_eq!(f.book(&f.bob, MIG, 4, slot(4), slot(8)).await.0, StatusCode::CREATED);

    let (status, err) = f.call(Method::POST, &cancel, Some(&f.ada), None).await;
    assert_eq!(
        (status, err["error"].as_str(), err["state"].as_str()),
        (StatusCode::CONFLICT, Some("illegal_transition"), Some("canceled"))
    );
    let reason: String = sqlx::query_scalar("SELECT reason FROM booking_event WHERE to_state = 'canceled'")
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(reason, "plans changed");
}

#[tokio::test]
async fn extend_moves_the_end_only_when_the_extra_time_fits() {
    let f = Fixture::new().await;
    let (_, booking) = f.book(&f.ada, GPU, 1, slot(4), slot(8)).await;
    f.book(&f.bob, GPU, 1, slot(12), slot(16)).await;
    let extend = format!("/api/v1/bookings/{}/extend", booking["id"].as_str().unwrap());

    let (status, extended) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(12)}))).await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    assert_eq!(at(&extended["end"]), slot(12), "touching the next booking is fine");
    let (status, err) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(13)}))).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("capacity_exceeded")));
    let (status, err) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(10)}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end")));
    let (status, err) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end")));
    assert_eq!(
        f.call(Method::POST, &extend, Some(&f.carol), Some(json!({"end": slot(12)}))).await.0,
        StatusCode::FORBIDDEN
    );
    let end: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT ends_at FROM booking WHERE id = $1::text::uuid")
            .bind(booking["id"].as_str())
            .fetch_one(&f.db)
            .await
            .unwrap();
    assert_eq!(end, slot(12));
}

#[tokio::test]
async fn approval_pools_hold_capacity_while_pending_and_only_admins_decide() {
    let f = Fixture::new().await;
    let path = format!("/api/v1/pools/{}", f.lab);
    f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"requires_approval": true}))).await;
    let (status, pending) = f.book(&f.ada, GPU, 1, slot(4), slot(8)).await;
    assert_eq!((status, pending["state"].as_str()), (StatusCode::CREATED, Some("pending")));
    assert_eq!(f.book(&f.bob, GPU, 1, slot(4), slot(8)).await.0, StatusCode::CONFLICT, "pending holds capacity");

    let approve = format!("/api/v1/bookings/{}/approve", pending["id"].as_str().unwrap());
    assert_eq!(f.call(Method::POST, &approve, Some(&f.ada), None).await.0, StatusCode::FORBIDDEN);
    assert_eq!(f.call(Method::POST, &approve, Some(&f.mia), None).await.0, StatusCode::FORBIDDEN);
    assert_eq!(f.call(Method::POST, &approve, Some(&f.bob), None).await.0, StatusCode::NOT_FOUND);
    let (status, approved) = f.call(Method::POST, &approve, Some(&f.admin), Some(json!({"comment": "go ahead"}))).await;
    assert_eq!((status, approved["state"].as_str()), (StatusCode::OK, Some("approved")));
    assert_eq!(f.call(Method::POST, &approve, Some(&f.admin), None).await.0, StatusCode::CONFLICT);

    let (_, second) = f.book(&f.carol, MIG, 1, slot(4), slot(8)).await;
    let reject = format!("/api/v1/bookings/{}/reject", second["id"].as_str().unwrap());
    let (status, rejected) =
        f.call(Method::POST, &reject, Some(&f.admin), Some(json!({"comment": "maintenance"}))).await;
    assert_eq!((status, rejected["state"].as_str()), (StatusCode::OK, Some("rejected")));
    let (actor, reason): (String, String) = sqlx::query_as(
        "SELECT u.email, e.reason FROM booking_event e JOIN app_user u ON u.id = e.actor_id WHERE e.to_state = 'rejected'",
    )
    .fetch_one(&f.db).await.unwrap();
    assert_eq!((actor.as_str(), reason.as_str()), ("root@ops.test", "maintenance"));
}

#[tokio::test]
async fn members_of_several_tenants_say_which_and_tenantless_users_are_told_to_ask() {
    let f = Fixture::new().await;
    app::backend::accounts::users::upsert_user(&f.db, "ada@a.test", "ada", app::model::Role::User, "team-b")
        .await
        .unwrap();
    let (status, err) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("tenant")));
    let body = json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(4), "end": slot(8), "mode": "interactive", "tenant": "team-b"});
    let (status, booking) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body)).await;
    assert_eq!((status, booking["tenant"].as_str()), (StatusCode::CREATED, Some("team-b")));

    sqlx::query("DELETE FROM membership WHERE user_id = (SELECT id FROM app_user WHERE email = 'carol@a.test')")
        .execute(&f.db)
        .await
        .unwrap();
    let (status, err) = f.book(&f.carol, MIG, 1, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(err["message"].as_str().unwrap().contains("ask your admin"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_for_one_kind_each_get_their_own_answer() {
    let f = Fixture::new().await;
    let mut calls = Vec::new();
    // Eight one-unit requests for the same window on four MIG slices, mixed
    // with requests that are invalid for different reasons, all at once so that
    // they share admission batches.
    for i in 0..11 {
        let (app, token, lab) = (f.app.clone(), f.ada.clone(), f.lab);
        calls.push(tokio::spawn(async move {
            let (quantity, start) = match i {
                8 => (0, slot(4)),
                9 => (1, slot(4) + chrono::Duration::minutes(7)),
                10 => (9, slot(4)),
                _ => (1, slot(4)),
            };
            let body = json!({"pool_id": lab, "kind": MIG, "quantity": quantity, "start": start, "end": slot(8), "mode": "interactive"});
            common::call(&app, Method::POST, "/api/v1/bookings", Some(&token), Some(body)).await
        }));
    }
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    let created = answers[..8].iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
    let refused: Vec<_> = answers[..8].iter().filter(|(s, _)| *s == StatusCode::CONFLICT).collect();
    assert_eq!((created, refused.len()), (4, 4), "{answers:?}");
    for (_, err) in refused {
        assert_eq!(err["error"], "capacity_exceeded");
        assert_eq!((at(&err["next_free"]["start"]), at(&err["next_free"]["end"])), (slot(8), slot(12)));
    }
    let fields: Vec<_> =
        answers[8..].iter().map(|(s, e)| (*s, e["field"].as_str().unwrap_or("").to_string())).collect();
    let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
    assert_eq!(
        fields,
        [(unprocessable, "quantity".into()), (unprocessable, "start".into()), (unprocessable, "quantity".into())]
    );
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM booking").fetch_one(&f.db).await.unwrap();
    assert_eq!(rows, 4);
}

#[tokio::test]
async fn an_extension_in_an_approval_pool_waits_for_an_admin_while_holding_the_capacity() {
    let f = Fixture::new().await;
    let path = format!("/api/v1/pools/{}", f.lab);
    f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"requires_approval": true}))).await;
    let (_, booking) = f.book(&f.ada, GPU, 1, slot(4), slot(8)).await;
    let id = booking["id"].as_str().unwrap().to_string();
    let approve = |id: &str| format!("/api/v1/bookings/{id}/approve");
    f.call(Method::POST, &approve(&id), Some(&f.admin), None).await;
    let extend = format!("/api/v1/bookings/{id}/extend");

    // The request: 202, a pending booking right after, the booking itself unchanged.
    let (status, request) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(12)}))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{request}");
    assert_eq!((request["state"].as_str(), request["extends"].as_str()), (Some("pending"), Some(id.as_str())));
    assert_eq!((at(&request["start"]), at(&request["end"])), (slot(8), slot(12)));
    let (_, same) = f.call(Method::GET, &format!("/api/v1/bookings/{id}"), Some(&f.ada), None).await;
    assert_eq!(at(&same["end"]), slot(8), "never granted silently");
    assert_eq!(f.book(&f.bob, GPU, 1, slot(8), slot(12)).await.0, StatusCode::CONFLICT, "the extra time is held");
    let (status, again) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(10)}))).await;
    assert_eq!((status, again["error"].as_str()), (StatusCode::CONFLICT, Some("extension_pending")));

    // The owner sees it waiting on the card; an admin approves by the request's id.
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let card = |page: app::model::MyBookings| page.upcoming.into_iter().find(|c| c.booking.id.to_string() == id);
    let mine = card(app::backend::bookings::mine::load(&f.db, &ada, "UTC").await.unwrap()).unwrap();
    assert!(mine.extension.unwrap().contains("awaits an admin's approval"));
    assert!(mine.extend_to.is_empty(), "no second end is offered while one waits");
    let request_id = request["id"].as_str().unwrap();
    assert_eq!(f.call(Method::POST, &approve(request_id), Some(&f.ada), None).await.0, StatusCode::FORBIDDEN);
    let (status, granted) =
        f.call(Method::POST, &approve(request_id), Some(&f.admin), Some(json!({"comment": "ok"}))).await;
    assert_eq!(status, StatusCode::OK, "{granted}");
    assert_eq!((granted["id"].as_str(), at(&granted["end"])), (Some(id.as_str()), slot(12)));
    let (status, _) = f.call(Method::GET, &format!("/api/v1/bookings/{request_id}"), Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the request merged into the booking");

    // A second request, rejected with a comment the owner reads on the card.
    let (_, request) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(16)}))).await;
    let reject = format!("/api/v1/bookings/{}/reject", request["id"].as_str().unwrap());
    let (status, _) =
        f.call(Method::POST, &reject, Some(&f.admin), Some(json!({"comment": "the lab is needed"}))).await;
    assert_eq!(status, StatusCode::OK);
    let mine = card(app::backend::bookings::mine::load(&f.db, &ada, "UTC").await.unwrap()).unwrap();
    assert!(mine.extension.unwrap().ends_with("was rejected: the lab is needed"));
    let (status, bobs) = f.book(&f.bob, GPU, 1, slot(12), slot(16)).await;
    assert_eq!(status, StatusCode::CREATED, "rejected frees it");
    let bobs = format!("/api/v1/bookings/{}/cancel", bobs["id"].as_str().unwrap());
    f.call(Method::POST, &bobs, Some(&f.bob), Some(json!({}))).await;

    // A third, withdrawn with the booking: canceling it cancels the request.
    let (_, request) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(13)}))).await;
    assert_eq!(request["state"], "pending", "{request}");
    f.call(Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&f.ada), Some(json!({}))).await;
    let state: String = sqlx::query_scalar("SELECT state FROM booking WHERE id = $1::uuid")
        .bind(request["id"].as_str().unwrap())
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(state, "canceled");

    // Admins extend directly.
    let (_, other) = f.book(&f.carol, MIG, 1, slot(4), slot(8)).await;
    let other_id = other["id"].as_str().unwrap();
    let (status, extended) = f
        .call(
            Method::POST,
            &format!("/api/v1/bookings/{other_id}/extend"),
            Some(&f.admin),
            Some(json!({"end": slot(9)})),
        )
        .await;
    assert_eq!((status, at(&extended["end"])), (StatusCode::OK, slot(9)));
}

#[tokio::test]
async fn refusals_count_in_the_right_number() {
    let f = Fixture::new().await;
    // The demo pool has one whole GPU: "the 1 unit", not "the 1 units".
    let (status, err) = f.book(&f.ada, GPU, 2, slot(4), slot(8)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity")), "{err}");
    assert!(err["message"].as_str().is_some_and(|m| m.ends_with("is more than the 1 unit this kind has")), "{err}");
}
