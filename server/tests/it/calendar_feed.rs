//! Calendar feeds (ICS), parsed by PyPI `icalendar` as a calendar client
//! would: every RFC 5545 field Berth promises, across a change and a
//! cancel; regenerate kills the old URL; pool occupancy feeds for admins only.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{at, slot, Fixture, MIG};
use serde_json::{json, Value};

/// The feed's path (the URL's host is the public URL's), fetched anonymously.
async fn fetch(f: &Fixture, url: &str) -> (StatusCode, String) {
    let path = url.strip_prefix("http://127.0.0.1:3000").unwrap_or_else(|| panic!("not under the public URL: {url}"));
    let (status, body) = f.call(Method::GET, path, None, None).await;
    (status, body.as_str().map(str::to_owned).unwrap_or_else(|| body.to_string()))
}

/// What PyPI icalendar reads from the feed (see tests/ics/parse_feed.py).
fn parsed(ics: &str) -> Value {
    common::python_json("ics/parse_feed.py", ics.as_bytes(), &format!("icalendar refused the feed\n{ics}"))
}

fn event<'a>(feed: &'a Value, booking: &str) -> &'a Value {
    feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uid"] == format!("{booking}@127.0.0.1"))
        .unwrap_or_else(|| panic!("no event for {booking} in {feed}"))
}

