//! Tenants and quotas over HTTP: admins create, rename and set quotas;
//! admission refuses what breaks them with `409 quota_exceeded` naming the
//! limit, what is used and what is left; members read their use.

use crate::common;

use app::rules::quota::iso_week_of;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Europe::Berlin;
use common::{slot, Fixture, GPU, MIG};
use serde_json::{json, Value};

/// A window of `hours` that starts at `from` or, if that would cross into
/// the next ISO week of the demo pool's zone, at the start of that week.
fn inside_one_week(from: DateTime<Utc>, hours: i64) -> (DateTime<Utc>, DateTime<Utc>) {
    let week = iso_week_of(from, &Berlin);
    let start = if from + Duration::hours(hours) > week.end { week.end } else { from };
    (start, start + Duration::hours(hours))
}

async fn set_quotas(f: &Fixture, tenant: &str, quotas: Value) -> (StatusCode, Value) {
    f.call(Method::PUT, &format!("/api/v1/tenants/{tenant}/quotas"), Some(&f.admin), Some(quotas)).await
}

#[tokio::test]
async fn admins_create_and_rename_tenants_and_only_admins_may() {
    let f = Fixture::new().await;
    let (status, created) = f
        .call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "vision", "name": "Vision lab"})))
        .await;
    assert_eq!((status, created["slug"].as_str()), (StatusCode::CREATED, Some("vision")), "{created}");
    let (status, err) =
        f.call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "vision", "name": "Again"}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::CONFLICT, Some("slug")), "{err}");
    let (status, err) =
        f.call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "Not A Slug", "name": "x"}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("slug")), "{err}");
    let (status, err) =
        f.call(Method::POST, "/api/v1/tenants", Some(&f.admin), Some(json!({"slug": "empty", "name": "  "}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("name")), "{err}");
    let (status, renamed) =
        f.call(Method::PATCH, "/api/v1/tenants/vision", Some(&f.admin), Some(json!({"name": "Computer vision"}))).await;
    assert_eq!((status, renamed["name"].as_str()), (StatusCode::OK, Some("Computer vision")), "{renamed}");
    let (status, list) = f.call(Method::GET, "/api/v1/tenants", Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK);
    let team_a = list.as_array().unwrap().iter().find(|t| t["slug"] == "team-a").unwrap();
    assert!(team_a["members"].as_array().unwrap().contains(&json!("ada@a.test")), "{team_a}");
    for token in [&f.ada, &f.mia] {
        assert_eq!(f.call(Method::GET, "/api/v1/tenants", Some(token), None).await.0, StatusCode::FORBIDDEN);
    }
    // Every change is in the audit log, with who made it.
    let (_, log) = f.call(Method::GET, "/api/v1/audit?tenant=vision", Some(&f.admin), None).await;
    let actions: Vec<&str> = log["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["tenant.rename", "tenant.create"], "{log}");
    assert_eq!(log["entries"][0]["actor"], "root@ops.test");
}

#[tokio::test]
async fn the_concurrency_quota_counts_the_tenants_peak_across_its_members() {
    let f = Fixture::new().await;
    let (status, usage) = set_quotas(&f, "team-a", json!([{"pool_id": f.lab, "kind": MIG, "max_units": 2}])).await;
    assert_eq!(status, StatusCode::OK, "{usage}");
    assert_eq!(f.book(&f.ada, MIG, 1, slot(4), slot(8)).await.0, StatusCode::CREATED);
    assert_eq!(f.book(&f.carol, MIG, 1, slot(6), slot(10)).await.0, StatusCode::CREATED);
    // A third unit of team-a at slot 7 would make its peak 3.
    let (status, err) = f.book(&f.carol, MIG, 1, slot(7), slot(9)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"], "quota_exceeded");
    assert_eq!(
        (err["limit"].as_str(), err["used"].as_f64(), err["left"].as_f64()),
        (Some("max_units"), Some(2.0), Some(0.0))
    );
    assert!(err["message"].as_str().unwrap().contains("2 units at once"), "{err}");
    // After the peak it fits; another tenant and another kind are not limited.
    assert_eq!(f.book(&f.carol, MIG, 1, slot(8), slot(9)).await.0, StatusCode::CREATED);
    assert_eq!(f.book(&f.bob, MIG, 1, slot(7), slot(9)).await.0, StatusCode::CREATED);
    assert_eq!(f.book(&f.ada, GPU, 1, slot(7), slot(9)).await.0, StatusCode::CREATED);
    // A refused request left nothing behind.
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM booking").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 5);
}

#[tokio::test]
async fn the_weekly_quota_counts_gpu_hours_and_extensions_are_held_to_it() {
    let f = Fixture::new().await;
    // Four of the demo pool's 1g.24gb slices make a GPU: 0.875 GPU-hours are 3.5 slice-hours.
    set_quotas(&f, "team-a", json!([{"pool_id": f.lab, "kind": MIG, "gpu_hours_per_week": 0.875}])).await;
    let (start, end) = inside_one_week(slot(4), 1);
    // 2 units × 1 h = 0.5 GPU-hours.
    let (status, first) = f.book(&f.ada, MIG, 2, start, end).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, err) = f.book(&f.carol, MIG, 2, start, end).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(
        (err["limit"].as_str(), err["used"].as_f64(), err["left"].as_f64()),
        (Some("gpu_hours_per_week"), Some(0.5), Some(0.38)),
        "{err}"
    );
    assert!(err["week_start"].is_string());
    assert_eq!(f.book(&f.carol, MIG, 1, start, end).await.0, StatusCode::CREATED, "0.75 of 0.875 GPU-hours");
    // Extending the first booking by 15 min adds 0.125 GPU-hours: 0.875 of 0.875 fits, 30 min does not.
    let id = first["id"].as_str().unwrap();
    let extend = |to: DateTime<Utc>| json!({"end": to});
    let path = format!("/api/v1/bookings/{id}/extend");
    let (status, err) = f.call(Method::POST, &path, Some(&f.ada), Some(extend(end + Duration::minutes(30)))).await;
    if iso_week_of(end + Duration::minutes(30), &Berlin) == iso_week_of(start, &Berlin) {
        assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("quota_exceeded")), "{err}");
        let (status, ok) = f.call(Method::POST, &path, Some(&f.ada), Some(extend(end + Duration::minutes(15)))).await;
        assert_eq!(status, StatusCode::OK, "{ok}");
    }
    // Members read their tenant's use; other tenants' members do not.
    let (status, usage) = f.call(Method::GET, "/api/v1/tenants/team-a/usage", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(usage["quotas"][0]["gpu_hours_per_week"], 0.875);
    assert_eq!(f.call(Method::GET, "/api/v1/tenants/team-a/usage", Some(&f.bob), None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn quota_lists_are_checked_before_anything_is_written() {
    let f = Fixture::new().await;
    set_quotas(&f, "team-a", json!([{"pool_id": f.lab, "kind": GPU, "max_units": 1}])).await;
    let cases = [
        (json!([{"pool_id": f.lab, "kind": "nvidia.com/mig-7g.96gb", "max_units": 1}]), "quotas[0].kind"),
        (json!([{"pool_id": f.lab, "kind": MIG, "max_units": -1}]), "quotas[0].max_units"),
        (json!([{"pool_id": f.lab, "kind": MIG, "max_units": 1}, {"pool_id": f.lab, "kind": MIG}]), "quotas[1]"),
        (json!([{"pool_id": f.lab, "kind": MIG, "gpu_hours_per_week": -0.5}]), "quotas[0].gpu_hours_per_week"),
    ];
    for (body, field) in cases {
        let (status, err) = set_quotas(&f, "team-a", body.clone()).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(field)), "{body}: {err}");
    }
    let (status, _) = set_quotas(&f, "no-such-tenant", json!([])).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = f.call(Method::PUT, "/api/v1/tenants/team-a/quotas", Some(&f.ada), Some(json!([]))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The first quota is still there, untouched by the refused lists.
    let (_, usage) = f.call(Method::GET, "/api/v1/tenants/team-a/usage", Some(&f.admin), None).await;
    assert_eq!(usage["quotas"].as_array().unwrap().len(), 1, "{usage}");
    assert_eq!(usage["quotas"][0]["kind"], GPU);
}
