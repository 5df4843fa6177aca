//! What open pages poll (`/rpc/live`): the stamp moves when something the
//! viewer's pages show changes — their bookings' states, another person's
//! decision on them, the requests awaiting an admin — and not when another
//! tenant books, so a quiet page refetches nothing and learns nothing of
//! other people's bookings.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::{raw, slot, Fixture, MIG};
use serde_json::json;

async fn stamp(f: &Fixture, token: &str) -> String {
    let request = Request::post("/rpc/live")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::empty())
        .unwrap();
    let (status, body) = raw(&f.app, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_str().unwrap_or_else(|| panic!("a stamp is a string: {body}")).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stamp_moves_with_the_viewers_bookings_and_not_with_other_tenants() {
    let f = Fixture::new().await;
    let (ada, bob, admin) = (stamp(&f, &f.ada).await, stamp(&f, &f.bob).await, stamp(&f, &f.admin).await);
    assert_eq!(stamp(&f, &f.ada).await, ada, "nothing changed, nothing moves");

    let (status, booked) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");
    let ada_after_booking = stamp(&f, &f.ada).await;
    assert_ne!(ada_after_booking, ada, "her own booking moves her stamp");
    assert_eq!(stamp(&f, &f.bob).await, bob, "another tenant's booking does not move bob's");

    let id = booked["id"].as_str().unwrap();
    let (status, _) =
        f.call(Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&f.admin), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(stamp(&f, &f.ada).await, ada_after_booking, "an admin's cancel of her booking moves it");

    // A pool that needs approval: a request moves the admins' stamp (their badge).
    let (status, pool) = f
        .call(
            Method::POST,
            "/api/v1/pools",
            Some(&f.admin),
            Some(json!({"name": "approve-me", "requires_approval": true, "kinds": [{"kind": "nvidia.com/gpu", "capacity": 1}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    let admin_before = stamp(&f, &f.admin).await;
    assert_eq!(admin_before, admin, "ada's own booking is not on the admin's pages that follow changes");
    let body = json!({"pool_id": pool["id"], "kind": "nvidia.com/gpu", "quantity": 1, "start": slot(20), "end": slot(24), "mode": "interactive"});
    let (status, pending) = f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(body)).await;
    assert_eq!((status, pending["state"].as_str()), (StatusCode::CREATED, Some("pending")), "{pending}");
    assert_ne!(stamp(&f, &f.admin).await, admin_before, "a request awaiting a decision moves the admins' stamp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visitors_get_no_stamp() {
    let f = Fixture::new().await;
    let request = Request::post("/rpc/live")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::empty())
        .unwrap();
    assert_eq!(raw(&f.app, request).await.0, StatusCode::UNAUTHORIZED);
}

async fn page(f: &Fixture, path: &str, token: &str) -> String {
    let request =
        Request::get(path).header(header::AUTHORIZATION, format!("Bearer {token}")).body(Body::empty()).unwrap();
    let (status, body) = raw(&f.app, request).await;
    assert_eq!(status, StatusCode::OK, "{path}");
    body.as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_withdrawn_before_its_window_is_not_said_to_be_torn_down_and_its_manifests_explain_themselves() {
    let f = Fixture::new().await;
    let (status, booked) = f.book(&f.ada, MIG, 1, slot(40), slot(44)).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");
    let id = booked["id"].as_str().unwrap();
    // Its manifests say what they are, and why a unit can read as 2.
    let manifests = page(&f, &format!("/bookings/{id}/manifests"), &f.ada).await;
    assert!(manifests.contains("shown as JSON") && !manifests.contains("YAML"), "{manifests}");
    assert!(manifests.contains("time-slice replicas per unit"), "the quota's replicas are explained");
    let (status, _) =
        f.call(Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&f.ada), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let html = page(&f, "/bookings?tz=UTC", &f.ada).await;
    let card = html.split(&format!("id=\"booking-{id}\"")).nth(1).expect("the canceled booking has a card");
    let card = card.split("</article>").next().unwrap_or_default();
    assert!(card.contains("Canceled before its window started"), "{card}");
    assert!(!card.contains("torn down"), "{card}");
    assert!(html.contains("Ended, canceled or rejected"), "the section says what it holds");
}

/// The key is a line of swatches, not a paragraph (issue 61): short
/// names for what the shades and blocks mean, how to book folded under.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calendar_key_names_shades_and_blocks_in_a_line() {
    let f = Fixture::new().await;
    let html = page(&f, &format!("/calendar?pool={}&tz=UTC", f.lab), &f.ada).await;
    let key = html.split("class=\"key\"").nth(1).expect("a key").split("</ul>").next().unwrap_or_default();
    for name in ["Free", "Almost full", "Full", "Yours", "Others'", "Waiting for approval", "Maintenance", "Now"] {
        assert!(key.contains(&format!(">{name}<")), "{name}: {key}");
    }
    let words = key.split('<').filter_map(|t| t.split('>').nth(1)).collect::<String>();
    assert!(words.split_whitespace().count() <= 25, "a key, not a paragraph: {words}");
    assert!(html.contains("<summary>How to book here</summary>"), "how to book, folded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calendar_without_a_pool_opens_the_one_shown_last() {
    let f = Fixture::new().await;
    let (status, other) = f
        .call(
            Method::POST,
            "/api/v1/pools",
            Some(&f.admin),
            Some(json!({"name": "aaa-first-by-name", "kinds": [{"kind": "nvidia.com/gpu", "capacity": 1}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{other}");
    let shown =
        |html: &str| html.split("<h1>").nth(1).and_then(|h| h.split('<').next()).unwrap_or_default().to_string();
    let get = |path: String, cookie: Option<String>| {
        let mut request = Request::get(path).header(header::AUTHORIZATION, format!("Bearer {}", f.ada));
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.body(Body::empty()).unwrap()
    };
    let response =
        tower::ServiceExt::oneshot(f.app.clone(), get(format!("/calendar?pool={}&tz=UTC", f.lab), None)).await.unwrap();
    let cookie = response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("berth_pool="))
        .map(|c| c.split(';').next().unwrap().to_string())
        .expect("the calendar remembers the pool it showed");
    assert_eq!(cookie, format!("berth_pool={}", f.lab));

    let (_, first) = raw(&f.app, get("/calendar?tz=UTC".into(), None)).await;
    assert_eq!(shown(first.as_str().unwrap()), "aaa-first-by-name", "nothing remembered: the first pool");
    let (_, again) = raw(&f.app, get("/calendar?tz=UTC".into(), Some(cookie))).await;
    assert_ne!(shown(again.as_str().unwrap()), "aaa-first-by-name", "the pool shown last");
    let gone = format!("berth_pool={}", uuid::Uuid::new_v4());
    let (status, _) = raw(&f.app, get("/calendar?tz=UTC".into(), Some(gone))).await;
    assert_eq!(status, StatusCode::OK, "a remembered pool that is gone is forgotten");
}

/// Many people opening the calendar at the same moment each get the whole
/// page with its title. leptos writes `<head>` (the title comes from the
/// router's location) outside the request's reactive arena: with another
/// render between on that thread, the location read as disposed, the render
/// panicked and that page never ended (32 renders at once found it in the
/// first round). `render_owner` keeps the request's owner current there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calendars_rendered_at_once_each_arrive_whole_with_their_title() {
    let f = Fixture::new().await;
    let path = format!("/calendar?pool={}&tz=UTC", f.lab);
    for _round in 0..4 {
        let mut renders = tokio::task::JoinSet::new();
        for _ in 0..32 {
            let (app, token, path) = (f.app.clone(), f.ada.clone(), path.clone());
            renders.spawn(async move {
                let request = Request::get(&path)
                    .header(header::AUTHORIZATION, format!("Bearer {token}"))
                    .body(Body::empty())
                    .unwrap();
                raw(&app, request).await
            });
        }
        while let Some(render) = renders.join_next().await {
            let (status, body) = render.expect("the page arrived whole, within the limit, with no panic");
            assert_eq!(status, StatusCode::OK);
            let html = body.as_str().unwrap_or_default();
            assert!(
                html.contains("<title>Calendar — Berth</title>"),
                "no title: {}",
                html.chars().take(300).collect::<String>()
            );
            assert!(html.contains("</html>"), "the page was cut short");
        }
    }
}

/// Pages keep arriving while another router is built in the same process
/// (each test builds its own). Listing the app's routes switches leptos'
/// resource loading off process-wide; when every router listed them anew,
/// a page whose resources started in that moment waited forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_arrive_while_another_router_is_built() {
    let f = Fixture::new().await;
    let building = {
        let db = f.db.clone();
        tokio::spawn(async move {
            for _ in 0..200 {
                drop(server::router(common::test_state(db.clone())));
                tokio::task::yield_now().await;
            }
        })
    };
    let mut pages = 0;
    while !building.is_finished() {
        let _ = page(&f, "/bookings", &f.ada).await;
        pages += 1;
    }
    building.await.unwrap();
    assert!(pages > 0, "no page was rendered while routers were built");
}