fn utc(value: &Value) -> chrono::DateTime<chrono::Utc> {
    assert_eq!(value["utc"], true, "{value}");
    value["iso"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_users_feed_follows_changes_and_cancels_and_regenerating_kills_the_old_url() {
    let f = Fixture::new().await;
    let (status, mine) = f.book(&f.ada, MIG, 2, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::CREATED, "{mine}");
    let id = mine["id"].as_str().unwrap().to_string();
    let (status, theirs) = f.book(&f.bob, MIG, 1, slot(4), slot(6)).await;
    assert_eq!(status, StatusCode::CREATED, "{theirs}");

    let (status, feed) = f.call(Method::GET, "/api/v1/me/calendar-feed", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{feed}");
    let url = feed["url"].as_str().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:3000/api/v1/calendar-feeds/bcal_") && url.ends_with(".ics"), "{url}");
    assert_eq!(feed["pools"], json!([]), "users get no occupancy feeds");
    let (_, again) = f.call(Method::GET, "/api/v1/me/calendar-feed", Some(&f.ada), None).await;
    assert_eq!(again["url"], url.as_str(), "the URL is stable until regenerated");
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM calendar_feed").fetch_one(&f.db).await.unwrap();
    let token = url.rsplit('/').next().unwrap().trim_end_matches(".ics");
    assert!(!stored.windows(token.len()).any(|w| w == token.as_bytes()) && stored.len() == 32, "only a hash is kept");

    let (status, ics) = fetch(&f, &url).await;
    assert_eq!(status, StatusCode::OK, "{ics}");
    let cal = parsed(&ics);
    assert_eq!((cal["version"].as_str(), cal["method"].as_str()), (Some("2.0"), None), "{cal}");
    assert_eq!(cal["prodid"], "-//Berth//GPU bookings//EN");
    assert_eq!(ics.matches("\r\nPRODID:").count() + ics.matches("\r\nVERSION:").count(), 2, "once each:\n{ics}");
    assert_eq!((cal["refresh_interval"].as_str(), cal["refresh_value"].as_str()), (Some("PT15M"), Some("DURATION")));
    assert_eq!(cal["published_ttl"], "PT15M");
    assert_eq!(cal["events"].as_array().unwrap().len(), 1, "only her own bookings: {cal}");
    let e = event(&cal, &id);
    assert_eq!((utc(&e["dtstart"]), utc(&e["dtend"])), (slot(4), slot(8)));
    utc(&e["dtstamp"]);
    let first_sequence = e["sequence"].as_i64().unwrap();
    let expected_status = if mine["state"] == "pending" { "TENTATIVE" } else { "CONFIRMED" };
    assert_eq!(e["status"], expected_status, "{mine}");
    assert_eq!(e["summary"], format!("GPU: {} MIG 1g.24gb ×2", server::seed::DEMO_POOL), "{e}");
    assert_eq!(e["description"], format!("http://127.0.0.1:3000/bookings#booking-{id}"));

    // A change of window: the same UID, a higher SEQUENCE, the new end.
    let (status, extended) = f
        .call(Method::POST, &format!("/api/v1/bookings/{id}/extend"), Some(&f.ada), Some(json!({"end": slot(10)})))
        .await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    let cal = parsed(&fetch(&f, &url).await.1);
    let e = event(&cal, &id);
    assert_eq!(utc(&e["dtend"]), at(&extended["end"]), "{extended}");
    let changed_sequence = e["sequence"].as_i64().unwrap();
    assert!(changed_sequence > first_sequence, "{first_sequence} -> {changed_sequence}");

    // A cancel: CANCELLED, and the sequence grows again.
    let (status, canceled) =
        f.call(Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&f.ada), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{canceled}");
    let cal = parsed(&fetch(&f, &url).await.1);
    let e = event(&cal, &id);
    assert_eq!(e["status"], "CANCELLED");
    assert!(e["sequence"].as_i64().unwrap() > changed_sequence);

    // Regenerate: a new URL works, the old one is dead.
    let (status, fresh) = f.call(Method::POST, "/api/v1/me/calendar-feed", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{fresh}");
    let new_url = fresh["url"].as_str().unwrap();
    assert_ne!(new_url, url);
    assert_eq!(fetch(&f, &url).await.0, StatusCode::NOT_FOUND);
    assert_eq!(fetch(&f, new_url).await.0, StatusCode::OK);
    let audited: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_event WHERE action = 'calendar_feed.regenerate'")
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(audited, 1);
}

#[tokio::test]
async fn a_feed_writes_utc_times_and_names_its_owners_zone() {
    let f = Fixture::new().await;
    let (status, mine) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::CREATED, "{mine}");
    let id = mine["id"].as_str().unwrap().to_string();
    let zone = json!({ "time_zone": "Asia/Kolkata" });
    let (status, chosen) = f.call(Method::PUT, "/api/v1/me/time-zone", Some(&f.ada), Some(zone)).await;
    assert_eq!((status, chosen), (StatusCode::OK, json!({ "time_zone": "Asia/Kolkata" })));
    let (status, refused) =
        f.call(Method::PUT, "/api/v1/me/time-zone", Some(&f.ada), Some(json!({ "time_zone": "Mars/Olympus" }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["field"], "time_zone", "{refused}");

    let (_, feed) = f.call(Method::GET, "/api/v1/me/calendar-feed", Some(&f.ada), None).await;
    let raw = fetch(&f, feed["url"].as_str().unwrap()).await.1;
    let cal = parsed(&raw);
    assert_eq!(cal["time_zone"], "Asia/Kolkata", "the owner's zone, as a display hint: {cal}");
    // No TZID without its VTIMEZONE (RFC 5545): the times are UTC, which
    // every client shows in its own reader's zone at the right hour.
    assert!(!raw.contains("TZID="), "{raw}");
    let e = event(&cal, &id);
    assert_eq!((e["dtstart"]["utc"].as_bool(), e["dtend"]["utc"].as_bool()), (Some(true), Some(true)), "{e}");
    let start: chrono::DateTime<chrono::FixedOffset> = e["dtstart"]["iso"].as_str().unwrap().parse().unwrap();
    assert_eq!(start, slot(4));
}

#[tokio::test]
async fn admins_subscribe_to_pool_occupancy_and_nobody_else_can() {
    let f = Fixture::new().await;
    let (_, mine) = f.book(&f.ada, MIG, 1, slot(4), slot(6)).await;
    let (_, theirs) = f.book(&f.bob, MIG, 1, slot(6), slot(8)).await;
    let (status, feed) = f.call(Method::GET, "/api/v1/me/calendar-feed", Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK, "{feed}");
    let lab = feed["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["url"].as_str().unwrap().ends_with(&format!("?pool={}", f.lab)))
        .unwrap_or_else(|| panic!("no feed for the demo pool: {feed}"));
    let cal = parsed(&fetch(&f, lab["url"].as_str().unwrap()).await.1);
    for (booking, owner) in [(&mine, "ada@a.test"), (&theirs, "bob@b.test")] {
        let e = event(&cal, booking["id"].as_str().unwrap());
        assert!(e["summary"].as_str().unwrap().ends_with(&format!("({owner})")), "{e}");
    }

    // A user's secret does not open a pool, and a bad pool is named.
    let (_, ada) = f.call(Method::GET, "/api/v1/me/calendar-feed", Some(&f.ada), None).await;
    let ada_url = ada["url"].as_str().unwrap();
    assert_eq!(fetch(&f, &format!("{ada_url}?pool={}", f.lab)).await.0, StatusCode::NOT_FOUND);
    let (status, body) = fetch(&f, &format!("{ada_url}?pool=nope")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("pool"), "{body}");

    // A disabled admin's feeds stop.
    sqlx::query("UPDATE app_user SET disabled_at = now() WHERE email = 'root@ops.test'").execute(&f.db).await.unwrap();
    assert_eq!(fetch(&f, lab["url"].as_str().unwrap()).await.0, StatusCode::NOT_FOUND);
}
