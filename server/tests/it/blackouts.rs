//! Maintenance windows over HTTP: creating one over bookings lists them and
//! the admin keeps or cancels them; while it lasts nothing new is booked or
//! extended into it (for its kind, or the whole pool); the calendar and the
//! availability show it; removing it opens the window again.

use crate::common;

use app::backend::accounts::tokens;
use app::backend::calendar::{self, CalendarQuery};
use axum::http::{Method, StatusCode};
use common::{at, slot, Fixture, GPU, MIG};
use serde_json::json;

#[tokio::test]
async fn a_blackout_over_bookings_lists_them_then_cancels_them_and_closes_its_window() {
    let f = Fixture::new().await;
    let (_, inside) = f.book(&f.ada, MIG, 1, slot(8), slot(10)).await;
    let (_, before) = f.book(&f.ada, MIG, 1, slot(2), slot(6)).await;
    let path = format!("/api/v1/pools/{}/blackouts", f.lab);
    let body = |overlapping: Option<&str>| json!({"kind": MIG, "start": slot(6), "end": slot(12), "reason": "MIG reconfiguration", "overlapping": overlapping});
    let (status, err) = f.call(Method::POST, &path, Some(&f.admin), Some(body(None))).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("blackout_overlaps")), "{err}");
    // Named by who, what and when (in the pool's zone, named), not by id.
    let window = |b: &serde_json::Value| {
        let window = app::model::Window { start: at(&b["start"]), end: at(&b["end"]) };
        format!("{} Europe/Berlin", app::rules::local_time::local_window(window, "Europe/Berlin"))
    };
    let message = err["message"].as_str().unwrap();
    assert!(message.contains(&format!("ada@a.test's MIG 1g.24gb × 1, {}", window(&inside))), "{err}");
    assert!(!message.contains(inside["id"].as_str().unwrap()), "{err}");
    assert!(!message.contains(&window(&before)), "[2,6) touches but does not overlap");
    assert_eq!(f.call(Method::POST, &path, Some(&f.ada), Some(body(Some("cancel")))).await.0, StatusCode::FORBIDDEN);

    let (status, created) = f.call(Method::POST, &path, Some(&f.admin), Some(body(Some("cancel")))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!((created["canceled"].as_bool(), created["overlapping"].as_array().unwrap().len()), (Some(true), 1));
    let (_, canceled) =
        f.call(Method::GET, &format!("/api/v1/bookings/{}", inside["id"].as_str().unwrap()), Some(&f.ada), None).await;
    assert_eq!(canceled["state"], "canceled");
    let reason: String = sqlx::query_scalar("SELECT reason FROM booking_event WHERE to_state = 'canceled'")
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(reason, "maintenance: MIG reconfiguration");

    // Nothing new in its window for that kind; the whole GPU is not affected.
    let (status, err) = f.book(&f.bob, MIG, 1, slot(11), slot(14)).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("blackout")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("MIG reconfiguration"));
    // In the pool's zone, named, not in UTC.
    let closed =
        app::rules::local_time::local_window(app::model::Window { start: slot(6), end: slot(12) }, "Europe/Berlin");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains(&format!("closed for maintenance {closed} (Europe/Berlin)")), "{err}");
    assert!(!message.contains("UTC"), "{err}");
    assert_eq!(f.book(&f.bob, GPU, 1, slot(8), slot(10)).await.0, StatusCode::CREATED);
    let extend = format!("/api/v1/bookings/{}/extend", before["id"].as_str().unwrap());
    let (status, err) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({"end": slot(8)}))).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("blackout")), "{err}");

    // Availability and the calendar show it.
    let availability = format!(
        "/api/v1/pools/{}/availability?kind=nvidia.com%2Fmig-1g.24gb&from={}&to={}",
        f.lab,
        slot(6).to_rfc3339().replace('+', "%2B"),
        slot(12).to_rfc3339().replace('+', "%2B")
    );
    let (status, steps) = f.call(Method::GET, &availability, Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{steps}");
    assert!(steps.as_array().unwrap().iter().all(|s| s["free"] == 0), "{steps}");
    let ada = tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let query = CalendarQuery { pool: Some(f.lab), date: Some(slot(8).date_naive()), days: 1, tz: "UTC".into() };
    let data = calendar::load(&f.db, &ada, &query).await.unwrap();
    let mig = data.kinds.iter().position(|k| k.kind == MIG).unwrap();
    let day = data.days.iter().position(|d| d.date == slot(8).date_naive()).unwrap();
    let i = data.days[day].slots.iter().position(|s| s.start == slot(8)).unwrap();
    assert_eq!(data.cells[day][mig][i].blackout.as_deref(), Some("MIG reconfiguration"));
    assert_eq!(data.cells[day][mig][i].free, 0);

    // Listed for users of the pool; removed, the window books again.
    let (_, listed) = f.call(Method::GET, &path, Some(&f.bob), None).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(at(&listed[0]["start"]), slot(6));
    let id = created["blackout"]["id"].as_str().unwrap();
    assert_eq!(
        f.call(Method::DELETE, &format!("/api/v1/blackouts/{id}"), Some(&f.admin), None).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(f.book(&f.bob, MIG, 1, slot(11), slot(14)).await.0, StatusCode::CREATED);
    let (_, log) = f.call(Method::GET, "/api/v1/audit?action=blackout", Some(&f.admin), None).await;
    let actions: Vec<&str> = log["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["blackout.delete", "blackout.create"]);
}

#[tokio::test]
async fn a_blackout_of_the_whole_pool_can_keep_the_bookings_it_overlaps() {
    let f = Fixture::new().await;
    let (_, kept) = f.book(&f.ada, GPU, 1, slot(8), slot(10)).await;
    let path = format!("/api/v1/pools/{}/blackouts", f.lab);
    let body = json!({"start": slot(4), "end": slot(12), "reason": "rack move", "overlapping": "keep"});
    let (status, created) = f.call(Method::POST, &path, Some(&f.admin), Some(body)).await;
    assert_eq!((status, created["canceled"].as_bool()), (StatusCode::CREATED, Some(false)), "{created}");
    let (_, still) =
        f.call(Method::GET, &format!("/api/v1/bookings/{}", kept["id"].as_str().unwrap()), Some(&f.ada), None).await;
    assert_eq!(still["state"], "approved");
    for kind in [GPU, MIG] {
        let (status, err) = f.book(&f.bob, kind, 1, slot(4), slot(5)).await;
        assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("blackout")), "{kind}: {err}");
    }
    let bad = [
        (json!({"start": slot(4), "end": slot(2), "reason": "x"}), "end"),
        (json!({"start": slot(4), "end": slot(6), "reason": " "}), "reason"),
        (json!({"kind": "nvidia.com/mig-7g.96gb", "start": slot(4), "end": slot(6), "reason": "x"}), "kind"),
    ];
    for (body, field) in bad {
        let (status, err) = f.call(Method::POST, &path, Some(&f.admin), Some(body)).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(field)), "{err}");
    }
}

