//! A pool's scheduling options (issue 36) as an admin sets them, and the
//! GPU-hours its backfill queue used on lent units as reports show them.
//! What the cluster does with them is proven in real_kueue.rs (lending) and
//! real_cluster_schedulers.rs (room ahead).

use crate::common;

use app::backend::sessions::lending;
use axum::http::{Method, StatusCode};
use chrono::{Duration, DurationRound, Utc};
use common::{Fixture, GPU, MIG};
use serde_json::{json, Value};

fn kinds(lend: bool) -> Value {
    json!([
        {"kind": GPU, "capacity": 1, "replicas_per_unit": 4, "vram_gb_per_unit": 96},
        {"kind": MIG, "capacity": 4, "replicas_per_unit": 2, "vram_gb_per_unit": 24, "lend_idle": lend},
    ])
}

#[tokio::test]
async fn an_admin_lends_a_kind_into_a_named_namespace_and_sets_the_pools_lead_time() {
    let f = Fixture::new().await;
    let patch = |body: Value| {
        let (db, admin, lab) = (&f, f.admin.clone(), f.lab);
        async move { db.call(Method::PATCH, &format!("/api/v1/pools/{lab}"), Some(&admin), Some(body)).await }
    };
    // Each refusal names its field, and nothing is written.
    for (body, field) in [
        (json!({ "kinds": kinds(true) }), "backfill_namespace"),
        (json!({ "kinds": kinds(true), "backfill_namespace": "berth-team-a-1234abcd" }), "backfill_namespace"),
        (json!({ "kinds": kinds(true), "backfill_namespace": "Not A Name" }), "backfill_namespace"),
        (json!({ "kinds": kinds(true), "backfill_namespace": "kube-system" }), "backfill_namespace"),
        (json!({ "kinds": kinds(true), "backfill_namespace": "default" }), "backfill_namespace"),
        (json!({ "kinds": kinds(true), "backfill_namespace": "openshift-monitoring" }), "backfill_namespace"),
        (json!({ "scale_ahead_minutes": 1441 }), "scale_ahead_minutes"),
        (json!({ "scale_ahead_minutes": -2 }), "scale_ahead_minutes"),
    ] {
        let (status, refused) = patch(body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
        assert_eq!(refused["field"], field, "{body}: {refused}");
    }
    let (_, pool) = f.call(Method::GET, &format!("/api/v1/pools/{}", f.lab), Some(&f.admin), None).await;
    assert!(pool["kinds"].as_array().unwrap().iter().all(|k| k["lend_idle"] == false), "{pool}");

    let (status, pool) =
        patch(json!({ "kinds": kinds(true), "backfill_namespace": "batch", "scale_ahead_minutes": 45 })).await;
    assert_eq!(status, StatusCode::OK, "{pool}");
    assert_eq!((pool["backfill_namespace"].as_str(), pool["scale_ahead_minutes"].as_i64()), (Some("batch"), Some(45)));
    let mig = pool["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == MIG).unwrap();
    assert_eq!(mig["lend_idle"], true);
    // Another pool cannot share it: each pool's LocalQueue there is `backfill`.
    let other = json!({ "name": "other", "kinds": [{ "kind": GPU, "capacity": 1 }], "backfill_namespace": "batch" });
    let (status, refused) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(other)).await;
    assert_eq!((status, refused["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("backfill_namespace")));
    // A lending kind keeps its namespace: it cannot be emptied under it.
    let (status, refused) = patch(json!({ "backfill_namespace": "" })).await;
    assert_eq!((status, refused["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("backfill_namespace")));
    // Both go back to the site's: no lending, no lead time of the pool's own.
    let (status, pool) =
        patch(json!({ "kinds": kinds(false), "backfill_namespace": "", "scale_ahead_minutes": -1 })).await;
    assert_eq!(status, StatusCode::OK, "{pool}");
    assert_eq!((pool["backfill_namespace"].clone(), pool["scale_ahead_minutes"].clone()), (Value::Null, Value::Null));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backfills_use_is_credited_per_hour_and_reported_as_lent_gpu_hours() {
    let f = Fixture::new().await;
    let (status, body) = f
        .call(
            Method::PATCH,
            &format!("/api/v1/pools/{}", f.lab),
            Some(&f.admin),
            Some(json!({
            "kinds": kinds(true), "backfill_namespace": "batch" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sample_age = |seconds: i64| {
        let db = f.db.clone();
        async move {
            sqlx::query("UPDATE lent_sample SET at = now() - make_interval(secs => $1)")
                .bind(seconds as f64)
                .execute(&db)
                .await
                .unwrap();
        }
    };
    let lent = || async {
        sqlx::query_scalar::<_, f64>("SELECT coalesce(sum(unit_seconds), 0) FROM lent_hour")
            .fetch_one(&f.db)
            .await
            .unwrap()
    };
    // 2 units in use, read again 90 s later: 180 unit-seconds.
    lending::record(&f.db, &[(f.lab, MIG.into(), 2.0)]).await.unwrap();
    assert_eq!(lent().await, 0.0, "a first reading credits nothing");
    sample_age(90).await;
    lending::record(&f.db, &[(f.lab, MIG.into(), 4.0)]).await.unwrap();
    assert!((lent().await - 180.0).abs() < 1.0, "{}", lent().await);
    // A worker away for an hour credits no more than the longest stretch.
    sample_age(3600).await;
    lending::record(&f.db, &[(f.lab, MIG.into(), 0.0)]).await.unwrap();
    let longest = lending::LONGEST_CREDIT.num_seconds() as f64;
    assert!((lent().await - 180.0 - 4.0 * longest).abs() < 1.0, "{}", lent().await);
    // Nothing in use: nothing more.
    sample_age(60).await;
    lending::record(&f.db, &[(f.lab, MIG.into(), 0.0)]).await.unwrap();
    assert!((lent().await - 180.0 - 4.0 * longest).abs() < 1.0);

    // The report: 8 slice-hours lent last hour, four slices to a GPU: 2 GPU-hours.
    let hour = Utc::now().duration_trunc(Duration::hours(1)).unwrap() - Duration::hours(1);
    sqlx::query("DELETE FROM lent_hour").execute(&f.db).await.unwrap();
    sqlx::query("INSERT INTO lent_hour (pool_id, kind, hour, unit_seconds) VALUES ($1, $2, $3, 8 * 3600)")
        .bind(f.lab)
        .bind(MIG)
        .bind(hour)
        .execute(&f.db)
        .await
        .unwrap();
    let z = |at: chrono::DateTime<Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let period = format!("from={}&to={}", z(hour), z(hour + Duration::hours(1)));
    let (status, report) =
        f.call(Method::GET, &format!("/api/v1/reports/utilization?{period}"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let lab = report["rows"].as_array().unwrap().iter().find(|r| r["id"] == f.lab.to_string()).unwrap();
    assert_eq!((lab["lent_gpu_hours"].as_f64(), report["total"]["lent_gpu_hours"].as_f64()), (Some(2.0), Some(2.0)));
    // By tenant no row says what a pool lent; the total does.
    let (_, by_tenant) =
        f.call(Method::GET, &format!("/api/v1/reports/utilization?{period}&group=tenant"), Some(&f.mia), None).await;
    assert!(by_tenant["rows"].as_array().unwrap().iter().all(|r| r["lent_gpu_hours"].is_null()), "{by_tenant}");
    assert_eq!(by_tenant["total"]["lent_gpu_hours"].as_f64(), Some(2.0));
    let (_, csv) = f.call(Method::GET, &format!("/api/v1/reports/utilization.csv?{period}"), Some(&f.mia), None).await;
    let csv = csv.as_str().unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "lent_gpu_hours").expect("a lent_gpu_hours column");
    let all = csv.lines().find(|l| l.contains(",All,")).unwrap();
    assert_eq!(all.split(',').nth(column), Some("2"), "{csv}");
    // The page says it too.
    let (status, page) = f.call(Method::GET, &format!("/reports?{period}"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.as_str().unwrap().contains("Lent to backfill"));
}
