//! Metrics as Prometheus sees them: a real Prometheus (Debian package)
//! scrapes a running `berth serve`, `promtool check metrics` accepts the
//! exposition, and the alert rules of deploy/ pass `promtool check rules`
//! and a `promtool test rules` case for each alert.

use crate::common;

use common::fresh_db;
use common::processes::{berth_output, repo_root, PrometheusProcess, Server};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The PrometheusRule's `spec` is a Prometheus rules file.
fn rules_file(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo_root().join("deploy/base/monitoring.yaml")).unwrap();
    let rule = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| serde_yaml_ng::Value::deserialize(doc).unwrap())
        .find(|doc| doc["kind"] == "PrometheusRule")
        .expect("a PrometheusRule in deploy/base/monitoring.yaml");
    let path = dir.join("berth-rules.yaml");
    std::fs::write(&path, serde_yaml_ng::to_string(&rule["spec"]).unwrap()).unwrap();
    path
}

use serde::Deserialize;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("berth-{name}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn promtool(args: &[&str], dir: &std::path::Path) -> String {
    let output = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool is installed (`make test` installs prometheus)");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "promtool {args:?}:\n{text}");
    text
}

#[test]
fn every_alert_rule_is_valid_and_fires_exactly_when_its_test_says() {
    let dir = temp_dir("rules");
    let rules = rules_file(&dir);
    let checked = promtool(&["check", "rules", rules.to_str().unwrap()], &dir);
    assert!(checked.contains("SUCCESS: 10 rules found"), "{checked}");
    std::fs::copy(repo_root().join("server/tests/prometheus/alerts-test.yaml"), dir.join("alerts-test.yaml")).unwrap();
    let tested = promtool(&["test", "rules", "alerts-test.yaml"], &dir);
    assert!(tested.contains("SUCCESS"), "{tested}");
    let cases = std::fs::read_to_string(dir.join("alerts-test.yaml")).unwrap();
    for alert in [
        "BerthNoWorkerLeading",
        "BerthWorkerPassesFailing",
        "BerthClusterUnreachable",
        "BerthAdmissionErrors",
        "BerthDatabaseUnreachable",
        "BerthSessionNamespaceStuck",
    ] {
        assert!(cases.contains(&format!("alertname: {alert}")), "no promtool case for {alert}");
    }
    for record in ["berth:booked_units:peak_15m", "berth:booked_units:peak_1h", "berth:booked_units:peak_24h"] {
        assert!(cases.contains(&format!("expr: {record}")), "no promtool case for {record}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_prometheus_scrapes_berth_and_promtool_accepts_the_exposition() {
    let db = fresh_db().await;
    let name: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&db).await.unwrap();
    let url = format!("{}/{name}", std::env::var("DATABASE_URL").unwrap().rsplit_once('/').unwrap().0);
    berth_output(&url, &["seed-demo"]);
    let server = Server::start(&url, &[]);
    let client = reqwest::Client::new();
    for path in ["/", "/healthz", "/readyz", "/api/v1/pools", "/no/such/page"] {
        client.get(format!("{}{path}", server.url)).send().await.unwrap();
    }

    // The worker's first pass may still be running when the server answers;
    // wait (bounded) for it to be counted before checking the exposition.
    let deadline = Instant::now() + Duration::from_secs(30);
    let exposition = loop {
        let text = client.get(&server.metrics_url).send().await.unwrap().text().await.unwrap();
        if text.contains("berth_worker_pass_duration_seconds_bucket{pass=\"start\"") || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(check.stdin.as_mut().unwrap(), exposition.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    for name in [
        "berth_http_request_duration_seconds_bucket{route=\"/api/v1/pools\",method=\"GET\",status=\"401\"",
        "berth_bookings{state=\"pending\"}",
        "berth_waitlist_waiting",
        "berth_sessions{step_state=\"done\"}",
        "berth_worker_leader{cluster=\"default\"} 1",
        "berth_worker_pass_duration_seconds_bucket{pass=\"start\"",
        "berth_kubernetes_requests_total{verb=\"get\"",
        "berth_database_up 1",
        "berth_booked_units{pool=\"lab-h100\",kind=\"nvidia.com/mig-1g.24gb\",within=\"1h\"}",
        "berth_database_connections{state=\"idle\"}",
    ] {
        assert!(exposition.contains(name), "{name} missing from:\n{exposition}");
    }
    assert!(!exposition.contains("route=\"/api/v1/pools/"), "raw paths must not become labels");

    // A real Prometheus scraping every second.
    let dir = temp_dir("prometheus");
    let target = server.metrics_url.trim_start_matches("http://").trim_end_matches("/metrics").to_string();
    let prometheus = PrometheusProcess::start(
        &dir,
        &format!("  - job_name: berth\n    static_configs:\n      - targets: ['{target}']\n"),
    );
    let base = prometheus.url.trim_end_matches('/').to_string();
    let query = |q: &str| client.get(format!("{base}/api/v1/query")).query(&[("query", q)]).send();
    let deadline = Instant::now() + Duration::from_secs(30);
    let leader = loop {
        let answer = match query("berth_worker_leader{job=\"berth\"}").await {
            Ok(response) => response.json::<serde_json::Value>().await.ok(),
            Err(_) => None,
        };
        let value = answer.as_ref().and_then(|a| a["data"]["result"][0]["value"][1].as_str().map(str::to_owned));
        if let Some(value) = value {
            break value;
        }
        assert!(Instant::now() < deadline, "Prometheus did not scrape berth within 30 s: {answer:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(leader, "1");
    let up: serde_json::Value = query("up{job=\"berth\"}").await.unwrap().json().await.unwrap();
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "{up}");
    drop(prometheus);
    std::fs::remove_dir_all(&dir).ok();
}
