//! Prometheus metrics at `/metrics`, through the `metrics` facade and its
//! Prometheus exporter. Counters and histograms are recorded where things
//! happen (HTTP layer, admission, worker passes, Kubernetes client); the
//! gauges of what is in the database are read at scrape time, so every
//! replica reports the same figures and none is kept in memory.
//!
//! They are served on a listener of their own (`--metrics-listen`), never on
//! the portal's: the Ingress/Route exposes the portal port only, and the
//! NetworkPolicy lets the monitoring namespace alone reach this one.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics::{counter, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sqlx::PgPool;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SECONDS_BUCKETS: [f64; 14] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];
const BATCH_BUCKETS: [f64; 8] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

/// The process-wide recorder, installed on first use.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS_BUCKETS)
            .and_then(|b| b.set_buckets_for_metric(Matcher::Full("berth_admission_batch_size".into()), &BATCH_BUCKETS))
            .expect("bucket lists are non-empty constants")
            .install_recorder()
            .expect("berth installs the only metrics recorder");
        describe();
        handle
    })
}

/// The HELP line of every metric (promtool wants one).
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_histogram!(
        "berth_http_request_duration_seconds",
        Unit::Seconds,
        "HTTP requests by route template, method and status."
    );
    describe_counter!("berth_admission_decisions_total", "Booking requests decided, by outcome.");
    describe_histogram!("berth_admission_batch_size", "Booking requests decided together under one kind's lock.");
    describe_histogram!("berth_worker_pass_duration_seconds", Unit::Seconds, "Worker passes, by pass (start, repair).");
    describe_counter!("berth_worker_passes_total", "Worker passes, by pass and outcome.");
    describe_histogram!(
        "berth_cluster_pass_duration_seconds",
        Unit::Seconds,
        "Worker passes over each cluster this process drives, by cluster and pass."
    );
    describe_gauge!("berth_cluster_up", "1 when the cluster's API server answered this process's last pass over it.");
    describe_counter!("berth_worker_pass_errors_total", "Worker passes that failed outright, by pass and error kind.");
    describe_histogram!("berth_usage_round_duration_seconds", Unit::Seconds, "GPU usage sampling rounds.");
    describe_counter!("berth_usage_queries_total", "PromQL queries the usage sampler sent.");
    describe_counter!("berth_usage_rounds_total", "GPU usage sampling rounds, by outcome (ok, gap).");
    describe_counter!(
        "berth_notifications_total",
        "Notification delivery attempts, by channel (email, webhook) and outcome (sent, failed)."
    );
    describe_counter!("berth_kubernetes_requests_total", "Requests to the Kubernetes API, by verb and status.");
    describe_gauge!("berth_worker_leader", "1 while this process's worker leads the cluster.");
    describe_gauge!("berth_bookings", "Bookings by state.");
    describe_gauge!("berth_waitlist_waiting", "Waitlist entries waiting for room.");
    describe_gauge!("berth_notifications_undelivered", "Notification deliveries not yet sent (the outbox's depth).");
    describe_gauge!("berth_sessions", "Live sessions by the state of their first unfinished step.");
    describe_gauge!(
        "berth_session_namespaces_stuck",
        "Ended sessions' namespaces still terminating after 2 minutes (their GPUs may still be held)."
    );
    describe_gauge!(
        "berth_booked_units",
        "The most units of a pool's kind booked at once (pending, approved or active) from now over the next 15m, 1h or 24h."
    );
    describe_gauge!("berth_database_up", "1 when this process reached PostgreSQL at the last scrape.");
    describe_gauge!("berth_database_connections", "This process's database connections, by state.");
}

/// Serves `GET /metrics` on `addr` until the process ends.
/// With the simulated cluster it also serves that cluster's DCGM exporter
/// at `/simulated-dcgm/metrics`, for the Prometheus of `make run` to scrape.
pub async fn serve(addr: std::net::SocketAddr, db: PgPool, simulated: bool) -> std::io::Result<()> {
    handle();
    let mut app = axum::Router::new().route("/metrics", axum::routing::get(scrape));
    if simulated {
        app = app.route("/simulated-dcgm/metrics", axum::routing::get(simulated_dcgm));
    }
    let app = app.with_state(db);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!("metrics on http://{addr}/metrics");
    tokio::spawn(async move {
        if let Err(err) = axum::serve(listener, app).await {
            tracing::error!(error = %err, "the metrics listener stopped");
        }
    });
    Ok(())
}

