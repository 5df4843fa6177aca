//! Slow and abusive clients (issue 15): a client dribbling its headers is
//! cut off without holding the server, `/auth/*` and failing bearer tokens
//! are limited per client address with `429` and `Retry-After`, and what is
//! expensive to answer per signed-in person (issue 60).

use crate::common;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::Fixture;
use server::auth::rate_limit::RateLimits;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn limited_router(f: &Fixture, limits: RateLimits) -> axum::Router {
    let mut config = server::auth::AuthConfig::local("http://127.0.0.1:3000".parse().unwrap());
    config.rate_limits = limits;
    server::router(server::AppState::new(f.db.clone(), "target/site", server::auth::Auth::new(config).unwrap()))
}

fn from(address: &str, path: &str, token: Option<&str>) -> Request<Body> {
    let mut request = Request::get(path).header("x-forwarded-for", format!("203.0.113.250, {address}"));
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    request.body(Body::empty()).unwrap()
}

async fn get(app: &axum::Router, request: Request<Body>) -> (StatusCode, Option<u64>, serde_json::Value) {
    use tower::ServiceExt;
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let retry = response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
    (status, retry, serde_json::from_slice(&body).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_dribbling_its_headers_is_cut_off_while_others_are_served() {
    // The real server process, as it is deployed, with a short header-read timeout.
    let postgres = common::processes::Postgres::start();
    let server = common::processes::Server::start(&postgres.url(), &["--header-read-timeout", "1"]);
    let address = server.url.trim_start_matches("http://").to_string();

    // Slowloris: a header line every 200 ms, for up to 10 s.
    let mut slow = TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: berth\r\n").await.unwrap();
    let started = Instant::now();
    let dribble = async {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if slow.write_all(b"X-Slow: still-here\r\n").await.is_err() || started.elapsed() > Duration::from_secs(10) {
                break;
            }
            // The server closing shows as end of stream (or a 408) on the read side.
            let mut buf = [0u8; 256];
            match tokio::time::timeout(Duration::from_millis(1), slow.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) if String::from_utf8_lossy(&buf[..n]).contains("408") => break,
                _ => {}
            }
        }
        started.elapsed()
    };
    // Meanwhile an ordinary client is answered.
    let ordinary = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: berth\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    };
    let (held, answer) = tokio::join!(dribble, ordinary);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(held < Duration::from_secs(5), "the dribbling client was held {held:?}, not cut off after about 1 s");
    println!(
        "SLOWLORIS a client dribbling its headers was cut off after {:.1} s (--header-read-timeout 1 here, 10 by default), an ordinary request answered meanwhile",
        held.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_requests_are_limited_per_client_address() {
    let f = Fixture::new().await;
    let app = limited_router(
        &f,
        RateLimits {
            auth_per_minute: 3,
            client_address_header: Some(header::HeaderName::from_static("x-forwarded-for")),
            ..RateLimits::default()
        },
    );
    for _ in 0..3 {
        let (status, _, _) = get(&app, from("192.0.2.1", "/auth/login", None)).await;
        assert_ne!(status, StatusCode::TOO_MANY_REQUESTS);
    }
    let (status, retry, body) = get(&app, from("192.0.2.1", "/auth/login", None)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "Retry-After: {retry:?}");
    assert_eq!(body["error"], "rate_limited", "{body}");
    // Another address, and the rest of the portal for the same one, are not affected.
    let (status, _, _) = get(&app, from("192.0.2.2", "/auth/login", None)).await;
    assert_ne!(status, StatusCode::TOO_MANY_REQUESTS);
    let (status, _, _) = get(&app, from("192.0.2.1", "/api/v1/pools", Some(&f.ada))).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_whose_tokens_keep_failing_gets_429_before_any_token_is_looked_up() {
    let f = Fixture::new().await;
    let app = limited_router(
        &f,
        RateLimits {
            token_failures_per_minute: 2,
            client_address_header: Some(header::HeaderName::from_static("x-forwarded-for")),
            ..RateLimits::default()
        },
    );
    // Valid tokens do not count.
    for _ in 0..5 {
        let (status, _, _) = get(&app, from("192.0.2.7", "/api/v1/pools", Some(&f.ada))).await;
        assert_eq!(status, StatusCode::OK);
    }
    for guess in ["berth_guess1", "berth_guess2"] {
        let (status, _, _) = get(&app, from("192.0.2.7", "/api/v1/pools", Some(guess))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, retry, _) = get(&app, from("192.0.2.7", "/api/v1/pools", Some("berth_guess3"))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "Retry-After: {retry:?}");
    // Even a right token from that address now learns nothing until the minute ends.
    let (status, _, _) = get(&app, from("192.0.2.7", "/api/v1/pools", Some(&f.ada))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // Others are served; a browser without a token from the same address too.
    let (status, _, _) = get(&app, from("192.0.2.8", "/api/v1/pools", Some(&f.ada))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = get(&app, from("192.0.2.7", "/healthz", None)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_announced_over_the_limit_is_refused_before_it_is_read() {
    let f = Fixture::new().await;
    // A body that never ends: answering at all shows it was not read whole.
    let endless = || futures::stream::repeat_with(|| Ok::<_, std::io::Error>(bytes::Bytes::from_static(&[b'a'; 1024])));
    for path in ["/api/v1/bookings", "/rpc/bookings/co-owners/add", "/auth/dev-login"] {
        let request = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::CONTENT_LENGTH, (100 * 1024 * 1024).to_string())
            .header(header::ORIGIN, "http://127.0.0.1:3000")
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
            .body(Body::from_stream(endless()))
            .unwrap();
        let answered = tokio::time::timeout(Duration::from_secs(10), get(&f.app, request)).await;
        let (status, _, _) = answered.unwrap_or_else(|_| panic!("{path}: the endless body was being read"));
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
    }
}

/// A page's call refused for its size says why in words the page shows:
/// the server fn's error format to a page's script, plain text to a form
/// posted without one; announced too large or found so while read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_fn_body_over_the_limit_is_413_in_words_the_page_shows() {
    use tower::ServiceExt;
    let f = Fixture::new().await;
    let note = format!("pool_id=00000000-0000-0000-0000-000000000000&note={}", "x".repeat(400 * 1024));
    for (announced, accept, expected_start) in [
        (true, None, "ServerError|Too much to send"),
        (false, None, "ServerError|Too much to send"),
        (false, Some("text/html,application/xhtml+xml"), "Too much to send"),
    ] {
        let mut request = Request::post("/rpc/book")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ORIGIN, "http://127.0.0.1:3000")
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada));
        if let Some(accept) = accept {
            request = request.header(header::ACCEPT, accept);
        }
        let body = if announced {
            request = request.header(header::CONTENT_LENGTH, note.len().to_string());
            Body::from(note.clone())
        } else {
            // Chunked, no length: found too large only while it is read.
            let chunks: Vec<Result<bytes::Bytes, std::io::Error>> =
                note.as_bytes().chunks(16 * 1024).map(|c| Ok(bytes::Bytes::copy_from_slice(c))).collect();
            Body::from_stream(futures::stream::iter(chunks))
        };
        let response = f.app.clone().oneshot(request.body(body).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE, "announced {announced}, accept {accept:?}");
        let shown = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert!(shown.starts_with("text/plain"), "a browser shows it, not downloads it: {shown}");
        let text = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&text);
        assert!(text.starts_with(expected_start), "announced {announced}, accept {accept:?}: {text}");
        assert!(text.contains("at most 256 KB"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_repeating_expensive_requests_gets_429_and_everyone_else_is_served() {
    let f = Fixture::new().await;
    let app = limited_router(&f, RateLimits { expensive_per_minute: 3, ..RateLimits::default() });
    let fit = "/api/v1/fit?params_billion=7&precision=bf16&task=inference";
    let open = format!("/bookings/{}/open", uuid::Uuid::new_v4());
    // One budget across the free view, the sizing helper, finding a slot and opening a workspace.
    for path in [fit, "/rpc/free_then", &open] {
        let (status, _, body) = get(&app, from("192.0.2.9", path, Some(&f.ada))).await;
        assert_ne!(status, StatusCode::TOO_MANY_REQUESTS, "{path}: {body}");
    }
    for path in [fit, "/fit", "/rpc/find", &open] {
        let (status, retry, body) = get(&app, from("192.0.2.9", path, Some(&f.ada))).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{path}");
        assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "Retry-After: {retry:?}");
        assert_eq!(body["error"], "rate_limited", "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("from you") && message.contains("try again in"), "{message}");
    }
    // Per person, not per address: bob from the same address is served, and ada elsewhere in the portal.
    let (status, _, _) = get(&app, from("192.0.2.9", fit, Some(&f.bob))).await;
    assert_ne!(status, StatusCode::TOO_MANY_REQUESTS);
    let (status, _, _) = get(&app, from("192.0.2.9", "/api/v1/pools", Some(&f.ada))).await;
    assert_eq!(status, StatusCode::OK);
}

/// A `tools/call` to `/mcp` as `token`.
fn tool(token: &str, name: &str, arguments: &str) -> Request<Body> {
    Request::post("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::HOST, "127.0.0.1:3000")
        .body(Body::from(common::tool_call(name, arguments)))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_past_its_budget_gets_429_on_rest_and_mcp_while_its_person_and_others_are_served() {
    let f = Fixture::new().await;
    let app = limited_router(&f, RateLimits { token_requests_per_minute: 3, ..RateLimits::default() });
    for _ in 0..2 {
        let (status, _, _) = get(&app, from("192.0.2.30", "/api/v1/pools", Some(&f.ada))).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _, answer) = get(&app, tool(&f.ada, "list_pools", "{}")).await;
    assert_eq!(status, StatusCode::OK, "the third, over MCP: {answer}");
    let (status, retry, body) = get(&app, from("192.0.2.30", "/api/v1/pools", Some(&f.ada))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "Retry-After: {retry:?}");
    assert!(body["message"].as_str().unwrap().contains("with this token"), "{body}");
    let (status, _, _) = get(&app, tool(&f.ada, "list_pools", "{}")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "MCP and REST share the token's budget");
    // Another token of hers, and bob's, are served.
    let second = common::token_for(&f.db, "ada@a.test", app::model::Role::User, "team-a").await;
    for token in [&second, &f.bob] {
        let (status, _, _) = get(&app, from("192.0.2.30", "/api/v1/pools", Some(token))).await;
        assert_eq!(status, StatusCode::OK);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_finding_free_time_spends_its_persons_budget_of_expensive_requests() {
    let f = Fixture::new().await;
    let app = limited_router(&f, RateLimits { expensive_per_minute: 2, ..RateLimits::default() });
    let window = format!(
        r#"{{"from":"{}","to":"{}"}}"#,
        common::slot(8).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        common::slot(16).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    for name in ["find_free", "fit"] {
        let arguments = if name == "fit" { r#"{"model":"llama-3.1-8b"}"# } else { &window };
        let (status, _, answer) = get(&app, tool(&f.ada, name, arguments)).await;
        assert_eq!(common::tool_status(status, &answer), StatusCode::OK, "{answer}");
    }
    let (status, _, answer) = get(&app, tool(&f.ada, "find_free", &window)).await;
    assert_eq!(common::tool_status(status, &answer), StatusCode::TOO_MANY_REQUESTS, "{answer}");
    let said = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        said.starts_with("Too many free-view, sizing and open-workspace requests from you; try again in "),
        "{said}"
    );
    // The same budget as the portal's pages: the free view's page is refused too.
    let (status, _, _) =
        get(&app, from("192.0.2.31", "/api/v1/free?from=2030-01-07T13:00:00Z&to=2030-01-07T18:00:00Z", Some(&f.ada)))
            .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}