#[tokio::test]
async fn a_maintenance_window_that_has_already_ended_is_refused() {
    let f = Fixture::new().await;
    let path = format!("/api/v1/pools/{}/blackouts", f.lab);
    let past = json!({"start": slot(-12), "end": slot(-4), "reason": "forgot to log it"});
    let (status, err) = f.call(Method::POST, &path, Some(&f.admin), Some(past)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("has passed"), "{err}");
    // One that is under way still counts: it ends in the future.
    let now = json!({"start": slot(-2), "end": slot(2), "reason": "rack power work"});
    let (status, created) = f.call(Method::POST, &path, Some(&f.admin), Some(now)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
}

/// A booking kept inside maintenance warns its owner: on its card (My
/// bookings and its own page, in the reader's zone) and by mail, once.
#[tokio::test]
async fn a_booking_kept_inside_maintenance_warns_its_owner_on_the_card_and_by_mail() {
    let f = Fixture::new().await;
    let (_, kept) = f.book(&f.ada, GPU, 1, slot(8), slot(10)).await;
    let (_, apart) = f.book(&f.ada, GPU, 1, slot(14), slot(16)).await;
    let path = format!("/api/v1/pools/{}/blackouts", f.lab);
    let body = json!({"start": slot(9), "end": slot(12), "reason": "rack move", "overlapping": "keep"});
    assert_eq!(f.call(Method::POST, &path, Some(&f.admin), Some(body)).await.0, StatusCode::CREATED);

    let ada = tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let page = app::backend::bookings::mine::load(&f.db, &ada, "Europe/Berlin").await.unwrap();
    let card = |id: &serde_json::Value| {
        page.upcoming.iter().find(|c| c.booking.id.to_string() == id.as_str().unwrap()).cloned().unwrap()
    };
    let when =
        app::rules::local_time::local_window(app::model::Window { start: slot(9), end: slot(12) }, "Europe/Berlin");
    let note = card(&kept["id"]).maintenance.expect("the kept booking's card warns");
    assert!(note.contains(&format!("Maintenance on this pool {when} (rack move) overlaps this booking")), "{note}");
    assert_eq!(card(&apart["id"]).maintenance, None, "a booking outside it is not warned");
    let id: uuid::Uuid = kept["id"].as_str().unwrap().parse().unwrap();
    let one = app::backend::bookings::mine::one(&f.db, &ada, id, "Europe/Berlin").await.unwrap();
    assert_eq!(one.upcoming[0].maintenance.as_deref(), Some(note.as_str()), "its own page says the same");

    server::notify::outbox::fan_out(&f.db, true).await.unwrap();
    let due = server::notify::outbox::claim(&f.db, 100).await.unwrap();
    let mails: Vec<_> = due.iter().filter(|d| d.event == "booking.maintenance" && d.channel == "email").collect();
    assert_eq!(mails.len(), 1, "the owner, once: {due:?}");
    assert_eq!(mails[0].booking_id, id);
    let message = server::notify::message::render("https://berth.example.org", mails[0], false);
    assert_eq!(message.subject, "Maintenance during your booking: lab-h100");
    assert!(message.text.contains("(rack move) overlaps this booking. It is kept"), "{}", message.text);
}