/// `GET /metrics`: refreshes the database gauges, then renders.
async fn scrape(State(db): State<PgPool>) -> Response {
    let up = tokio::time::timeout(Duration::from_secs(2), database_gauges(&db)).await;
    gauge!("berth_database_up").set(if matches!(up, Ok(Ok(()))) { 1.0 } else { 0.0 });
    gauge!("berth_database_connections", "state" => "in_use").set(f64::from(db.size()) - db.num_idle() as f64);
    gauge!("berth_database_connections", "state" => "idle").set(db.num_idle() as f64);
    let mut response = handle().render().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

async fn simulated_dcgm(State(db): State<PgPool>) -> Response {
    match crate::usage::simulated::exposition(&db, chrono::Utc::now()).await {
        Ok(text) => {
            ([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))], text)
                .into_response()
        }
        Err(err) => {
            tracing::warn!(error = %err, "cannot render the simulated DCGM metrics");
            axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}

/// Bookings by state, waiting waitlist entries, and live sessions by the
/// state of their first unfinished step. States that fell to zero are
/// reported as zero, not left at their last value.
async fn database_gauges(db: &PgPool) -> Result<(), sqlx::Error> {
    // A member cluster's worker may not read the outbox (`member_role`):
    // its scrape leaves that gauge out rather than failing.
    let outbox: bool =
        sqlx::query_scalar("SELECT has_table_privilege('notification_delivery', 'SELECT')").fetch_one(db).await?;
    let outbox = match outbox {
        true => "SELECT 'outbox', 'due', count(*) FROM notification_delivery WHERE delivered_at IS NULL AND gave_up_at IS NULL
                 UNION ALL",
        false => "",
    };
    let rows: Vec<(String, String, i64)> = sqlx::query_as(&format!(
        "SELECT 'booking', s.state, count(b.id)
           FROM unnest(ARRAY['pending','approved','active','completed','canceled','rejected','failed']) s(state)
           LEFT JOIN booking b ON b.state::text = s.state GROUP BY s.state
         UNION ALL
         SELECT 'waitlist', 'waiting', count(*) FROM waitlist_entry WHERE state = 'waiting'
         UNION ALL
         {outbox}
         SELECT 'session', coalesce((SELECT x->>'state' FROM jsonb_array_elements(st.steps) x
                                     WHERE x->>'state' <> 'done' LIMIT 1), 'done'), count(*)
           FROM session_status st JOIN booking b ON b.id = st.booking_id
          WHERE b.state IN ('approved', 'active') GROUP BY 2"
    ))
    .fetch_all(db)
    .await?;
    for step in ["pending", "working", "failed", "done"] {
        gauge!("berth_sessions", "step_state" => step).set(0.0);
    }
    for (what, state, count) in rows {
        let value = count as f64;
        match what.as_str() {
            "booking" => gauge!("berth_bookings", "state" => state).set(value),
            "waitlist" => gauge!("berth_waitlist_waiting").set(value),
            "outbox" => gauge!("berth_notifications_undelivered").set(value),
            _ => gauge!("berth_sessions", "step_state" => state).set(value),
        }
    }
    for ahead in booked_ahead(db).await? {
        gauge!("berth_booked_units", "pool" => ahead.pool, "kind" => ahead.kind, "within" => ahead.within)
            .set(ahead.units as f64);
    }
    Ok(())
}

/// How far ahead `berth_booked_units` looks, as its `within` label says it.
pub const AHEAD: [(&str, i32); 3] = [("15m", 15), ("1h", 60), ("24h", 24 * 60)];

/// The peak of one pool kind's booked units over one look-ahead.
#[derive(Debug, PartialEq, sqlx::FromRow)]
pub struct BookedAhead {
    pub pool: String,
    pub kind: String,
    pub within: String,
    pub units: i64,
}

/// What the calendar knows ahead of any autoscaler: per pool kind (retired
/// pools left out, every other one listed, 0 when nothing is booked) and
/// look-ahead, the most units that pending, approved and active bookings
/// hold at any one instant from now to now + the look-ahead. The peak is at
/// now or at a booking's start, so only those instants are counted.
pub async fn booked_ahead(db: &PgPool) -> Result<Vec<BookedAhead>, sqlx::Error> {
    let (labels, minutes): (Vec<&str>, Vec<i32>) = AHEAD.into_iter().unzip();
    sqlx::query_as(
        "WITH ahead AS (SELECT * FROM unnest($1::text[], $2::int4[]) AS a(within, minutes)),
         live AS (
             SELECT pool_id, kind, quantity, starts_at, ends_at FROM booking
             WHERE state IN ('pending', 'approved', 'active') AND ends_at > now()
               AND starts_at < now() + make_interval(mins => (SELECT max(minutes) FROM ahead))),
         instants AS (
             SELECT a.within, a.minutes, l.pool_id, l.kind, greatest(l.starts_at, now()) AS at
             FROM ahead a JOIN live l ON l.starts_at < now() + make_interval(mins => a.minutes)),
         held AS (
             SELECT i.within, i.pool_id, i.kind, i.at, sum(l.quantity) AS units
             FROM instants i JOIN live l ON l.pool_id = i.pool_id AND l.kind = i.kind
                                        AND l.starts_at <= i.at AND l.ends_at > i.at
             GROUP BY 1, 2, 3, 4)
         SELECT p.name AS pool, k.kind, a.within,
                coalesce((SELECT max(h.units) FROM held h
                          WHERE h.within = a.within AND h.pool_id = k.pool_id AND h.kind = k.kind), 0)::int8 AS units
         FROM pool_kind k JOIN pool p ON p.id = k.pool_id CROSS JOIN ahead a
         WHERE p.retired_at IS NULL
         ORDER BY 1, 2, a.minutes",
    )
    .bind(labels)
    .bind(minutes)
    .fetch_all(db)
    .await
}

/// Request durations by route template (never the raw path: ids would make
/// every booking a new series), method and status.
pub async fn track_http(request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());
    let method = request.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    histogram!(
        "berth_http_request_duration_seconds",
        "route" => route.unwrap_or_else(|| "unmatched".into()),
        "method" => method,
        "status" => response.status().as_u16().to_string(),
    )
    .record(started.elapsed().as_secs_f64());
    response
}

