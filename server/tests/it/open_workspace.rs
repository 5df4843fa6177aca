//! `GET /bookings/{id}/open`: the owner of an active booking is redirected to
//! the workspace's gate with a one-time code made from the token in the
//! session's Secret; nobody else is, and the token is nowhere in the
//! database. The gate (`berth gate`) trades the code for a cookie, once, and
//! passes requests and WebSocket upgrades to the workspace with the token.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request};
use common::{test_state, Fixture};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use tower::ServiceExt;

async fn open(app: &axum::Router, id: &str, token: Option<&str>) -> (u16, Option<String>, Option<String>) {
    let mut request = Request::get(format!("/bookings/{id}/open"));
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let response = app.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let header = |name| response.headers().get(name).map(|v: &header::HeaderValue| v.to_str().unwrap().to_string());
    (response.status().as_u16(), header(header::LOCATION), header(header::CACHE_CONTROL))
}

/// Everything logged, at every level, while the test runs.
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn only_the_owner_of_an_active_booking_is_sent_to_the_workspace_with_a_one_time_code() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber =
        tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_writer(move || writer.clone()).finish();
    // The test runs on one thread, so this subscriber sees the worker, the
    // kube client and the handler.
    let _logging = tracing::subscriber::set_default(subscriber);
    let f = Fixture::new().await;
    // The in-memory API server stands in for a real cluster here (the
    // simulated mode answers with a page instead: simulated_workspace.rs,
    // a binary of its own, since this test watches the log of its thread).
    let (cluster, app, id) = common::portal_on_memory_cluster(&f, false).await;

    assert_eq!(open(&app, &id, Some(&f.ada)).await.0, 409, "not yet provisioned");
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);

    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    let secrets: Api<Secret> = Api::namespaced(cluster.client(), &ns);
    let secret = secrets.get("berth-workspace-access").await.unwrap();
    let token = secret.string_data.unwrap()["token"].clone();
    assert_eq!(token.len(), 48, "24 random bytes, hex");

    let (status, location, cache) = open(&app, &id, Some(&f.ada)).await;
    assert_eq!(status, 303);
    // A one-time code for the workspace's gate, never the token itself.
    let location = location.unwrap();
    let code = location.strip_prefix(&format!("https://{ns}.berth.local/.berth/open?code=")).expect(&location);
    assert!(!location.contains(&token), "{location}");
    let gate = server::gate::Gate::new(token.clone(), "127.0.0.1:9".parse().unwrap(), "https://ws");
    let now = chrono::Utc::now().timestamp();
    assert_eq!(gate.redeem(code, now), Ok(()), "the gate, knowing the token, opens it once");
    assert_eq!(gate.redeem(code, now), Err(server::gate::Refused::Used));
    assert_eq!(cache.as_deref(), Some("no-store"));
    assert_eq!(open(&app, &id, Some(&f.carol)).await.0, 403, "a teammate may see the booking, not open it");
    assert_eq!(open(&app, &id, Some(&f.admin)).await.0, 403, "nor may an admin");
    assert_eq!(open(&app, &id, Some(&f.bob)).await.0, 404, "another tenant does not see it");
    assert_eq!(open(&app, &id, None).await.0, 401);
    assert_eq!(open(&app, "not-a-uuid", Some(&f.ada)).await.0, 404, "names nothing, as in the REST API");

    // The token lives in the cluster only: no row of any table holds it.
    let tables: Vec<String> = sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'")
        .fetch_all(&f.db)
        .await
        .unwrap();
    for table in tables {
        let hits: i64 =
            sqlx::query_scalar(&format!("SELECT count(*) FROM \"{table}\" t WHERE to_jsonb(t)::text LIKE $1"))
                .bind(format!("%{token}%"))
                .fetch_one(&f.db)
                .await
                .unwrap();
        assert_eq!(hits, 0, "table {table} holds the workspace token");
    }

    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(logged.contains("berth-workspace-access"), "the subscriber saw the secret being read");
    assert!(!logged.contains(&token), "the workspace token was logged");

    // Without a cluster connection the portal says so instead of failing.
    let detached = server::router(test_state(f.db.clone()));
    assert_eq!(open(&detached, &id, Some(&f.ada)).await.0, 503);
}

/// A stand-in workspace: answers with the Authorization header it got, and
/// echoes 4 bytes after switching protocols (a WebSocket's first frame).
async fn workspace(mut request: axum::extract::Request) -> axum::response::Response {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if request.headers().contains_key(header::UPGRADE) {
        let upgrade = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            let mut io = hyper_util::rt::TokioIo::new(upgrade.await.unwrap());
            let mut frame = [0u8; 4];
            io.read_exact(&mut frame).await.unwrap();
            io.write_all(&frame).await.unwrap();
        });
        let switching = axum::http::Response::builder().status(101);
        let switching = switching.header(header::CONNECTION, "upgrade").header(header::UPGRADE, "websocket");
        return switching.body(Body::empty()).unwrap();
    }
    let seen = request.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap().to_string());
    axum::response::IntoResponse::into_response(seen.unwrap_or_default())
}

#[tokio::test]
async fn the_gate_trades_a_code_for_a_cookie_once_and_passes_requests_and_websockets_on_with_the_token() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(upstream, axum::Router::new().fallback(workspace)).await.unwrap() });
    let listen = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let gate = server::gate::Gate::new("t0ken".into(), upstream_addr, "http://ws");
    tokio::spawn(server::gate::serve(listen, gate));
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let base = format!("http://{listen}");
    let get = |path: String, cookie: Option<String>| {
        let mut request = http.get(format!("{base}{path}"));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        request.send()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while get("/.berth/ready".into(), None).await.map(|r| r.status().as_u16()).ok() != Some(204) {
        assert!(std::time::Instant::now() < deadline, "the gate did not come up");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    assert_eq!(get("/lab".into(), None).await.unwrap().status(), 401, "no cookie, no workspace");
    let code = server::gate::code("t0ken", chrono::Utc::now().timestamp());
    let opened = get(format!("/.berth/open?code={code}"), None).await.unwrap();
    assert_eq!((opened.status().as_u16(), opened.headers()["location"].to_str().unwrap()), (303, "/"));
    let set = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set.contains("HttpOnly") && set.contains("Secure") && set.contains("SameSite=Lax"), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let again = get(format!("/.berth/open?code={code}"), None).await.unwrap();
    assert_eq!(again.status(), 401, "a code opens once");
    let forged = server::gate::code("another-sessions-token", chrono::Utc::now().timestamp());
    assert_eq!(get(format!("/.berth/open?code={forged}"), None).await.unwrap().status(), 401);

    let through = get("/lab".into(), Some(cookie.clone())).await.unwrap();
    assert_eq!(through.status(), 200);
    assert_eq!(through.text().await.unwrap(), "token t0ken", "the workspace gets its own token from the gate");
    let wrong = format!("{}=00", server::gate::COOKIE);
    assert_eq!(get("/lab".into(), Some(wrong)).await.unwrap().status(), 401);

    // A WebSocket (a kernel's channels): upgraded through the gate, bytes both ways.
    let mut socket = tokio::net::TcpStream::connect(listen).await.unwrap();
    let head = format!(
        "GET /api/kernels/k/channels HTTP/1.1\r\nHost: ws\r\nCookie: {cookie}\r\n\
         Origin: http://ws\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        socket.read_exact(&mut byte).await.unwrap();
        answer.push(byte[0]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 101"), "{}", String::from_utf8_lossy(&answer));
    socket.write_all(b"ping").await.unwrap();
    let mut echoed = [0u8; 4];
    socket.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"ping");
}
