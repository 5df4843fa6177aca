//! Usage and reports benchmark (`make bench-usage`): a real PostgreSQL
//! (`DATABASE_URL`, empty) and a real Prometheus. Prints; asserts nothing.
//!
//! 1. Reports over one year: 100 000 bookings and the hourly usage of 200
//!    sessions live at every moment (1.75 M usage rows and their hourly, daily
//!    and monthly roll-ups), past months' bookings rolled up as the worker's
//!    sweep does. Server time of
//!    `GET /api/v1/reports/utilization` per pool, tenant and user, and of the
//!    `/reports` page's SSR, p50/p99 over repeated requests.
//! 2. Sampler: PromQL queries per round and round time for 1 and 1 000 live
//!    sessions, Prometheus scraping the simulated cluster's DCGM exporter.

#[path = "../tests/it/common/processes.rs"]
#[allow(dead_code)]
mod processes;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chrono::{Duration, DurationRound, Utc};
use http_body_util::BodyExt;
use server::usage::{minute_of, prometheus::Prometheus, Sampler};
use sqlx::PgPool;
use std::time::Instant;
use tower::ServiceExt;

const REPEATS: usize = 40;

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 * q).ceil() as usize).clamp(1, ms.len()) - 1];
    (at(0.5), at(0.99))
}

async fn seed_year(db: &PgPool) -> chrono::DateTime<Utc> {
    let year_start = (Utc::now() - Duration::days(365)).duration_trunc(Duration::hours(1)).unwrap();
    let started = Instant::now();
    sqlx::raw_sql(
        "INSERT INTO tenant (slug, name) SELECT 'bt-' || i, 'Bench ' || i FROM generate_series(1, 20) i;
         INSERT INTO app_user (email, name) SELECT 'u' || i || '@bench.test', 'User ' || i FROM generate_series(1, 200) i;
         INSERT INTO membership (user_id, tenant_id)
           SELECT u.id, t.id FROM app_user u JOIN tenant t
             ON t.slug = 'bt-' || (1 + substring(u.email FROM '^u([0-9]+)@')::int % 20);
         INSERT INTO pool (name, price_per_gpu_hour) SELECT 'bp-' || i, 2.5 FROM generate_series(1, 4) i;
         INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu, created_at)
           SELECT id, 'nvidia.com/gpu', 40, 1, '2020-01-01Z' FROM pool WHERE name LIKE 'bp-%';
         INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu, created_at)
           SELECT id, 'nvidia.com/mig-1g.24gb', 70, 4, '2020-01-01Z' FROM pool WHERE name LIKE 'bp-%';",
    )
    .execute(db)
    .await
    .unwrap();
    // 200 lanes of 500 back-to-back bookings of 17.52 h: 200 sessions live at every moment of the year.
    sqlx::query(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state,
                              planned_ends_at, released_as)
         SELECT p.id, CASE WHEN l % 2 = 0 THEN 'nvidia.com/gpu' ELSE 'nvidia.com/mig-1g.24gb' END, u.id, m.tenant_id,
                1, 'interactive', $1 + make_interval(secs => j * 63072),
                $1 + make_interval(secs => j * 63072 + CASE WHEN j % 10 = 0 THEN 31536 ELSE 63072 END),
                'completed',
                CASE WHEN j % 10 = 0 THEN $1 + make_interval(secs => (j + 1) * 63072) END,
                CASE WHEN j % 10 = 0 THEN 'ended_early' END
         FROM generate_series(0, 199) l
         JOIN pool p ON p.name = 'bp-' || (1 + l % 4)
         JOIN app_user u ON u.email = 'u' || (l + 1) || '@bench.test'
         JOIN membership m ON m.user_id = u.id
         CROSS JOIN generate_series(0, 499) j",
    )
    .bind(year_start)
    .execute(db)
    .await
    .unwrap();
    sqlx::raw_sql(
        "INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                                 memory_max_mib, energy_wh, simulated)
         SELECT b.id, h, b.pool_id, b.tenant_id, b.user_id, 60, 60 * (0.2 + 0.6 * random()), 20000, 300, true
         FROM booking b
         CROSS JOIN LATERAL generate_series(date_trunc('hour', b.starts_at, 'UTC'), b.ends_at - interval '1 second',
                                            interval '1 hour') h
         ON CONFLICT DO NOTHING;
         INSERT INTO usage_pool_hour (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, simulated)
           SELECT u.pool_id, u.hour, sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)),
                  sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)), true
           FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2;
         INSERT INTO usage_day (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
           SELECT (u.hour AT TIME ZONE 'UTC')::date, u.pool_id, u.tenant_id, u.user_id,
                  sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)), sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)), true
           FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2, 3, 4;
         INSERT INTO usage_month (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
           SELECT date_trunc('month', day::timestamp)::date, pool_id, tenant_id, user_id,
                  sum(busy_gpu_minutes), sum(sampled_gpu_minutes), true
           FROM usage_day GROUP BY 1, 2, 3, 4;
         INSERT INTO booking_refusal (pool_id, kind, tenant_id, user_id, quantity, starts_at, ends_at, reason)
           SELECT pool_id, kind, tenant_id, user_id, 2, starts_at, ends_at, 'capacity' FROM booking TABLESAMPLE BERNOULLI (5);
         ANALYZE;",
    )
    .execute(db)
    .await
    .unwrap();
    let counts: (i64, i64) = sqlx::query_as("SELECT (SELECT count(*) FROM booking), (SELECT count(*) FROM usage_hour)")
        .fetch_one(db)
        .await
        .unwrap();
    println!(
        "seeded a year: {} bookings, {} usage hours in {:.0} s",
        counts.0,
        counts.1,
        started.elapsed().as_secs_f64()
    );
    year_start
}