/// 1 while this process's worker leads `cluster` (a hub leads several:
/// one series each, so one lead ending does not hide the others).
pub fn leader(cluster: &str, leading: bool) {
    gauge!("berth_worker_leader", "cluster" => cluster.to_string()).set(if leading { 1.0 } else { 0.0 });
}

/// One worker pass: its duration, and whether it failed.
pub fn worker_pass(pass: &'static str, took: Duration, failed: bool) {
    histogram!("berth_worker_pass_duration_seconds", "pass" => pass).record(took.as_secs_f64());
    counter!("berth_worker_passes_total", "pass" => pass, "outcome" => if failed { "failed" } else { "ok" })
        .increment(1);
}

/// One pass over one cluster (`berth worker` may drive several): how long,
/// and whether the cluster's API server answered it (`berth_cluster_up`).
pub fn cluster_pass(cluster: &str, pass: &'static str, took: Duration, reached: bool) {
    histogram!("berth_cluster_pass_duration_seconds", "cluster" => cluster.to_owned(), "pass" => pass)
        .record(took.as_secs_f64());
    gauge!("berth_cluster_up", "cluster" => cluster.to_owned()).set(if reached { 1.0 } else { 0.0 });
}

/// A pass that failed outright, by what failed (`WorkerError::metric_label`:
/// kube, database, service, serialize).
pub fn worker_pass_error(pass: &'static str, error: &'static str) {
    counter!("berth_worker_pass_errors_total", "pass" => pass, "error" => error).increment(1);
}

/// One request to the Kubernetes API, by verb and answer.
pub fn kubernetes_request(verb: &'static str, status: &str) {
    counter!("berth_kubernetes_requests_total", "verb" => verb, "status" => status.to_owned()).increment(1);
}

/// One notification delivery attempt, by channel (email, webhook) and outcome (sent, failed).
pub fn notification(channel: &str, outcome: &'static str) {
    counter!("berth_notifications_total", "channel" => channel.to_owned(), "outcome" => outcome).increment(1);
}

/// One usage sampling round: how long, how many PromQL queries, and whether
/// Prometheus could be read.
pub fn usage_round(took: Duration, queries: usize, gap: bool) {
    histogram!("berth_usage_round_duration_seconds").record(took.as_secs_f64());
    counter!("berth_usage_queries_total").increment(queries as u64);
    counter!("berth_usage_rounds_total", "outcome" => if gap { "gap" } else { "ok" }).increment(1);
}
