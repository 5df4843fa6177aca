//! The development login, idle expiry, and the purge of expired sessions.
//! On a multi-thread runtime, as every test that renders a page in process:
//! a server-side render occasionally never finished on a single-thread one.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use common::provider::Portal;
use common::{dev_login, fresh_db, raw};
use server::auth::{Auth, AuthConfig};
use server::{router, AppState};
use sqlx::PgPool;
use tower::ServiceExt;
use tower_sessions::ExpiredDeletion;

const ORIGIN: &str = "http://127.0.0.1:3000";

fn app(db: PgPool, dev_login: bool) -> Router {
    let mut config = AuthConfig::local(ORIGIN.parse().unwrap());
    config.dev_login = dev_login;
    router(AppState::new(db, "target/site", Auth::new(config).unwrap()))
}

async fn me(app: &Router, cookie: &str) -> (StatusCode, serde_json::Value) {
    raw(app, Request::get("/api/v1/me").header(header::COOKIE, cookie).body(Body::empty()).unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_development_login_signs_in_as_a_seeded_user_only_when_enabled() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    let on = app(db.clone(), true);
    let page = raw(&on, Request::get("/signin").body(Body::empty()).unwrap()).await;
    let html = page.1.as_str().unwrap().to_string();
    assert!(html.contains("Development login") && html.contains("mia@berth.local"), "the seeded users are offered");

    let (status, cookie) = dev_login(&on, "mia@berth.local").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, who) = me(&on, &cookie.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((who["email"].as_str(), who["role"].as_str()), (Some("mia@berth.local"), Some("manager")));

    assert_eq!(dev_login(&on, "nobody@berth.local").await.0, StatusCode::NOT_FOUND, "only existing users");

    let off = app(db, false);
    let (status, cookie) = dev_login(&off, "mia@berth.local").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(cookie.is_none(), "no session when the development login is off");
    let page = raw(&off, Request::get("/signin").body(Body::empty()).unwrap()).await;
    assert!(!page.1.as_str().unwrap().contains("Development login"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookies_are_secure_when_the_public_url_is_https() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    let mut config = AuthConfig::local("https://berth.example.org".parse().unwrap());
    config.dev_login = true;
    let app = router(AppState::new(db, "target/site", Auth::new(config).unwrap()));
    let request = Request::post("/auth/dev-login")
        .header(header::ORIGIN, "https://berth.example.org")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("email=ada%40berth.local"))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_and_expired_rows_are_purged() {
    let portal = Portal::start_with(fresh_db().await, None, |config| {
        config.idle_timeout = std::time::Duration::from_secs(1);
    })
    .await;
    let browser = portal.browser();
    assert_eq!(browser.login("ada").await.status(), 200);
    assert_eq!(browser.me().await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(browser.me().await.0, 401, "a session idle for longer than the timeout has ended");

    let rows = |db: PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM web_session").fetch_one(&db).await.unwrap()
    };
    assert!(rows(portal.db.clone()).await >= 1);
    let state = server::AppState::new(
        portal.db.clone(),
        "target/site",
        Auth::new(AuthConfig::local(ORIGIN.parse().unwrap())).unwrap(),
    );
    server::login_store(&state).delete_expired().await.unwrap();
    assert_eq!(rows(portal.db.clone()).await, 0, "expired sessions are deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_https_the_cookie_is_host_prefixed_and_secure_and_transport_security_is_strict() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    let https = "https://berth.example.org";
    let mut config = AuthConfig::local(https.parse().unwrap());
    config.dev_login = true;
    let secure = router(AppState::new(db.clone(), "target/site", Auth::new(config).unwrap()));
    let request = Request::post("/auth/dev-login")
        .header(header::ORIGIN, https)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("email=mia%40berth.local"))
        .unwrap();
    let response = secure.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(cookie.starts_with("__Host-berth_session="), "{cookie}");
    for attribute in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Domain"), "{cookie}");
    assert_eq!(response.headers()[header::STRICT_TRANSPORT_SECURITY], "max-age=31536000");
    let session = cookie.split(';').next().unwrap();
    assert_eq!(me(&secure, session).await.0, StatusCode::OK, "the prefixed cookie is the session");

    let plain = app(db, false);
    let response = plain.oneshot(Request::get("/signin").body(Body::empty()).unwrap()).await.unwrap();
    assert!(response.headers().get(header::STRICT_TRANSPORT_SECURITY).is_none(), "no HSTS over plain http");
}
