//! One meaning of "GPU-hours" (issue 35.5): known windows booked on the demo
//! pool (1 whole GPU and 4 MIG 1g.24gb slices, four of which fill a GPU),
//! then the same figures read from all five places that count them: the
//! tenant dashboard, the report, the quota's use, showback and tokenomics.

use crate::common;

use app::rules::quota::iso_week_of;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, DurationRound, Utc};
use chrono_tz::Europe::Berlin;
use common::{Fixture, GPU, MIG};
use serde_json::{json, Value};

fn hours_of_overlap(a: (DateTime<Utc>, DateTime<Utc>), b: (DateTime<Utc>, DateTime<Utc>)) -> f64 {
    ((a.1.min(b.1) - a.0.max(b.0)).num_seconds().max(0)) as f64 / 3600.0
}

/// An instant as a query parameter (`Z`, so nothing needs escaping).
fn z(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 0.006)
}

/// Every number in `value` is rounded to two decimals and not negative.
fn all_figures_shown(value: &Value, path: &str) {
    match value {
        Value::Number(n) => {
            let v = n.as_f64().unwrap();
            assert!(v >= 0.0, "{path} = {v} is negative");
            assert!(((v * 100.0).round() - v * 100.0).abs() < 1e-6, "{path} = {v} is not rounded");
        }
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, v)| all_figures_shown(v, &format!("{path}[{i}]")))
        }
        Value::Object(map) => map.iter().for_each(|(k, v)| all_figures_shown(v, &format!("{path}.{k}"))),
        _ => {}
    }
}

