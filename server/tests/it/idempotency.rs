//! A repeated submit books once: the booking forms carry an idempotency key
//! (posted as a plain form, as a browser without JavaScript does), and the
//! REST API honours an `Idempotency-Key` header the same way.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::{raw, slot, Fixture, MIG};
use serde_json::{json, Value};

async fn post(f: &Fixture, path: &str, key: Option<&str>, body: Value) -> (StatusCode, Value) {
    let mut request = Request::post(path)
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    raw(&f.app, request.body(Body::from(body.to_string())).unwrap()).await
}

async fn form(f: &Fixture, path: &str, body: String) -> (StatusCode, Value) {
    let request = Request::post(path)
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap();
    raw(&f.app, request).await
}

async fn bookings_of_ada(f: &Fixture) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM booking b JOIN app_user u ON u.id = b.user_id
         WHERE u.email = 'ada@a.test' AND b.state IN ('pending', 'approved', 'active')",
    )
    .fetch_one(&f.db)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_api_books_once_per_idempotency_key() {
    let f = Fixture::new().await;
    let body =
        json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(8), "end": slot(12), "mode": "interactive"});
    let before = bookings_of_ada(&f).await;
    let (status, first) = post(&f, "/api/v1/bookings", Some("retry-1"), body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, again) = post(&f, "/api/v1/bookings", Some("retry-1"), body.clone()).await;
    assert_eq!((status, &again), (StatusCode::CREATED, &first), "the repeat gets the first answer");
    assert_eq!(bookings_of_ada(&f).await, before + 1);

    let other =
        json!({"pool_id": f.lab, "kind": MIG, "quantity": 2, "start": slot(8), "end": slot(12), "mode": "interactive"});
    let (status, err) = post(&f, "/api/v1/bookings", Some("retry-1"), other).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("idempotency_key_reused")), "{err}");
    let (status, _) = post(&f, "/api/v1/bookings", None, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "without a key every request acts");
    assert_eq!(bookings_of_ada(&f).await, before + 2);
    let long = "k".repeat(256);
    let (status, err) = post(&f, "/api/v1/bookings", Some(&long), body).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("Idempotency-Key")), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_series_posted_twice_as_a_form_books_once() {
    let f = Fixture::new().await;
    let day = (slot(0) + chrono::Duration::days(3)).date_naive();
    let until = day + chrono::Duration::days(1);
    let starts = [day, until].map(|d| format!("{d}T03%3A00%3A00%2B00%3A00"));
    let fields = format!(
        "pool={}%7Cnvidia.com%2Fmig-1g.24gb&quantity=1&mode=inference&date={day}&from=03%3A00&to=04%3A00&repeat=daily&until={until}&tz=UTC&occurrences%5B%5D={}&occurrences%5B%5D={}&idempotency_key=series-1",
        f.lab, starts[0], starts[1]
    );
    let before = bookings_of_ada(&f).await;
    let (status, first) = form(&f, "/rpc/series/book", fields.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["ok"], true, "{first}");
    let (status, again) = form(&f, "/rpc/series/book", fields).await;
    assert_eq!((status, &again), (StatusCode::OK, &first));
    assert_eq!(bookings_of_ada(&f).await, before + 2, "two occurrences, booked once");

    // The calendar's form the same way.
    let booking = format!(
        "pool_id={}&kind=nvidia.com%2Fmig-1g.24gb&quantity=1&start={}&end={}&tz=UTC&mode=interactive&idempotency_key=form-1",
        f.lab,
        slot(20).format("%Y-%m-%dT%H:%M"),
        slot(24).format("%Y-%m-%dT%H:%M"),
    );
    let (status, first) = form(&f, "/rpc/book", booking.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, again) = form(&f, "/rpc/book", booking).await;
    assert_eq!(again, first);
    assert_eq!(bookings_of_ada(&f).await, before + 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_clicks_in_the_same_instant_book_once_and_each_gets_the_booking() {
    let f = Fixture::new().await;
    let before = bookings_of_ada(&f).await;
    // The calendar's form, submitted three times at once with its one key.
    let booking = format!(
        "pool_id={}&kind=nvidia.com%2Fmig-1g.24gb&quantity=1&start={}&end={}&tz=UTC&mode=interactive&idempotency_key=click",
        f.lab,
        slot(30).format("%Y-%m-%dT%H:%M"),
        slot(34).format("%Y-%m-%dT%H:%M"),
    );
    let (a, b, c) = tokio::join!(
        form(&f, "/rpc/book", booking.clone()),
        form(&f, "/rpc/book", booking.clone()),
        form(&f, "/rpc/book", booking)
    );
    for (status, answer) in [&a, &b, &c] {
        assert_eq!(*status, StatusCode::OK, "{answer}");
        assert_eq!(answer, &a.1, "every click is answered with the one booking");
    }
    assert_eq!(bookings_of_ada(&f).await, before + 1, "three clicks, one booking");

    // The REST API the same way, eight requests at once.
    let body = json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(40), "end": slot(44), "mode": "interactive"});
    let answers =
        futures::future::join_all((0..8).map(|_| post(&f, "/api/v1/bookings", Some("burst"), body.clone()))).await;
    for (status, answer) in &answers {
        assert_eq!((*status, answer), (StatusCode::CREATED, &answers[0].1));
    }
    assert_eq!(bookings_of_ada(&f).await, before + 2);
}
