//! An admin disables a user: the very next request of their browser session
//! and of their API tokens is anonymous, their bookings to come are canceled
//! and the running one ends, with the reason; their next login is refused.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use common::{call, dev_login, raw, slot, Fixture, MIG};
use server::auth::{Auth, AuthConfig};
use server::{router, AppState};

const ORIGIN: &str = "http://127.0.0.1:3000";

fn portal(f: &Fixture) -> Router {
    let mut config = AuthConfig::local(ORIGIN.parse().unwrap());
    config.dev_login = true;
    router(AppState::new(f.db.clone(), "target/site", Auth::new(config).unwrap()))
}

async fn with_cookie(
    app: &Router,
    method: Method,
    path: &str,
    cookie: &str,
    form: &str,
) -> (StatusCode, serde_json::Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::COOKIE, cookie)
        .header(header::ORIGIN, ORIGIN)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form.to_string()))
        .unwrap();
    raw(app, request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_user_is_locked_out_within_one_request_and_their_bookings_end() {
    let f = Fixture::new().await;
    let app = portal(&f);
    let (_, ada_cookie) = dev_login(&app, "ada@a.test").await;
    let ada_cookie = ada_cookie.unwrap();
    let (_, admin_cookie) = dev_login(&app, "root@ops.test").await;
    let admin_cookie = admin_cookie.unwrap();
    let book = |from, to| {
        let body = serde_json::json!({
            "pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(from), "end": slot(to), "mode": "interactive",
        });
        call(&app, Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body))
    };
    let (status, live) = book(-1, 4).await;
    assert_eq!(status, 201, "{live}");
    let (_, upcoming) = book(8, 10).await;
    // Both credentials work (and the token's principal is now cached).
    assert_eq!(with_cookie(&app, Method::GET, "/api/v1/me", &ada_cookie, "").await.0, StatusCode::OK);
    assert_eq!(call(&app, Method::GET, "/api/v1/me", Some(&f.ada), None).await.0, StatusCode::OK);

    let ada_id: String =
        sqlx::query_scalar("SELECT id::text FROM app_user WHERE email = 'ada@a.test'").fetch_one(&f.db).await.unwrap();
    let (status, summary) = with_cookie(
        &app,
        Method::POST,
        "/rpc/users/disable",
        &admin_cookie,
        &format!("user_id={ada_id}&reason=left+the+lab"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    // The user as changed (a refused reason would come back as `Err`, its notice).
    assert_eq!(summary["Ok"]["disabled"], "left the lab", "{summary}");

    assert_eq!(with_cookie(&app, Method::GET, "/api/v1/me", &ada_cookie, "").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&app, Method::GET, "/api/v1/me", Some(&f.ada), None).await.0, StatusCode::UNAUTHORIZED);
    let page = with_cookie(&app, Method::GET, "/bookings", &ada_cookie, "").await;
    assert_eq!(page.0, StatusCode::UNAUTHORIZED, "pages too");

    let state = |id: &serde_json::Value| {
        let id: uuid::Uuid = id["id"].as_str().unwrap().parse().unwrap();
        sqlx::query_as::<_, (String, String)>(
            "SELECT b.state, e.reason FROM booking b JOIN booking_event e ON e.booking_id = b.id
             WHERE b.id = $1 ORDER BY e.id DESC LIMIT 1",
        )
        .bind(id)
        .fetch_one(&f.db)
    };
    let (live_state, reason) = state(&live).await.unwrap();
    assert_eq!(live_state, "completed", "the running window ends now");
    assert_eq!(reason, "the user was disabled by an admin: left the lab");
    assert_eq!(state(&upcoming).await.unwrap().0, "canceled", "the booking to come never starts");

    let (status, _) = dev_login(&app, "ada@a.test").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no new login either");
    let (status, _) =
        with_cookie(&app, Method::POST, "/rpc/users/enable", &admin_cookie, &format!("user_id={ada_id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(dev_login(&app, "ada@a.test").await.0, StatusCode::SEE_OTHER, "enabled again");
    assert_eq!(
        call(&app, Method::GET, "/api/v1/me", Some(&f.ada), None).await.0,
        StatusCode::UNAUTHORIZED,
        "revoked tokens stay revoked"
    );
}