#[tokio::test]
async fn booked_windows_read_the_same_gpu_hours_on_all_five_pages() {
    let f = Fixture::new().await;
    // The admin states the slices' own price; the whole GPU pays the pool's 2.50 per GPU-hour.
    let kinds = json!({"kinds": [
        {"kind": GPU, "capacity": 1, "replicas_per_unit": 4, "vram_gb_per_unit": 96},
        {"kind": MIG, "capacity": 4, "replicas_per_unit": 2, "vram_gb_per_unit": 24, "price_per_unit_hour": 0.75},
    ]});
    let (status, pool) = f.call(Method::PATCH, &format!("/api/v1/pools/{}", f.lab), Some(&f.admin), Some(kinds)).await;
    assert_eq!(status, StatusCode::OK, "{pool}");
    let mig = pool["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == MIG).unwrap();
    assert_eq!((mig["slices_per_gpu"].as_i64(), mig["price_per_unit_hour"].as_f64()), (Some(4), Some(0.75)), "{pool}");
    assert_eq!(pool["price_per_gpu_hour"].as_f64(), Some(2.5), "{pool}");
    // The pool came into service ten days ago: capacity counts from then.
    sqlx::query("UPDATE pool_kind SET created_at = now() - interval '10 days' WHERE pool_id = $1")
        .bind(f.lab)
        .execute(&f.db)
        .await
        .unwrap();
    let since: DateTime<Utc> = sqlx::query_scalar("SELECT min(created_at) FROM pool_kind WHERE pool_id = $1")
        .bind(f.lab)
        .fetch_one(&f.db)
        .await
        .unwrap();

    // Ada (team-a): 1 GPU for 3 h and 2 slices for 2 h, both ended at the hour.
    let hour = Utc::now().duration_trunc(Duration::hours(1)).unwrap();
    let (gpu_window, mig_window) = ((hour - Duration::hours(3), hour), (hour - Duration::hours(2), hour));
    f.place(GPU, 1, gpu_window, "completed").await;
    f.place(MIG, 2, mig_window, "completed").await;
    // By hand: 3 GPU-hours + 2 x 2 slice-hours / 4 = 1 GPU-hour; showback 3 x 2.50 + 4 x 0.75.
    let (gpu_hours, mig_gpu_hours, showback) = (3.0, 1.0, 10.5);
    let week = iso_week_of(Utc::now(), &Berlin);
    let week = (week.start, week.end);
    let (gpu_this_week, mig_this_week) =
        (hours_of_overlap(gpu_window, week), hours_of_overlap(mig_window, week) * 2.0 / 4.0);

    // 1. The dashboard's week, per kind.
    let (status, dashboard) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{dashboard}");
    // A kind with nothing booked this week has no line: in the hour after
    // Berlin's Monday midnight (Sunday 23:00 UTC) the windows, which end
    // on the hour, all lie in the week before.
    let booked = |kind: &str| {
        let line = dashboard["budget"].as_array().unwrap().iter().find(|l| l["kind"] == kind).cloned();
        line.map_or(Value::from(0.0), |l| l["booked_hours"].clone())
    };
    assert!(close(&booked(GPU), gpu_this_week), "{dashboard}");
    assert!(close(&booked(MIG), mig_this_week), "{dashboard}");

    // 2. The report over the windows, and 4. its showback in the site's currency.
    let period = format!("from={}&to={}", z(gpu_window.0), z(gpu_window.1));
    let (status, report) =
        f.call(Method::GET, &format!("/api/v1/reports/utilization?{period}&group=tenant"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let team = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "team-a").unwrap();
    assert!(close(&team["booked_gpu_hours"], gpu_hours + mig_gpu_hours), "{team}");
    assert!(close(&team["showback_cost"], showback), "{team}");
    assert_eq!(report["currency"], "USD", "{report}");
    all_figures_shown(&report, "report");
    // By pool: 2 whole GPUs for the 3 hours; 4 of their 6 GPU-hours booked.
    let (_, by_pool) = f.call(Method::GET, &format!("/api/v1/reports/utilization?{period}"), Some(&f.mia), None).await;
    let lab = by_pool["rows"].as_array().unwrap().iter().find(|r| r["id"] == f.lab.to_string()).unwrap();
    assert!(close(&lab["capacity_gpu_hours"], 6.0), "{lab}");
    assert!(close(&lab["booking_utilization_pct"], 4.0 / 6.0 * 100.0), "{lab}");
    // Over twelve days the pool counts only the ten it has been in service.
    let twelve = format!("from={}&to={}", z(hour - Duration::days(12)), z(hour));
    let (_, long) = f.call(Method::GET, &format!("/api/v1/reports/utilization?{twelve}"), Some(&f.mia), None).await;
    let lab = long["rows"].as_array().unwrap().iter().find(|r| r["id"] == f.lab.to_string()).unwrap();
    let in_service = (hour - since).num_seconds() as f64 / 3600.0 * 2.0;
    assert!(close(&lab["capacity_gpu_hours"], in_service), "{lab} vs {in_service}");
    // The CSV names the currency beside the cost.
    let (status, csv) = f
        .call(Method::GET, &format!("/api/v1/reports/utilization.csv?{period}&group=tenant"), Some(&f.mia), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let csv = csv.as_str().unwrap();
    assert!(csv.lines().next().unwrap().contains("showback_cost,currency"), "{csv}");
    assert!(csv.lines().any(|l| l.contains("team-a") && l.contains(",10.5,USD,")), "{csv}");

    // 3. The weekly quota's use counts the same GPU-hours.
    let quotas = json!([{"pool_id": f.lab, "kind": MIG, "gpu_hours_per_week": 10.0}]);
    let (status, body) = f.call(Method::PUT, "/api/v1/tenants/team-a/quotas", Some(&f.admin), Some(quotas)).await;
    assert!(status.is_success(), "{body}");
    let (_, usage) = f.call(Method::GET, "/api/v1/tenants/team-a/usage", Some(&f.ada), None).await;
    let quota = usage["quotas"].as_array().unwrap().iter().find(|q| q["kind"] == MIG).unwrap();
    assert!(close(&quota["hours_this_week"], mig_this_week), "{usage}");

    // 5. Tokenomics: 2 whole GPUs, and with nothing measured its default
    // utilisation is the booked GPU-hours of the last 30 days over the
    // GPU-hours the pool has been in service.
    let (status, tokenomics) =
        f.call(Method::GET, &format!("/api/v1/pools/{}/cost-model", f.lab), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{tokenomics}");
    assert!(close(&tokenomics["gpus_available"], 2.0), "{tokenomics}");
    assert_eq!(tokenomics["currency"], "USD");
    let utilization = tokenomics["measured"]["value"].as_f64().unwrap();
    let expected = (gpu_hours + mig_gpu_hours) / ((Utc::now() - since).num_seconds() as f64 / 3600.0 * 2.0);
    assert!((utilization - expected).abs() < 1e-4, "{utilization} vs {expected}");
}

#[tokio::test]
async fn a_whole_gpu_is_one_unit_and_a_slice_count_is_what_mig_allows() {
    let f = Fixture::new().await;
    for (spec, field) in [
        (json!({"kind": GPU, "capacity": 1, "slices_per_gpu": 2}), "kinds[0].slices_per_gpu"),
        (json!({"kind": MIG, "capacity": 4, "slices_per_gpu": 8}), "kinds[0].slices_per_gpu"),
        (json!({"kind": MIG, "capacity": 4, "price_per_unit_hour": -1}), "kinds[0].price_per_unit_hour"),
    ] {
        let (status, body) = f
            .call(Method::PATCH, &format!("/api/v1/pools/{}", f.lab), Some(&f.admin), Some(json!({"kinds": [spec]})))
            .await;
        assert_eq!((status, body["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(field)), "{body}");
    }
    // The SQL share the reports apply is the kind's own.
    let (status, _) = f
        .call(
            Method::PATCH,
            &format!("/api/v1/pools/{}", f.lab),
            Some(&f.admin),
            Some(json!({"kinds": [{"kind": MIG, "capacity": 4, "slices_per_gpu": 7}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let share: f64 =
        sqlx::query_scalar("SELECT gpu_share($1, $2)").bind(f.lab).bind(MIG).fetch_one(&f.db).await.unwrap();
    assert!((share - 1.0 / 7.0).abs() < 1e-12);
}
