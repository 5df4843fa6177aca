//! The approval queue (oldest first, with the kind's peak with and without
//! each request), deciding many at once, the comment the requester reads,
//! rejection of what starts unapproved, and the audit log with its filters
//! and CSV.

use crate::common;

use app::backend::{accounts::tokens, bookings::approvals, bookings::mine as my_bookings, sessions::transitions};
use app::model::Window;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::{raw, slot, Fixture, MIG};
use serde_json::json;
use uuid::Uuid;

async fn requiring_approval(f: &Fixture) {
    let (status, pool) = f
        .call(
            Method::PATCH,
            &format!("/api/v1/pools/{}", f.lab),
            Some(&f.admin),
            Some(json!({"requires_approval": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{pool}");
}

fn id_of(booking: &serde_json::Value) -> Uuid {
    booking["id"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_queue_lists_oldest_first_with_the_kinds_peak_and_decides_many_at_once() {
    let f = Fixture::new().await;
    requiring_approval(&f).await;
    let (_, first) = f.book(&f.ada, MIG, 2, slot(4), slot(8)).await;
    let (_, second) = f.book(&f.bob, MIG, 1, slot(6), slot(10)).await;
    let (_, third) = f.book(&f.carol, MIG, 1, slot(20), slot(24)).await;
    let admin = tokens::authenticate(&f.db, &f.admin).await.unwrap().unwrap();
    let queue = approvals::queue(&f.db, &admin).await.unwrap();
    let ids: Vec<Uuid> = queue.iter().map(|p| p.id).collect();
    assert_eq!(ids, [id_of(&first), id_of(&second), id_of(&third)], "oldest request first");
    let shown: Vec<(Uuid, Window)> = queue.iter().map(|p| (p.id, Window { start: p.start, end: p.end })).collect();
    assert_eq!((queue[0].peak_without, queue[0].peak_with, queue[0].capacity), (1, 3, 4));
    assert_eq!((queue[1].peak_without, queue[1].peak_with), (2, 3));
    assert_eq!((queue[2].peak_without, queue[2].peak_with), (0, 1));
    assert_eq!(queue[0].tenant, "team-a");
    assert_eq!(approvals::count(&f.db, &admin).await.unwrap(), 3);

    // Rejecting without a comment is refused once, for the batch, naming
    // the comment; nothing changes.
    let refused = approvals::decide(&f.db, &admin, &shown[..2], false, "  ").await.unwrap_err();
    assert_eq!(refused.field_error().map(|e| e.field), Some("comment".to_string()), "{refused:?}");
    assert_eq!(approvals::count(&f.db, &admin).await.unwrap(), 3);
    let decided = approvals::decide(&f.db, &admin, &shown[..2], true, "").await.unwrap();
    assert!(decided.iter().all(|d| d.ok), "{decided:?}");
    let decided = approvals::decide(&f.db, &admin, &shown[2..], false, "the lab is closed that day").await.unwrap();
    assert!(decided[0].ok);
    // Deciding again is a per-booking refusal, not a failure of the batch.
    let again = approvals::decide(&f.db, &admin, &shown, true, "").await.unwrap();
    assert!(again.iter().all(|d| !d.ok), "{again:?}");
    assert_eq!(approvals::count(&f.db, &admin).await.unwrap(), 0);

    // Carol reads the comment on her card.
    let carol = tokens::authenticate(&f.db, &f.carol).await.unwrap().unwrap();
    let page = my_bookings::load(&f.db, &carol, "UTC").await.unwrap();
    let card = page.past.iter().find(|c| c.booking.id == ids[2]).expect("the rejected booking is listed");
    assert_eq!(card.decision.as_deref(), Some("Rejected: the lab is closed that day"));
    // Only admins see the queue or decide.
    let ada = tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    assert_eq!(approvals::queue(&f.db, &ada).await.unwrap_err().status(), 403);
    assert_eq!(approvals::count(&f.db, &ada).await.unwrap(), 0);
}

#[tokio::test]
async fn rejecting_over_rest_needs_a_comment() {
    let f = Fixture::new().await;
    requiring_approval(&f).await;
    let (_, booking) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    let path = format!("/api/v1/bookings/{}/reject", id_of(&booking));
    let (status, err) = f.call(Method::POST, &path, Some(&f.admin), Some(json!({}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("comment")), "{err}");
    // A non-admin learns they may not, not what the body lacks.
    assert_eq!(f.call(Method::POST, &path, Some(&f.ada), Some(json!({}))).await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_booking_whose_window_opens_unapproved_is_rejected_with_that_reason() {
    let f = Fixture::new().await;
    requiring_approval(&f).await;
    let (_, late) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    let (_, future) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    // The first window has opened (moved back in time, as the clock would).
    sqlx::query("UPDATE booking SET starts_at = now() - interval '1 minute' WHERE id = $1")
        .bind(id_of(&late))
        .execute(&f.db)
        .await
        .unwrap();
    assert_eq!(transitions::reject_unapproved(&f.db, None).await.unwrap(), 1);
    assert_eq!(transitions::reject_unapproved(&f.db, None).await.unwrap(), 0, "once");
    let states: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT id, state FROM booking ORDER BY starts_at").fetch_all(&f.db).await.unwrap();
    assert_eq!(states, [(id_of(&late), "rejected".into()), (id_of(&future), "pending".into())]);
    let (_, log) = f.call(Method::GET, "/api/v1/audit?action=booking.rejected", Some(&f.admin), None).await;
    assert_eq!(log["entries"][0]["detail"], transitions::NOT_APPROVED_IN_TIME);
    assert_eq!(log["entries"][0]["actor"], serde_json::Value::Null, "Berth itself");
}

#[tokio::test]
async fn the_audit_log_filters_pages_and_exports_csv() {
    let f = Fixture::new().await;
    for i in 0..3 {
        f.book(&f.ada, MIG, 1, slot(4 * i), slot(4 * i + 2)).await;
    }
    f.book(&f.bob, MIG, 1, slot(20), slot(22)).await;
    f.call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "=cmd", "name": "x"}))).await;
    f.call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "lab", "name": "=HYPERLINK(1)"})))
        .await;

    let (status, log) = f.call(Method::GET, "/api/v1/audit?tenant=team-a", Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{log}");
    assert!(entries.iter().all(|e| e["action"] == "booking.create" && e["actor"] == "ada@a.test"));
    // Each entry links to what it names: a booking to its own page, which its admin reader may open.
    let link = entries[0]["link"].as_str().unwrap();
    assert_eq!(link, format!("/bookings/{}", entries[0]["target"].as_str().unwrap()), "{log}");
    let (_, tenants) = f.call(Method::GET, "/api/v1/audit?action=tenant", Some(&f.admin), None).await;
    assert_eq!(tenants["entries"][0]["link"], "/admin/tenants", "{tenants}");
    let (_, by_user) = f.call(Method::GET, "/api/v1/audit?user=bob%40b.test", Some(&f.admin), None).await;
    assert_eq!(by_user["entries"].as_array().unwrap().len(), 1);
    let (_, admin_actions) = f.call(Method::GET, "/api/v1/audit?action=tenant", Some(&f.admin), None).await;
    assert_eq!(admin_actions["entries"].as_array().unwrap().len(), 1, "the refused slug wrote nothing");
    let (_, none) = f.call(Method::GET, "/api/v1/audit?from=2099-01-01T00:00:00Z", Some(&f.admin), None).await;
    assert_eq!(none["entries"].as_array().unwrap().len(), 0);
    let (status, err) = f.call(Method::GET, "/api/v1/audit?page=0", Some(&f.admin), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("page")));

    // Pages of 50, newest first.
    for i in 0..60 {
        sqlx::query("INSERT INTO audit_event (action, target, detail) VALUES ('test.fill', $1, '')")
            .bind(format!("row-{i:02}"))
            .execute(&f.db)
            .await
            .unwrap();
    }
    let (_, first) = f.call(Method::GET, "/api/v1/audit?action=test", Some(&f.admin), None).await;
    assert_eq!((first["entries"].as_array().unwrap().len(), first["more"].as_bool()), (50, Some(true)));
    let (_, second) = f.call(Method::GET, "/api/v1/audit?action=test&page=2", Some(&f.admin), None).await;
    assert_eq!((second["entries"].as_array().unwrap().len(), second["more"].as_bool()), (10, Some(false)));

    // CSV of the filtered view, by Accept or by the plain link; formulas defused.
    let request = Request::builder()
        .uri("/api/v1/audit?action=tenant")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.admin))
        .header(header::ACCEPT, "text/csv")
        .body(Body::empty())
        .unwrap();
    let (status, csv) = raw(&f.app, request).await;
    assert_eq!(status, StatusCode::OK);
    let csv = csv.as_str().unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "at,actor,action,target,tenant,pool,detail,token,client");
    assert_eq!(lines.len(), 2, "{csv}");
    // Made with the admin's API token "test", by a client that named none.
    assert!(lines[1].ends_with(",root@ops.test,tenant.create,lab,lab,,'=HYPERLINK(1),test,"), "{csv}");
    let (_, linked) = f.call(Method::GET, "/api/v1/audit.csv?action=tenant", Some(&f.admin), None).await;
    assert_eq!(linked.as_str(), Some(csv));
}