async fn timed_get(app: &axum::Router, token: &str, path: &str) -> Vec<f64> {
    let mut ms = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let request =
            Request::get(path).header(header::AUTHORIZATION, format!("Bearer {token}")).body(Body::empty()).unwrap();
        let started = Instant::now();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status, StatusCode::OK, "{path}: {}", String::from_utf8_lossy(&body));
    }
    ms
}

async fn reports(db: &PgPool) {
    let year_start = seed_year(db).await;
    // What the worker's sweep does within five minutes of starting.
    let started = Instant::now();
    let months = app::backend::reports::rollups::settle_due(db).await.unwrap();
    println!("the sweep rolled up {months} past months in {:.2} s", started.elapsed().as_secs_f64());
    let manager =
        app::backend::accounts::users::upsert_user(db, "mgr@bench.test", "Manager", app::model::Role::Manager, "bt-1")
            .await
            .unwrap();
    let token =
        app::backend::accounts::tokens::issue(db, manager, "bench", Duration::days(1), app::model::TokenScope::Full)
            .await
            .unwrap()
            .token;
    let config = server::auth::AuthConfig::local("http://127.0.0.1:3000".parse().unwrap());
    let app =
        server::router(server::AppState::new(db.clone(), "target/site", server::auth::Auth::new(config).unwrap()));
    let from = year_start.format("%Y-%m-%d").to_string();
    let to = Utc::now().format("%Y-%m-%d").to_string();
    println!("\nreports over {from} .. {to} ({REPEATS} requests each, server time in-process)");
    println!("{:<44} {:>9} {:>9}", "request", "p50 ms", "p99 ms");
    for group in ["pool", "tenant", "user"] {
        let path = format!("/api/v1/reports/utilization?from={from}&to={to}&group={group}");
        let (p50, p99) = percentiles(timed_get(&app, &token, &path).await);
        println!("{:<44} {p50:>9.1} {p99:>9.1}", format!("API, a year, by {group}"));
    }
    let path = format!(
        "/api/v1/reports/utilization?from={}&to={to}&group=user",
        (Utc::now() - Duration::days(30)).format("%Y-%m-%d")
    );
    let (p50, p99) = percentiles(timed_get(&app, &token, &path).await);
    println!("{:<44} {p50:>9.1} {p99:>9.1}", "API, 30 days, by user");
    for (label, path) in [
        ("SSR /reports, this week by pool", "/reports".to_string()),
        ("SSR /reports, this month by user", "/reports?period=month&group=user".to_string()),
        ("SSR /reports, the year by tenant", format!("/reports?period=custom&date={from}&until={to}&group=tenant")),
    ] {
        let (p50, p99) = percentiles(timed_get(&app, &token, &path).await);
        println!("{label:<44} {p50:>9.1} {p99:>9.1}");
    }
}

