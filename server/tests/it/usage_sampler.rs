//! The usage sampler against a real Prometheus (Debian package) scraping
//! DCGM-format endpoints this test serves: both namespace label spellings, a
//! MIG instance measured through GR_ENGINE_ACTIVE, history backfilled with
//! `promtool tsdb create-blocks-from openmetrics`, and Prometheus stopped
//! mid-run recorded as a gap with nothing invented.

use crate::common;

use chrono::{DateTime, Duration, Timelike, Utc};
use common::processes::{free_port, PrometheusProcess};
use common::Fixture;
use server::usage::{minute_of, prometheus::Prometheus, Sampler};
use std::process::Command;
use std::time::Instant;
use uuid::Uuid;

/// An active booking of `email`'s on the demo pool over `[start, end)`,
/// written as the worker would have left it; returns its id and namespace.
async fn active_booking(
    f: &Fixture,
    email: &str,
    kind: &str,
    units: i32,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> (Uuid, String) {
    let id = Uuid::new_v4();
    let (user, tenant, slug): (Uuid, Uuid, String) = sqlx::query_as(
        "SELECT u.id, t.id, t.slug FROM app_user u JOIN membership m ON m.user_id = u.id JOIN tenant t ON t.id = m.tenant_id
         WHERE u.email = $1",
    )
    .bind(email)
    .fetch_one(&f.db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO booking (id, pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
         VALUES ($1, $2, $3, $4, $5, $6, 'interactive', $7, $8, 'active')",
    )
    .bind(id)
    .bind(f.lab)
    .bind(kind)
    .bind(user)
    .bind(tenant)
    .bind(units)
    .bind(start)
    .bind(end)
    .execute(&f.db)
    .await
    .unwrap();
    (id, server::provisioner::manifests::namespace_name(&slug, id))
}

/// Serves `body` at http://127.0.0.1:<port>/metrics.
async fn dcgm_endpoint(body: String) -> u16 {
    let port = free_port();
    let app = axum::Router::new().route("/metrics", axum::routing::get(move || std::future::ready(body.clone())));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    port
}

fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("berth-usage-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(dir.join("data")).unwrap();
    dir
}

type MinuteRow = (f32, f32, Option<f32>, i16, bool);

async fn minute_row(f: &Fixture, booking: Uuid, minute: DateTime<Utc>) -> Option<MinuteRow> {
    sqlx::query_as("SELECT busy, memory_used_mib, power_w, devices, simulated FROM usage_minute WHERE booking_id = $1 AND minute = $2")
        .bind(booking)
        .bind(minute)
        .fetch_optional(&f.db)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn measured_through_a_real_prometheus_with_history_and_a_gap() {
    let f = Fixture::new().await;
    let now = Utc::now();
    let (whole, whole_ns) =
        active_booking(&f, "ada@a.test", "nvidia.com/gpu", 1, now - Duration::hours(3), now + Duration::hours(1)).await;
    let (mig, mig_ns) = active_booking(
        &f,
        "bob@b.test",
        "nvidia.com/mig-1g.24gb",
        2,
        now - Duration::minutes(30),
        now + Duration::hours(1),
    )
    .await;

    // History: the whole GPU 90 % busy two hours ago, backfilled into the TSDB
    // before Prometheus starts.
    let dir = temp_dir();
    let past = minute_of(now - Duration::hours(2));
    let mut history = String::from("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
    for step in 0..=8 {
        let at = past + Duration::seconds(15 * step);
        history.push_str(&format!(
            "DCGM_FI_DEV_GPU_UTIL{{job=\"dcgm-honoured\",namespace=\"{whole_ns}\",pod=\"workspace-0\",UUID=\"GPU-1\",gpu=\"0\"}} 90 {}\n",
            at.timestamp()
        ));
    }
    history.push_str("# EOF\n");
    std::fs::write(dir.join("history.om"), history).unwrap();
    let backfill = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics", "history.om", "data"])
        .current_dir(&dir)
        .output()
        .expect("promtool is installed (`make test` installs prometheus)");
    assert!(backfill.status.success(), "{}", String::from_utf8_lossy(&backfill.stderr));

    // Now: the whole GPU honours labels (`namespace`); the MIG slices come
    // through a ServiceMonitor without honorLabels (`exported_namespace`).
    let whole_port = dcgm_endpoint(format!(
        "DCGM_FI_DEV_GPU_UTIL{{namespace=\"{whole_ns}\",pod=\"workspace-0\",UUID=\"GPU-1\",gpu=\"0\"}} 60\n\
         DCGM_FI_DEV_FB_USED{{namespace=\"{whole_ns}\",pod=\"workspace-0\",UUID=\"GPU-1\",gpu=\"0\"}} 30000\n\
         DCGM_FI_DEV_POWER_USAGE{{namespace=\"{whole_ns}\",pod=\"workspace-0\",UUID=\"GPU-1\",gpu=\"0\"}} 350\n\
         DCGM_FI_DEV_GPU_UTIL{{namespace=\"somebody-else\",pod=\"x\",UUID=\"GPU-9\",gpu=\"3\"}} 100\n"
    ))
    .await;
    let mig_series = |instance: &str, active: f64, memory: f64| {
        let labels = format!(
            "namespace=\"{mig_ns}\",pod=\"workspace-0\",UUID=\"GPU-2\",gpu=\"1\",GPU_I_ID=\"{instance}\",GPU_I_PROFILE=\"1g.24gb\""
        );
        format!("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} {active}\nDCGM_FI_DEV_FB_USED{{{labels}}} {memory}\nDCGM_FI_DEV_POWER_USAGE{{{labels}}} 400\n")
    };
    // One instance idles below the 10 % threshold, the other works.
    let mig_port = dcgm_endpoint(mig_series("1", 0.05, 1000.0) + &mig_series("2", 0.4, 3000.0)).await;
    // A hostile tenant's pod in the whole GPU's namespace, scraped by
    // annotation, imitates idle devices in the MIG session's namespace: once
    // renamed (its target is a session namespace; the job name even passes
    // the selector), once with its labels honoured (only the job tells).
    let fake = format!(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{namespace=\"{mig_ns}\",pod=\"workspace-0\",UUID=\"GPU-X\",gpu=\"7\"}} 0\n"
    );
    let fake_port = dcgm_endpoint(fake).await;
    let mut prometheus = PrometheusProcess::start(
        &dir,
        &format!(
            "  - job_name: dcgm-honoured\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{whole_port}']\n        labels: {{namespace: gpu-operator}}\n\
             \x20 - job_name: dcgm-renamed\n    static_configs:\n      - targets: ['127.0.0.1:{mig_port}']\n        labels: {{namespace: gpu-operator}}\n\
             \x20 - job_name: dcgm-tenant-pods\n    static_configs:\n      - targets: ['127.0.0.1:{fake_port}']\n        labels: {{namespace: {whole_ns}}}\n\
             \x20 - job_name: tenant-pods-honoured\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{fake_port}']\n"
        ),
    );
    let sampler = Sampler {
        prometheus: Prometheus::new(prometheus.url.parse().unwrap(), None).unwrap(),
        selector: r#"job=~"dcgm-.+""#.parse().unwrap(),
        threshold: Default::default(),
        simulated: false,
    };

    // Wait for a few scrapes of both endpoints.
    let probe = Prometheus::new(prometheus.url.parse().unwrap(), None).unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let seen = probe.vector("count(DCGM_FI_DEV_FB_USED{namespace=~\"berth-.+\"} or DCGM_FI_DEV_FB_USED{exported_namespace=~\"berth-.+\"}) + count(DCGM_FI_PROF_GR_ENGINE_ACTIVE{job=~\".*tenant-pods.*\"})", Utc::now()).await;
        if seen.as_ref().is_ok_and(|v| v.first().is_some_and(|s| s.value == 5.0)) {
            break;
        }
        assert!(Instant::now() < deadline, "Prometheus did not scrape both endpoints: {seen:?}");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    // A minute only a moment old may not hold a scrape yet.
    if Utc::now().second() < 3 {
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    }

    let minute = minute_of(Utc::now());
    let round = sampler.round(&f.db, minute).await.unwrap();
    assert_eq!((round.live, round.queries, round.rows, round.gap), (2, 4, 2, false), "{round:?}");
    let (busy, memory, power, devices, simulated) =
        minute_row(&f, whole, minute).await.expect("the whole GPU measured");
    assert_eq!((busy, memory, power, devices, simulated), (0.6, 30000.0, Some(350.0), 1, false));
    let (busy, memory, power, devices, _) = minute_row(&f, mig, minute).await.expect("the MIG slices measured");
    assert!((busy - 0.225).abs() < 1e-6, "mean GR_ENGINE_ACTIVE of the two instances: {busy}");
    assert_eq!((memory, power, devices), (4000.0, None, 2), "a MIG instance's power is its GPU's, not summed");
    // The hour's roll-up counts busy unit-minutes (0.225 × 2 units) and
    // active ones: one of the two instances reached the threshold, so one
    // of the two units was active.
    let (samples, busy_unit_minutes, active_unit_minutes): (i32, f64, f64) =
        sqlx::query_as("SELECT samples, busy_unit_minutes, active_unit_minutes FROM usage_hour WHERE booking_id = $1")
            .bind(mig)
            .fetch_one(&f.db)
            .await
            .unwrap();
    assert_eq!(samples, 1);
    assert!((busy_unit_minutes - 0.45).abs() < 1e-6, "{busy_unit_minutes}");
    assert!((active_unit_minutes - 1.0).abs() < 1e-6, "{active_unit_minutes}");
    // Each device's own minute, named as people name it, for the charts.
    let devices: Vec<(String, f32, f32)> = sqlx::query_as(
        "SELECT device, busy, memory_used_mib FROM usage_device_minute WHERE booking_id = $1 AND minute = $2 ORDER BY device",
    )
    .bind(mig)
    .bind(minute)
    .fetch_all(&f.db)
    .await
    .unwrap();
    assert_eq!(
        devices,
        [("GPU 1 · MIG 1g.24gb #1".to_string(), 0.05, 1000.0), ("GPU 1 · MIG 1g.24gb #2".to_string(), 0.4, 3000.0)]
    );
    let threshold: f32 =
        sqlx::query_scalar("SELECT active_threshold FROM usage_policy").fetch_one(&f.db).await.unwrap();
    assert!((threshold - 0.1).abs() < 1e-6, "the threshold judged by is recorded for reports: {threshold}");
    // The same minute again (a worker hand-over) is stored and counted once.
    sampler.round(&f.db, minute).await.unwrap();
    let samples: i32 = sqlx::query_scalar("SELECT samples FROM usage_hour WHERE booking_id = $1")
        .bind(mig)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(samples, 1);
    // The reports' roll-ups hold the same minutes, once, in whole-GPU minutes
    // (2 of the four 1g.24gb slices that fill a GPU = 1/2 GPU).
    let (by_booking, by_pool, by_day, by_month): (f64, f64, f64, f64) = sqlx::query_as(
        "SELECT (SELECT sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)) FROM usage_hour u JOIN booking b ON b.id = u.booking_id),
                (SELECT sum(busy_gpu_minutes) FROM usage_pool_hour), (SELECT sum(busy_gpu_minutes) FROM usage_day),
                (SELECT sum(busy_gpu_minutes) FROM usage_month)",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!((by_booking - (0.6 + 0.45 / 4.0)).abs() < 1e-6, "{by_booking}");
    assert!(
        [by_pool, by_day, by_month].iter().all(|rolled| (rolled - by_booking).abs() < 1e-9),
        "{by_pool} {by_day} {by_month}"
    );
    // Active GPU-minutes: the whole GPU (60 %) and one of the two slices.
    let (pool_active, day_active, month_active): (f64, f64, f64) = sqlx::query_as(
        "SELECT (SELECT sum(active_gpu_minutes) FROM usage_pool_hour), (SELECT sum(active_gpu_minutes) FROM usage_day),
                (SELECT sum(active_gpu_minutes) FROM usage_month)",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    for rolled in [pool_active, day_active, month_active] {
        assert!((rolled - (1.0 + 1.0 / 4.0)).abs() < 1e-9, "{pool_active} {day_active} {month_active}");
    }

    // The backfilled past: only the whole GPU was live then.
    let round = sampler.round(&f.db, past).await.unwrap();
    assert_eq!((round.live, round.rows, round.gap), (1, 1, false), "{round:?}");
    let (busy, ..) = minute_row(&f, whole, past).await.expect("history measured");
    assert!((busy - 0.9).abs() < 1e-6, "{busy}");

    // Prometheus stops: the next minute is a gap, and no figure is made up.
    prometheus.stop();
    let next = minute + Duration::minutes(1);
    let round = sampler.round(&f.db, next).await.unwrap();
    assert!(round.gap, "{round:?}");
    assert_eq!(minute_row(&f, whole, next).await, None);
    assert_eq!(minute_row(&f, mig, next).await, None);
    let gaps: i64 = sqlx::query_scalar("SELECT count(*) FROM usage_gap WHERE minute = $1")
        .bind(next)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(gaps, 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_simulated_clusters_dcgm_exporter_is_busy_while_the_workspace_is_open() {
    let f = Fixture::new().await;
    let now = Utc::now();
    let (opened, _) =
        active_booking(&f, "ada@a.test", "nvidia.com/gpu", 1, now - Duration::minutes(10), now + Duration::hours(1))
            .await;
    let (idle, _) = active_booking(
        &f,
        "bob@b.test",
        "nvidia.com/mig-1g.24gb",
        2,
        now - Duration::minutes(10),
        now + Duration::hours(1),
    )
    .await;
    server::usage::record_workspace_open(&f.db, opened).await.unwrap();

    // promtool accepts the exposition as the exporter's format.
    let text = server::usage::simulated::exposition(&f.db, Utc::now()).await.unwrap();
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(check.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    // The exporter's own label names (UUID, modelName, GPU_I_ID…) are not
    // snake_case; that lint is the only complaint allowed.
    let complaints =
        format!("{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    let other: Vec<&str> = complaints
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("label names should be written in 'snake_case'"))
        .collect();
    assert!(other.is_empty(), "promtool check metrics:\n{complaints}");
    assert!(text.contains("simulated=\"true\""), "{text}");

    // Scraped by a real Prometheus and sampled like a real exporter.
    let db = f.db.clone();
    let port = free_port();
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let db = db.clone();
            async move { server::usage::simulated::exposition(&db, Utc::now()).await.unwrap() }
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let dir = temp_dir();
    let prometheus = PrometheusProcess::start(
        &dir,
        &format!("  - job_name: simulated-dcgm\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"),
    );
    let sampler = Sampler {
        prometheus: Prometheus::new(prometheus.url.parse().unwrap(), None).unwrap(),
        selector: Default::default(),
        threshold: Default::default(),
        simulated: true,
    };
    // Generous: under the full test run Prometheus may take a while to start and scrape.
    // The minute is taken afresh each try: a minute that ended before
    // Prometheus's first scrape holds no samples and never will.
    let deadline = Instant::now() + std::time::Duration::from_secs(90);
    let minute = loop {
        let minute = minute_of(Utc::now());
        let round = sampler.round(&f.db, minute).await.unwrap();
        if round.rows == 2 {
            break minute;
        }
        assert!(Instant::now() < deadline, "never measured both sessions: {round:?}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        sqlx::query("DELETE FROM usage_minute").execute(&f.db).await.unwrap();
        sqlx::query("DELETE FROM usage_hour").execute(&f.db).await.unwrap();
    };
    let (busy, _, power, devices, simulated) = minute_row(&f, opened, minute).await.unwrap();
    assert!((0.65..=0.95).contains(&busy) && power.is_some() && devices == 1 && simulated, "{busy} {power:?}");
    let (busy, _, power, devices, simulated) = minute_row(&f, idle, minute).await.unwrap();
    assert!(busy <= 0.03 && power.is_none() && devices == 2 && simulated, "{busy}");
    std::fs::remove_dir_all(&dir).ok();
}
