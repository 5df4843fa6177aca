//! Recurring bookings through the REST API: the preview says which
//! occurrences fit and why the others would be refused, writing nothing;
//! booking takes the chosen ones all or none; one occurrence or the rest of
//! the series is canceled; a series racing single bookings never overbooks.

use crate::common;

use axum::http::Method;
use chrono::{DateTime, Duration, Utc};
use common::{at, call, slot, Fixture, MIG};
use serde_json::{json, Value};
use uuid::Uuid;

/// Daily in UTC from the window `slot(from)..slot(to)`, `days` occurrences.
fn daily(f: &Fixture, from: i64, to: i64, days: i64, quantity: i32) -> Value {
    json!({
        "pool_id": f.lab, "kind": MIG, "quantity": quantity, "start": slot(from), "end": slot(to),
        "mode": "interactive", "repeat": "daily", "time_zone": "UTC",
        "until": (slot(from) + Duration::days(days - 1)).date_naive(),
    })
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

fn day(k: i64) -> DateTime<Utc> {
    slot(8) + Duration::days(k)
}

async fn bookings_of(f: &Fixture, email: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM booking b JOIN app_user u ON u.id = b.user_id WHERE u.email = $1")
        .bind(email)
        .fetch_one(&f.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_preview_never_waits_for_the_kinds_lock_nor_holds_it() {
    let f = Fixture::new().await;
    // A booking of the same kind is being admitted: its transaction holds the kind's lock.
    let held = app::backend::admission::locks::begin_locked(&f.db, f.lab, MIG).await.unwrap();
    let series = daily(&f, 8, 16, 5, 1);
    let preview = f.call(Method::POST, "/api/v1/series/preview", Some(&f.ada), Some(series));
    let (status, plan) = tokio::time::timeout(std::time::Duration::from_secs(10), preview)
        .await
        .expect("the preview waited for the kind's lock");
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["occurrences"].as_array().unwrap().len(), 5);
    held.rollback().await.unwrap();
}

#[tokio::test]
async fn a_preview_shows_what_fits_and_booking_takes_the_chosen_occurrences_all_or_none() {
    let f = Fixture::new().await;
    // Day 2 is full (carol holds every slice); day 4 is closed for maintenance.
    let (status, full) = f.book(&f.carol, MIG, 4, day(2), day(2) + Duration::hours(2)).await;
    assert_eq!(status, 201, "{full}");
    let blackout = json!({ "start": day(4), "end": day(4) + Duration::hours(2), "reason": "firmware" });
    let path = format!("/api/v1/pools/{}/blackouts", f.lab);
    assert_eq!(f.call(Method::POST, &path, Some(&f.admin), Some(blackout)).await.0, 201);

    let series = daily(&f, 8, 16, 5, 1);
    let (status, plan) = f.call(Method::POST, "/api/v1/series/preview", Some(&f.ada), Some(series.clone())).await;
    assert_eq!(status, 200, "{plan}");
    let until = day(4).format("%a %d %b %Y");
    assert_eq!(
        plan["rule"].as_str().unwrap(),
        format!("daily until {until}, {}–{} UTC", day(0).format("%H:%M"), slot(16).format("%H:%M"))
    );
    let occurrences = plan["occurrences"].as_array().unwrap();
    let starts: Vec<DateTime<Utc>> = occurrences.iter().map(|o| at(&o["start"])).collect();
    assert_eq!(starts, (0..5).map(day).collect::<Vec<_>>());
    let fits: Vec<bool> = occurrences.iter().map(|o| o["fits"].as_bool().unwrap()).collect();
    assert_eq!(fits, [true, true, false, true, false]);
    assert_eq!(
        occurrences[2]["refusal"],
        "not enough free capacity: 4 of 4 units are already booked at the busiest moment of this window"
    );
    assert!(occurrences[4]["refusal"].as_str().unwrap().contains("firmware"), "{}", occurrences[4]);
    assert_eq!(bookings_of(&f, "ada@a.test").await, 0, "a preview writes nothing");

    // Choosing a refused occurrence books none of them.
    let chosen = with(series.clone(), "occurrences", json!([day(0), day(2)]));
    let (status, err) = f.call(Method::POST, "/api/v1/series", Some(&f.ada), Some(chosen)).await;
    assert_eq!(
        (status.as_u16(), err["error"].as_str(), err["field"].as_str()),
        (409, Some("series_refused"), Some("occurrences")),
        "{err}"
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("not every chosen occurrence fits any more, so nothing was booked"),
        "{err}"
    );
    assert_eq!(bookings_of(&f, "ada@a.test").await, 0, "nothing half-written");

    let chosen = with(series.clone(), "occurrences", json!([day(0), day(1), day(3)]));
    let (status, booked) = f.call(Method::POST, "/api/v1/series", Some(&f.ada), Some(chosen)).await;
    assert_eq!(status, 201, "{booked}");
    let id = booked["id"].as_str().unwrap().to_string();
    let ids: Vec<String> =
        booked["bookings"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 3);
    let (_, one) = f.call(Method::GET, &format!("/api/v1/bookings/{}", ids[1]), Some(&f.ada), None).await;
    assert_eq!((one["series"].as_str(), at(&one["start"])), (Some(id.as_str()), day(1)), "{one}");

    // One occurrence is canceled like any booking; the rest of the series at once.
    let cancel = format!("/api/v1/bookings/{}/cancel", ids[1]);
    assert_eq!(f.call(Method::POST, &cancel, Some(&f.ada), Some(json!({}))).await.0, 200);
    let rest = format!("/api/v1/series/{id}/cancel");
    assert_eq!(f.call(Method::POST, &rest, Some(&f.mia), Some(json!({}))).await.0, 403, "a teammate may not");
    assert_eq!(
        f.call(Method::POST, &rest, Some(&f.bob), Some(json!({}))).await.0,
        404,
        "another tenant does not see it"
    );
    let (status, canceled) = f.call(Method::POST, &rest, Some(&f.ada), Some(json!({ "from": day(1) }))).await;
    assert_eq!(status, 200, "{canceled}");
    let canceled: Vec<&str> = canceled.as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(canceled, [ids[2].as_str()], "from day 1 on: day 3 (day 1 is canceled already)");
    let states: Vec<String> =
        sqlx::query_scalar("SELECT state FROM booking WHERE series_id = $1::uuid ORDER BY starts_at")
            .bind(&id)
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert_eq!(states, ["approved", "canceled", "canceled"]);
    let (_, canceled) = f.call(Method::POST, &rest, Some(&f.ada), Some(json!({}))).await;
    assert_eq!(canceled.as_array().unwrap().len(), 1, "then the rest: day 0");

    // Without a choice, every occurrence that fits now is booked.
    let (status, booked) = f.call(Method::POST, "/api/v1/series", Some(&f.ada), Some(series.clone())).await;
    assert_eq!(status, 201, "{booked}");
    assert_eq!((booked["bookings"].as_array().unwrap().len(), booked["left_out"].as_array().unwrap().len()), (3, 2));
    let audit: Vec<String> =
        sqlx::query_scalar("SELECT action FROM audit_event WHERE action LIKE 'booking.series%' ORDER BY at, id")
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert_eq!(audit, ["booking.series", "booking.series_cancel", "booking.series_cancel", "booking.series"]);
}

#[tokio::test]
async fn bad_series_are_refused_naming_the_field() {
    let f = Fixture::new().await;
    let series = daily(&f, 8, 16, 3, 1);
    let cases = [
        (with(series.clone(), "until", json!((Utc::now() + Duration::days(60)).date_naive())), "until"),
        (with(series.clone(), "until", json!((slot(8) - Duration::days(1)).date_naive())), "until"),
        (with(with(series.clone(), "repeat", json!("weekly")), "weekdays", json!(["mon", "someday"])), "weekdays"),
        (with(series.clone(), "time_zone", json!("Mars/Olympus")), "time_zone"),
        (with(series.clone(), "end", json!(slot(8) + Duration::hours(25))), "end"),
        (with(series.clone(), "occurrences", json!([slot(9)])), "occurrences"),
        (with(series.clone(), "pool_id", json!(Uuid::new_v4())), "pool_id"),
    ];
    for (body, field) in cases {
        let path = if field == "occurrences" { "/api/v1/series" } else { "/api/v1/series/preview" };
        let (status, err) = f.call(Method::POST, path, Some(&f.ada), Some(body)).await;
        assert_eq!((status.as_u16(), err["field"].as_str()), (422, Some(field)), "{err}");
    }
    assert_eq!(bookings_of(&f, "ada@a.test").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn series_racing_single_bookings_never_overbook_and_each_series_is_all_or_nothing() {
    let f = Fixture::new().await;
    let mut racers = Vec::new();
    // Eight series of two slices on five days, chosen whole, against 32
    // single bookings of one slice on those days: four slices a window.
    for n in 0..8 {
        let body = with(daily(&f, 8, 16, 5, 2), "note", json!(format!("series {n}")));
        let body = with(body, "occurrences", json!((0..5).map(day).collect::<Vec<_>>()));
        let (app, token) = (f.app.clone(), if n % 2 == 0 { f.ada.clone() } else { f.carol.clone() });
        racers.push(tokio::spawn(async move {
            call(&app, Method::POST, "/api/v1/series", Some(&token), Some(body)).await.0
        }));
    }
    for n in 0..32 {
        let body = json!({
            "pool_id": f.lab, "kind": MIG, "quantity": 1, "start": day(n % 5), "end": day(n % 5) + Duration::hours(1),
            "mode": "interactive", "note": format!("single {n}"),
        });
        let (app, token) = (f.app.clone(), f.bob.clone());
        racers.push(tokio::spawn(async move {
            call(&app, Method::POST, "/api/v1/bookings", Some(&token), Some(body)).await.0
        }));
    }
    let mut answers = Vec::new();
    for racer in racers {
        answers.push(racer.await.unwrap().as_u16());
    }
    assert!(answers.iter().all(|s| [201, 409].contains(s)), "{answers:?}");
    // Who wins depends on scheduling; that the demand really contended does
    // not: each day asks for far more than 4 slices, so whichever side won,
    // every day's first hour ends exactly full.
    for k in 0..5 {
        let used: i64 = sqlx::query_scalar(
            "SELECT coalesce(sum(quantity), 0) FROM booking
             WHERE state IN ('pending', 'approved', 'active') AND starts_at <= $1 AND ends_at > $1",
        )
        .bind(day(k))
        .fetch_one(&f.db)
        .await
        .unwrap();
        assert_eq!(used, 4, "day {k} after the race: {answers:?}");
    }

    let violations: Vec<(Uuid, String, DateTime<Utc>, i64, i32)> =
        sqlx::query_as(include_str!("../sql/capacity-sweep.sql")).fetch_all(&f.db).await.unwrap();
    assert!(violations.is_empty(), "overbooked instants: {violations:?}");
    let per_series: Vec<i64> = sqlx::query_scalar(
        "SELECT count(b.id) FROM booking_series s LEFT JOIN booking b ON b.series_id = s.id GROUP BY s.id",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    assert_eq!(per_series.len(), answers[..8].iter().filter(|s| **s == 201).count(), "one series row per 201");
    assert!(per_series.iter().all(|n| *n == 5), "every booked series holds all five days: {per_series:?}");
    let stray: i64 = sqlx::query_scalar("SELECT count(*) FROM booking WHERE note LIKE 'series%' AND series_id IS NULL")
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(stray, 0, "a refused series leaves no occurrence behind");
}

/// Previewed again once booked, a series shows its occurrences as already
/// the booker's (the page then offers none of them again); someone else's
/// preview of the same plan holds none.
#[tokio::test]
async fn previewing_a_booked_series_again_shows_what_is_already_held() {
    let f = Fixture::new().await;
    let body = daily(&f, 8, 10, 3, 1);
    let (status, booked) = f.call(Method::POST, "/api/v1/series", Some(&f.ada), Some(body.clone())).await;
    assert_eq!(status, 201, "{booked}");
    let (status, plan) = f.call(Method::POST, "/api/v1/series/preview", Some(&f.ada), Some(body.clone())).await;
    assert_eq!(status, 200, "{plan}");
    let occurrences = plan["occurrences"].as_array().unwrap();
    assert_eq!(occurrences.len(), 3);
    assert!(occurrences.iter().all(|o| o["held"] == true), "{plan}");
    let (_, theirs) = f.call(Method::POST, "/api/v1/series/preview", Some(&f.bob), Some(body.clone())).await;
    assert!(theirs["occurrences"].as_array().unwrap().iter().all(|o| o["held"] == false), "{theirs}");
}
