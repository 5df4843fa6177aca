//! Test fixtures: a fresh PostgreSQL database per test (on the server that
//! `make test` starts), the real router, and users of every role with tokens.

pub mod clusters;
pub mod kube_stack;
pub mod processes;
pub mod provider;
pub mod world;

use app::backend::{accounts::tokens, accounts::users, MIGRATOR};
use app::model::Role;
use app::rules::capacity::align_down;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use chrono::{DateTime, Duration, Utc};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use server::{router, AppState};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use std::sync::OnceLock;
use tower::ServiceExt;
use uuid::Uuid;

/// A new, migrated database of its own, so tests never see each other's rows.
pub async fn fresh_db() -> PgPool {
    // The slot grid is fixed before any test reads the clock: fixing it may
    // wait out the last 20 s of a quarter, which must not fall between a
    // test's `current_slot()` and its `slot(n)` (a booking then started in
    // a slot already past).
    next_boundary();
    let url = std::env::var("DATABASE_URL")
        .expect("DATABASE_URL must name a PostgreSQL server the tests may create databases on; `make test` starts one");
    let options: PgConnectOptions = url.parse().expect("DATABASE_URL is not a PostgreSQL URL");
    let admin =
        PgPoolOptions::new().max_connections(1).connect_with(options.clone()).await.expect("connect to DATABASE_URL");
    let name = format!("berth_test_{}", Uuid::new_v4().simple());
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.expect("create test database");
    admin.close().await;
    let db = PgPoolOptions::new()
        .max_connections(80)
        .connect_with(options.database(&name))
        .await
        .expect("connect to test database");
    MIGRATOR.run(&db).await.expect("migrate");
    db
}

/// A fresh database (see `fresh_db`) and its URL, for `berth` processes.
pub async fn database() -> (sqlx::PgPool, String) {
    let db = fresh_db().await;
    let name: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&db).await.unwrap();
    let base = std::env::var("DATABASE_URL").unwrap();
    let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
    (db, url)
}

pub struct Fixture {
    pub db: PgPool,
    pub app: Router,
    /// Member of tenant `team-a`.
    pub ada: String,
    /// Another member of `team-a`.
    pub carol: String,
    /// Member of tenant `team-b`.
    pub bob: String,
    /// Manager in `team-a`.
    pub mia: String,
    /// Admin in `ops`.
    pub admin: String,
    /// The demo pool (1 whole GPU, 4 MIG 1g.24gb slices), open to every tenant.
    pub lab: Uuid,
}

pub async fn token_for(db: &PgPool, email: &str, role: Role, tenant: &str) -> String {
    let user = users::upsert_user(db, email, email.split('@').next().unwrap_or(email), role, tenant).await.unwrap();
    tokens::issue(db, user, "test", Duration::days(1), app::model::TokenScope::Full).await.unwrap().token
}

impl Fixture {
    pub async fn new() -> Self {
        let db = fresh_db().await;
        server::seed::demo(&db).await.unwrap();
        let lab = sqlx::query_scalar("SELECT id FROM pool WHERE name = $1")
            .bind(server::seed::DEMO_POOL)
            .fetch_one(&db)
            .await
            .unwrap();
        Self {
            ada: token_for(&db, "ada@a.test", Role::User, "team-a").await,
            carol: token_for(&db, "carol@a.test", Role::User, "team-a").await,
            bob: token_for(&db, "bob@b.test", Role::User, "team-b").await,
            mia: token_for(&db, "mia@a.test", Role::Manager, "team-a").await,
            admin: token_for(&db, "root@ops.test", Role::Admin, "ops").await,
            app: router(test_state(db.clone())),
            db,
            lab,
        }
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        call(&self.app, method, path, token, body).await
    }

    /// Places a booking of ada's (team-a) on the demo pool by hand, past
    /// admission: known windows in any state, past ones and ones off the
    /// slot grid included. Returns its id.
    pub async fn place(
        &self,
        kind: &str,
        units: i32,
        (start, end): (DateTime<Utc>, DateTime<Utc>),
        state: &str,
    ) -> Uuid {
        sqlx::query_scalar(
            "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, image)
             SELECT $1, $2, u.id, m.tenant_id, $3, 'interactive', $4, $5, $6, p.images[1]
             FROM app_user u JOIN membership m ON m.user_id = u.id, pool p
             WHERE u.email = 'ada@a.test' AND p.id = $1
             RETURNING id",
        )
        .bind(self.lab)
        .bind(kind)
        .bind(units)
        .bind(start)
        .bind(end)
        .bind(state)
        .fetch_one(&self.db)
        .await
        .unwrap()
    }

    /// Books on the demo pool as `token`; returns status and body.
    pub async fn book(
        &self,
        token: &str,
        kind: &str,
        quantity: i32,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> (StatusCode, Value) {
        let body = json!({
            "pool_id": self.lab, "kind": kind, "quantity": quantity,
            "start": start, "end": end, "mode": "interactive",
        });
        self.call(Method::POST, "/api/v1/bookings", Some(token), Some(body)).await
    }
}

pub async fn call(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = match body {
        Some(body) => request.header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())),
        None => request.body(Body::empty()),
    }
    .unwrap();
    raw(app, request).await
}

/// How long one in-process request may take, body included: a page that
/// never ends fails its test, naming the path, instead of stalling the run.
pub const REQUEST_LIMIT: std::time::Duration = std::time::Duration::from_secs(90);