/// `sessions` active bookings whose workspaces are open, so the simulated exporter reports them busy.
async fn live_sessions(db: &PgPool, sessions: i32) {
    sqlx::raw_sql(
        "TRUNCATE usage_minute, usage_hour, usage_pool_hour, usage_day, usage_gap; UPDATE booking SET state = 'completed' WHERE state = 'active';",
    )
    .execute(db)
    .await
    .unwrap();
    sqlx::query(
        "WITH made AS (
             INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
             SELECT p.id, 'nvidia.com/mig-1g.24gb', u.id, m.tenant_id, 1, 'interactive',
                    now() - interval '1 hour', now() + interval '1 hour', 'active'
             FROM generate_series(1, $1) i
             JOIN pool p ON p.name = 'bp-' || (1 + i % 4)
             JOIN app_user u ON u.email = 'u' || (1 + i % 200) || '@bench.test'
             JOIN membership m ON m.user_id = u.id
             RETURNING id)
         INSERT INTO workspace_open (booking_id) SELECT id FROM made",
    )
    .bind(sessions)
    .execute(db)
    .await
    .unwrap();
}

async fn sampler(db: &PgPool) {
    // The simulated cluster's DCGM exporter, as `berth serve` exposes it, scraped every second.
    let port = processes::free_port();
    let exporter_db = db.clone();
    let exporter = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let db = exporter_db.clone();
            async move { server::usage::simulated::exposition(&db, Utc::now()).await.unwrap_or_default() }
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, exporter).await.unwrap() });
    let dir = std::env::temp_dir().join(format!("berth-usage-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scrape = format!(
        "  - job_name: dcgm\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    );
    let prometheus = processes::PrometheusProcess::start(&dir, &scrape);
    let client = Prometheus::new(prometheus.url.parse().unwrap(), None).unwrap();
    let sampler =
        Sampler { prometheus: client, selector: Default::default(), threshold: Default::default(), simulated: true };
    println!("\nsampler against a real Prometheus scraping the simulated DCGM exporter");
    println!("{:<14} {:>8} {:>10} {:>12} {:>12}", "live sessions", "queries", "rows", "round p50 ms", "round max ms");
    for sessions in [1, 1000] {
        live_sessions(db, sessions).await;
        // Let Prometheus scrape the new sessions a few times.
        tokio::time::sleep(std::time::Duration::from_secs(6)).await;
        // The minute in progress: Prometheus has only scraped for a few seconds.
        let minute = minute_of(Utc::now());
        let mut ms = Vec::new();
        let mut last = None;
        for _ in 0..5 {
            sqlx::raw_sql("TRUNCATE usage_minute, usage_hour, usage_pool_hour, usage_day").execute(db).await.unwrap();
            let started = Instant::now();
            let round = sampler.round(db, minute).await.unwrap();
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
            last = Some(round);
        }
        let round = last.unwrap();
        let max = ms.iter().copied().fold(0.0, f64::max);
        let (p50, _) = percentiles(ms);
        println!("{sessions:<14} {:>8} {:>10} {p50:>12.1} {max:>12.1}", round.queries, round.rows);
    }
    drop(prometheus);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::main]
async fn main() {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL names an empty database");
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(8).connect(&url).await.expect("PostgreSQL");
    app::backend::MIGRATOR.run(&db).await.expect("migrations");
    reports(&db).await;
    sampler(&db).await;
}