pub async fn raw(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let path = request.uri().to_string();
    let answer = async {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        (status, response.into_body().collect().await.unwrap().to_bytes())
    };
    let Ok((status, bytes)) = tokio::time::timeout(REQUEST_LIMIT, answer).await else {
        panic!("{path} did not answer within {REQUEST_LIMIT:?}");
    };
    let value =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

static NEXT_BOUNDARY: OnceLock<DateTime<Utc>> = OnceLock::new();

/// The next quarter-hour boundary, fixed for the whole test binary so that
/// windows never shift under a test. Chosen at least 20 s ahead, so that the
/// current slot (`slot(-1)`) stays the current one while the tests run.
fn next_boundary() -> DateTime<Utc> {
    *NEXT_BOUNDARY.get_or_init(|| {
        let quarter = Duration::minutes(15);
        let now = Utc::now();
        let next = align_down(now, quarter) + quarter;
        if next - now >= Duration::seconds(20) {
            return next;
        }
        std::thread::sleep((next - now + Duration::seconds(1)).to_std().unwrap_or_default());
        next + quarter
    })
}

/// The slot boundary `slots` quarter-hours after the next one; `slot(-1)` is
/// the start of the current slot.
pub fn slot(slots: i64) -> DateTime<Utc> {
    next_boundary() + Duration::minutes(15 * slots)
}

/// The start of the slot running now: `slot(-1)` until the next boundary
/// passes, which a long test binary (the real API server's) may outlive.
pub fn current_slot() -> DateTime<Utc> {
    align_down(Utc::now(), Duration::minutes(15))
}

/// Waits, if need be, until at least 15 s of the current minute remain.
/// Tests that write the sampler's minutes relative to the database's
/// `now()` and then read "the latest whole minute" would otherwise fail
/// when the minute turns between the write and the read.
pub async fn clear_of_the_minute_turn() {
    let into = Utc::now().timestamp_millis().rem_euclid(60_000);
    if into > 45_000 {
        tokio::time::sleep(std::time::Duration::from_millis((60_000 - into + 200) as u64)).await;
    }
}

pub fn at(value: &Value) -> DateTime<Utc> {
    value.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("not a timestamp: {value}"))
}

pub const GPU: &str = "nvidia.com/gpu";
pub const MIG: &str = "nvidia.com/mig-1g.24gb";

/// The server's state as tests use it: no identity provider, no dev login,
/// public URL http://127.0.0.1:3000 (the origin CSRF checks compare with).
pub fn test_state(db: PgPool) -> AppState {
    let config = server::auth::AuthConfig::local("http://127.0.0.1:3000".parse().unwrap());
    AppState::new(db, "target/site", server::auth::Auth::new(config).unwrap())
}

/// Posts the development login form for `email` from the test portal's
/// origin; returns the status and the session cookie (`name=value`).
pub async fn dev_login(app: &Router, email: &str) -> (StatusCode, Option<String>) {
    let request = Request::post("/auth/dev-login")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("email={}", provider::urlencode(email))))
        .unwrap();
    let response = tokio::time::timeout(REQUEST_LIMIT, app.clone().oneshot(request))
        .await
        .expect("the dev login answered within the limit")
        .unwrap();
    let cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::to_owned);
    (response.status(), cookie)
}

/// The portal on an in-memory API server, and ada's booking of one MIG
/// slice from the slot running now (its id). `simulated`: how the portal
/// sees that server — as the simulated cluster, or standing in for a real one.
pub async fn portal_on_memory_cluster(
    f: &Fixture,
    simulated: bool,
) -> (std::sync::Arc<server::provisioner::simulated::SimulatedCluster>, Router, String) {
    let cluster = server::provisioner::simulated::SimulatedCluster::start(true).await;
    let mode = app::model::ClusterMode { simulated, kueue: false };
    let cluster_config = server::provisioner::manifests::Cluster::default();
    let app = router(test_state(f.db.clone()).with_cluster(
        cluster_config,
        mode,
        server::provisioner::cluster_clients::ClusterClients::single(cluster.client()),
    ));
    let (mut status, mut body) = f.book(&f.ada, MIG, 1, current_slot(), slot(4)).await;
    if status == 422 && body["field"] == "start" {
        // A slot boundary passed mid-request (a loaded machine): book the one that began.
        (status, body) = f.book(&f.ada, MIG, 1, current_slot(), slot(4)).await;
    }
    assert_eq!(status, 201, "{body}");
    (cluster, app, body["id"].as_str().unwrap().to_string())
}

/// Runs one of the tests' Python scripts (`tests/<script>`, with its PyPI
/// library) on `input`; its standard output read as JSON. A failing script
/// fails the test with `what` and its standard error.
/// Runs the MCP client (PyPI `mcp`, tests/mcp/client.py) with `plan`, on
/// its own thread: the server answers on this runtime.
pub async fn mcp_client(plan: Value) -> Value {
    tokio::task::spawn_blocking(move || {
        python_json("mcp/client.py", plan.to_string().as_bytes(), "the MCP client failed")
    })
    .await
    .unwrap()
}

pub fn python_json(script: &str, input: &[u8], what: &str) -> Value {
    use std::process::{Command, Stdio};
    let mut child = Command::new("python3")
        .arg(format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR")))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An MCP `tools/call` as a client sends it, stateless (no session, no handshake).
pub fn tool_call(name: &str, arguments: &str) -> String {
    let arguments: Value = serde_json::from_str(arguments).expect("the arguments are JSON");
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        .to_string()
}

/// A tool's answer as a status: the HTTP one unless the call was answered;
/// then 200 when done, else the REST status its refusal names.
pub fn tool_status(status: StatusCode, answer: &Value) -> StatusCode {
    if status != 200 {
        return status;
    }
    let result = &answer["result"];
    match result["isError"].as_bool() {
        Some(false) => status,
        _ => result["structuredContent"]["status"]
            .as_u64()
            .and_then(|code| StatusCode::from_u16(code as u16).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    }
}
