//! Pools over HTTP: who sees and manages them, validation, capacity changes
//! against existing bookings, and availability.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{at, slot, Fixture, GPU, MIG};
use serde_json::{json, Value};

fn team_b_pool() -> Value {
    json!({
        "name": "team-b-a100", "gpu_model": "A100 80GB", "tenants": ["team-b"], "requires_approval": true,
        "kinds": [{ "kind": "nvidia.com/gpu", "capacity": 2, "vram_gb_per_unit": 80 }],
    })
}

#[tokio::test]
async fn users_see_the_pools_their_tenant_may_book() {
    let f = Fixture::new().await;
    let (status, pool) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(team_b_pool())).await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    assert_eq!(pool["tenants"], json!(["team-b"]));
    assert_eq!(pool["kinds"][0]["replicas_per_unit"], 1, "defaults fill unset grants");
    assert_eq!(pool["granularity_minutes"], 15);
    let id = pool["id"].as_str().unwrap();

    let names = |body: Value| -> Vec<String> {
        body.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(f.call(Method::GET, "/api/v1/pools", Some(&f.ada), None).await.1), ["lab-h100"]);
    assert_eq!(names(f.call(Method::GET, "/api/v1/pools", Some(&f.bob), None).await.1), ["lab-h100", "team-b-a100"]);
    assert_eq!(names(f.call(Method::GET, "/api/v1/pools", Some(&f.admin), None).await.1), ["lab-h100", "team-b-a100"]);

    let lab = f.call(Method::GET, &format!("/api/v1/pools/{}", f.lab), Some(&f.ada), None).await;
    assert_eq!(lab.0, StatusCode::OK);
    assert_eq!(lab.1["kinds"][1]["kind"], MIG);
    assert_eq!(lab.1["kinds"][1]["capacity"], 4);
    assert_eq!(lab.1["kinds"][1]["replicas_per_unit"], 2);
    assert_eq!(f.call(Method::GET, &format!("/api/v1/pools/{id}"), Some(&f.ada), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(f.call(Method::GET, &format!("/api/v1/pools/{id}"), Some(&f.bob), None).await.0, StatusCode::OK);
}

#[tokio::test]
async fn only_admins_create_or_change_pools() {
    let f = Fixture::new().await;
    for token in [&f.ada, &f.mia] {
        let (status, err) = f.call(Method::POST, "/api/v1/pools", Some(token), Some(team_b_pool())).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(err["error"], "forbidden");
        let patch = f
            .call(Method::PATCH, &format!("/api/v1/pools/{}", f.lab), Some(token), Some(json!({"description": "x"})))
            .await;
        assert_eq!(patch.0, StatusCode::FORBIDDEN);
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM pool").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 1);
    let missing = f
        .call(Method::PATCH, &format!("/api/v1/pools/{}", uuid::Uuid::new_v4()), Some(&f.admin), Some(json!({})))
        .await;
    assert_eq!(missing.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn invalid_pools_are_refused_naming_the_field() {
    let f = Fixture::new().await;
    let cases = [
        (json!({"name": "x", "kinds": [{"kind": "amd.com/gpu", "capacity": 1}]}), "kinds[0].kind"),
        (json!({"name": "x", "kinds": [{"kind": GPU, "capacity": -1}]}), "kinds[0].capacity"),
        (json!({"name": "x", "kinds": [{"kind": GPU, "capacity": 1}, {"kind": GPU, "capacity": 2}]}), "kinds[1].kind"),
        (json!({"name": "x", "kinds": []}), "kinds"),
        (json!({"name": "", "kinds": [{"kind": GPU, "capacity": 1}]}), "name"),
        (
            json!({"name": "x", "granularity_minutes": 7, "kinds": [{"kind": GPU, "capacity": 1}]}),
            "granularity_minutes",
        ),
        (json!({"name": "x", "tenants": ["nobody"], "kinds": [{"kind": GPU, "capacity": 1}]}), "tenants[0]"),
        (json!({"name": "x", "kinds": [{"kind": GPU, "capacity": 1, "colour": "red"}]}), "kinds[0].colour"),
        (
            json!({"name": "x", "node_selector": {"pool,a": "b"}, "kinds": [{"kind": GPU, "capacity": 1}]}),
            "node_selector.pool,a",
        ),
        (
            json!({"name": "x", "node_selector": {"pool": "a=b"}, "kinds": [{"kind": GPU, "capacity": 1}]}),
            "node_selector.pool",
        ),
        (
            json!({"name": "x", "node_selector": {"pool": 1}, "kinds": [{"kind": GPU, "capacity": 1}]}),
            "node_selector.pool",
        ),
        (
            json!({"name": "x", "tolerations": [{"key": "k", "operator": "Near"}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].operator",
        ),
        (
            json!({"name": "x", "tolerations": [{"operator": "Equal", "value": "v"}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].key",
        ),
        (
            json!({"name": "x", "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].value",
        ),
        (
            json!({"name": "x", "tolerations": [{"key": "k", "effect": "Sometimes"}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].effect",
        ),
        (
            json!({"name": "x", "tolerations": [{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].tolerationSeconds",
        ),
        (
            json!({"name": "x", "tolerations": [{"key": "k", "colour": "red"}], "kinds": [{"kind": GPU, "capacity": 1}]}),
            "tolerations[0].colour",
        ),
    ];
    for (body, field) in cases {
        let (status, err) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {err}");
        assert_eq!(err["field"], field);
    }
    let (status, err) = f
        .call(
            Method::POST,
            "/api/v1/pools",
            Some(&f.admin),
            Some(json!({"name": "lab-h100", "kinds": [{"kind": GPU, "capacity": 1}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!((err["error"].as_str(), err["field"].as_str()), (Some("duplicate"), Some("name")));
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM pool").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 1, "nothing half-written");
}

#[tokio::test]
async fn lowering_capacity_below_booked_usage_is_refused_with_the_bookings_named() {
    let f = Fixture::new().await;
    let (_, first) = f.book(&f.ada, MIG, 2, slot(4), slot(8)).await;
    let (_, second) = f.book(&f.carol, MIG, 1, slot(6), slot(10)).await;
    let (_, apart) = f.book(&f.bob, MIG, 1, slot(20), slot(24)).await;
    let lower = |capacity: i32| json!({"kinds": [{"kind": MIG, "capacity": capacity, "replicas_per_unit": 2, "vram_gb_per_unit": 24}]});
    let path = format!("/api/v1/pools/{}", f.lab);

    let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(lower(2))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"], "capacity_below_booked");
    assert_eq!(err["booked"], 3);
    let mut named: Vec<&str> = err["bookings"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    named.sort();
    let mut expected = vec![first["id"].as_str().unwrap(), second["id"].as_str().unwrap()];
    expected.sort();
    assert_eq!(named, expected, "the booking at slot 20 does not conflict: {apart}");
    let capacity: i32 =
        sqlx::query_scalar("SELECT capacity FROM pool_kind WHERE kind = $1").bind(MIG).fetch_one(&f.db).await.unwrap();
    assert_eq!(capacity, 4, "refused change left nothing behind");

    let (status, pool) = f.call(Method::PATCH, &path, Some(&f.admin), Some(lower(3))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(pool["kinds"][1]["capacity"], 3);
    let (status, pool) = f
        .call(Method::PATCH, &path, Some(&f.admin), Some(json!({"requires_approval": true, "horizon_days": 14})))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((pool["requires_approval"].as_bool(), pool["horizon_days"].as_i64()), (Some(true), Some(14)));
}

#[tokio::test]
async fn availability_is_a_step_function_of_free_units() {
    let f = Fixture::new().await;
    f.book(&f.ada, MIG, 2, slot(4), slot(8)).await;
    f.book(&f.carol, MIG, 1, slot(6), slot(10)).await;
    let path = format!(
        "/api/v1/pools/{}/availability?kind={}&from={}&to={}",
        f.lab,
        "nvidia.com%2Fmig-1g.24gb",
        slot(0).to_rfc3339().replace('+', "%2B"),
        slot(12).to_rfc3339().replace('+', "%2B")
    );
    let (status, steps) = f.call(Method::GET, &path, Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::OK, "{steps}");
    let got: Vec<(i64, i64)> = steps
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ((at(&s["start"]) - slot(0)).num_minutes() / 15, s["free"].as_i64().unwrap()))
        .collect();
    assert_eq!(got, [(0, 4), (4, 2), (6, 1), (8, 3), (10, 4)]);
    assert_eq!(at(&steps[4]["end"]), slot(12));

    let bad_kind = f
        .call(Method::GET, &format!("/api/v1/pools/{}/availability?kind=nvidia.com%2Fgpu-x", f.lab), Some(&f.bob), None)
        .await;
    assert_eq!((bad_kind.0, bad_kind.1["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("kind")));
    let bad_from = f
        .call(
            Method::GET,
            &format!("/api/v1/pools/{}/availability?kind={GPU}&from=yesterday", f.lab),
            Some(&f.bob),
            None,
        )
        .await;
    assert_eq!((bad_from.0, bad_from.1["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("from")));
    let missing = f.call(Method::GET, &format!("/api/v1/pools/{}/availability", f.lab), Some(&f.bob), None).await;
    assert_eq!((missing.0, missing.1["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("kind")));
}

#[tokio::test]
async fn a_pools_node_selector_and_tolerations_are_set_changed_and_shown() {
    let f = Fixture::new().await;
    let body = json!({
        "name": "placed", "kinds": [{"kind": GPU, "capacity": 2}],
        "node_selector": {"berth.io/pool": "placed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "dedicated", "value": "ml", "effect": "NoExecute", "tolerationSeconds": 60}],
    });
    let (status, pool) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    assert_eq!(pool["node_selector"]["berth.io/pool"], "placed");
    assert_eq!(
        pool["tolerations"][1],
        json!({"key": "dedicated", "value": "ml", "effect": "NoExecute", "tolerationSeconds": 60})
    );
    let path = format!("/api/v1/pools/{}", pool["id"].as_str().unwrap());
    let patch = json!({"node_selector": {"berth.io/pool": "moved"}, "tolerations": []});
    let (status, pool) = f.call(Method::PATCH, &path, Some(&f.admin), Some(patch)).await;
    assert_eq!(status, StatusCode::OK, "{pool}");
    assert_eq!(pool["node_selector"], json!({"berth.io/pool": "moved"}));
    assert_eq!(pool["tolerations"], json!([]));
    let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"node_selector": {"": "x"}}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("node_selector.")));
    let (_, pool) = f.call(Method::GET, &path, Some(&f.ada), None).await;
    assert_eq!(pool["node_selector"], json!({"berth.io/pool": "moved"}), "a refused change leaves the pool as it was");
}

#[tokio::test]
async fn a_pools_priority_and_runtime_class_are_the_clusters_set_cleared_and_never_its_critical_ones() {
    let f = Fixture::new().await;
    let body = json!({ "name": "classed", "kinds": [{"kind": GPU, "capacity": 2}],
        "priority_class": "gpu-interactive", "runtime_class": "nvidia" });
    let (status, pool) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    assert_eq!(
        (pool["priority_class"].as_str(), pool["runtime_class"].as_str()),
        (Some("gpu-interactive"), Some("nvidia"))
    );
    let path = format!("/api/v1/pools/{}", pool["id"].as_str().unwrap());
    for (field, value, said) in [
        ("priority_class", "system-node-critical", "system- classes"),
        ("priority_class", "system-cluster-critical", "system- classes"),
        ("priority_class", "Not A Name", "name of a class"),
        ("runtime_class", "runc;rm", "name of a class"),
    ] {
        let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ field: value }))).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(field)), "{value}");
        assert!(err["message"].as_str().unwrap().contains(said), "{err}");
    }
    let create = json!({ "name": "critical", "kinds": [{"kind": GPU, "capacity": 1}], "priority_class": "system-node-critical" });
    let (status, err) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(create)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("priority_class")));
    let (_, unchanged) = f.call(Method::GET, &path, Some(&f.ada), None).await;
    assert_eq!(unchanged["priority_class"], "gpu-interactive", "a refused change leaves the pool as it was");
    // A patch without the fields keeps them; "" removes one.
    let (_, kept) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "description": "x" }))).await;
    assert_eq!(kept["runtime_class"], "nvidia");
    let (status, cleared) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "priority_class": "" }))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((cleared["priority_class"].clone(), cleared["runtime_class"].as_str()), (json!(null), Some("nvidia")));

    // Once the worker has read the cluster's classes, a pool names only one it has.
    let (priority, runtime) =
        (["gpu-interactive".to_string(), "system-node-critical".to_string()], ["nvidia".to_string()]);
    app::backend::pools::classes::record(&f.db, &priority, &runtime).await.unwrap();
    let (status, err) =
        f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "priority_class": "gpu-batch" }))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("priority_class")));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("the cluster has no PriorityClass gpu-batch (it has: gpu-interactive)"),
        "{err}"
    );
    let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "runtime_class": "kata" }))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("runtime_class")), "{err}");
    let (status, _) =
        f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "priority_class": "gpu-interactive" }))).await;
    assert_eq!(status, StatusCode::OK);
    // A class the cluster dropped since does not block editing the rest.
    app::backend::pools::classes::record(&f.db, &[], &[]).await.unwrap();
    let (status, _) =
        f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({ "description": "still editable" }))).await;
    assert_eq!(status, StatusCode::OK);
    let new = json!({ "name": "typo", "kinds": [{"kind": GPU, "capacity": 1}], "runtime_class": "nvidai" });
    let (status, err) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(new)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("runtime_class")), "{err}");
    assert!(err["message"].as_str().unwrap().ends_with("(it has: none)"), "{err}");
}

#[tokio::test]
async fn a_pool_always_has_its_own_node_selector_and_never_one_nested_in_anothers() {
    let f = Fixture::new().await;
    let create = |body: Value| f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body));
    // Named none: its own label, so its sessions never land on just any node.
    let (status, pool) = create(json!({"name": "Spare L4s", "kinds": [{"kind": GPU, "capacity": 1}]})).await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    assert_eq!(pool["node_selector"], json!({"berth.io/pool": "spare-l4s"}));
    let path = format!("/api/v1/pools/{}", pool["id"].as_str().unwrap());
    let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"node_selector": {}}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("node_selector")));
    assert!(err["message"].as_str().unwrap().contains("at least one"), "{err}");

    // The demo pool selects nvidia.com/gpu.product=NVIDIA-H100-NVL: a pool of
    // every GPU node would contain it, and so would the same selector.
    for selector in [json!({"nvidia.com/gpu.present": "true"}), json!({"nvidia.com/gpu.product": "NVIDIA-H100-NVL"})] {
        let wide = if selector.get("nvidia.com/gpu.present").is_some() {
            json!({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-NVL", "zone": "a"})
        } else {
            selector.clone()
        };
        let body = json!({"name": "all GPUs", "kinds": [{"kind": GPU, "capacity": 1}], "node_selector": wide});
        let (status, err) = create(body).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("node_selector")), "{err}");
        assert!(err["message"].as_str().unwrap().contains("overlaps pool "), "{err}");
    }
    let moved = json!({"node_selector": {"nvidia.com/gpu.product": "NVIDIA-H100-NVL"}});
    let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(moved)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("node_selector")), "{err}");
    // Told apart by one more label, both stand.
    let apart = json!({"name": "L40S", "kinds": [{"kind": GPU, "capacity": 1}],
        "node_selector": {"nvidia.com/gpu.product": "NVIDIA-L40S"}});
    assert_eq!(create(apart).await.0, StatusCode::CREATED);
}

#[tokio::test]
async fn a_retired_pool_takes_no_new_bookings_and_keeps_the_old_ones() {
    let f = Fixture::new().await;
    let (status, kept) = f.book(&f.ada, MIG, 1, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!("/api/v1/pools/{}", f.lab);
    let (status, pool) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"retired": true}))).await;
    assert_eq!((status, pool["retired"].as_bool()), (StatusCode::OK, Some(true)), "{pool}");
    let (status, err) = f.book(&f.ada, MIG, 1, slot(10), slot(12)).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pool_id")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("retired"));
    let (status, still) =
        f.call(Method::GET, &format!("/api/v1/bookings/{}", kept["id"].as_str().unwrap()), Some(&f.ada), None).await;
    assert_eq!((status, still["state"].as_str()), (StatusCode::OK, Some("approved")));
    // A pool with bookings cannot be deleted; reopened, it books again.
    let (status, err) = f.call(Method::DELETE, &path, Some(&f.admin), None).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("pool_has_bookings")), "{err}");
    f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"retired": false}))).await;
    assert_eq!(f.book(&f.ada, MIG, 1, slot(10), slot(12)).await.0, StatusCode::CREATED);
}

#[tokio::test]
async fn a_pool_without_bookings_is_deleted_with_its_kinds_and_quotas() {
    let f = Fixture::new().await;
    let body = json!({"name": "scratch", "kinds": [{"kind": GPU, "capacity": 1}]});
    let (_, pool) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body)).await;
    let id = pool["id"].as_str().unwrap();
    let quota = json!([{"pool_id": id, "kind": GPU, "max_units": 1}]);
    assert_eq!(
        f.call(Method::PUT, "/api/v1/tenants/team-a/quotas", Some(&f.admin), Some(quota)).await.0,
        StatusCode::OK
    );
    let path = format!("/api/v1/pools/{id}");
    assert_eq!(f.call(Method::DELETE, &path, Some(&f.ada), None).await.0, StatusCode::FORBIDDEN);
    assert_eq!(f.call(Method::DELETE, &path, Some(&f.admin), None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(f.call(Method::GET, &path, Some(&f.admin), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(f.call(Method::DELETE, &path, Some(&f.admin), None).await.0, StatusCode::NOT_FOUND);
    let (_, log) = f.call(Method::GET, "/api/v1/audit?action=pool.delete", Some(&f.admin), None).await;
    assert_eq!(log["entries"][0]["target"], "scratch");
}

#[tokio::test]
async fn find_a_slot_offers_the_earliest_windows_that_fit_and_each_can_be_booked() {
    let f = Fixture::new().await;
    let (status, _) = f.book(&f.ada, MIG, 4, slot(4), slot(8)).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = |duration: i64, extra: &str| {
        format!(
            "/api/v1/pools/{}/slots?kind=nvidia.com%2Fmig-1g.24gb&quantity=2&duration_minutes={duration}&earliest={}&latest={}{extra}",
            f.lab,
            slot(0).to_rfc3339().replace('+', "%2B"),
            slot(16).to_rfc3339().replace('+', "%2B"),
        )
    };
    let (status, found) = f.call(Method::GET, &path(60, "&tz=Europe%2FBerlin"), Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let windows: Vec<(i64, i64)> = found["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let minutes = |key: &str| (at(&w["window"][key]) - slot(0)).num_minutes() / 15;
            (minutes("start"), minutes("end"))
        })
        .collect();
    // The kind is full from slot 4 to 8: the hour before fits, then each
    // quarter hour from 8 on.
    assert_eq!(windows, [(0, 4), (8, 12), (9, 13), (10, 14), (11, 15), (12, 16)]);
    assert_eq!((found["tz"].as_str(), found["quantity"].as_i64()), (Some("Europe/Berlin"), Some(2)));
    assert!(found["windows"][0]["when"].as_str().is_some_and(|w| !w.is_empty()));

    let offered = &found["windows"][1]["window"];
    let (status, booked) = f.book(&f.bob, MIG, 2, at(&offered["start"]), at(&offered["end"])).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");

    let (status, err) = f.call(Method::GET, &path(7, ""), Some(&f.bob), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("duration_minutes")));
    let (status, err) = f.call(Method::GET, &path(60, "&tz=Mars%2FOlympus"), Some(&f.bob), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("tz")));
    let missing = format!("/api/v1/pools/{}/slots?kind=nvidia.com%2Fmig-1g.24gb", f.lab);
    let (status, err) = f.call(Method::GET, &missing, Some(&f.bob), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("duration_minutes")));
}

#[tokio::test]
async fn a_pool_sets_its_workspaces_grace_at_the_end_of_the_window_up_to_30_seconds() {
    let f = Fixture::new().await;
    let create = |body: Value| f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body));
    let (status, pool) = create(json!({"name": "graceful", "kinds": [{"kind": GPU, "capacity": 1}]})).await;
    assert_eq!((status, pool["end_grace_seconds"].as_i64()), (StatusCode::CREATED, Some(30)), "30 s unless set");
    let path = format!("/api/v1/pools/{}", pool["id"].as_str().unwrap());
    for seconds in [-1, 31, 600] {
        let body = json!({"end_grace_seconds": seconds});
        let (status, err) = f.call(Method::PATCH, &path, Some(&f.admin), Some(body)).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end_grace_seconds")));
        assert!(err["message"].as_str().unwrap().contains("between 0 and 30"), "{err}");
    }
    let (status, err) =
        create(json!({"name": "impatient", "kinds": [{"kind": GPU, "capacity": 1}], "end_grace_seconds": 45})).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("end_grace_seconds")));
    // The worker gives the workspace exactly what its pool says.
    let lab = format!("/api/v1/pools/{}", f.lab);
    let (status, set) = f.call(Method::PATCH, &lab, Some(&f.admin), Some(json!({"end_grace_seconds": 10}))).await;
    assert_eq!((status, set["end_grace_seconds"].as_i64()), (StatusCode::OK, Some(10)), "{set}");
    let (status, body) = f.book(&f.ada, GPU, 1, slot(8), slot(10)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let booking: uuid::Uuid = body["id"].as_str().unwrap().parse().unwrap();
    let facts = app::backend::sessions::facts::facts(&f.db, booking).await.unwrap();
    let session = server::provisioner::manifests::Session::of(facts);
    let workspace = serde_json::to_value(server::provisioner::manifests::deployment(
        &session,
        &server::provisioner::manifests::Cluster::default(),
    ))
    .unwrap();
    assert_eq!(workspace["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 10);
}

/// What a click on the calendar books: an hour unless the admin says
/// otherwise, a whole number of the pool's slots up to its longest booking;
/// a grid change the old length no longer fits takes one that does.
#[tokio::test]
async fn a_pools_default_booking_length_fits_its_slots_and_longest_booking() {
    let f = Fixture::new().await;
    let create = |body: Value| f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body));
    let (status, pool) = create(json!({"name": "clicky", "kinds": [{"kind": GPU, "capacity": 1}]})).await;
    assert_eq!((status, pool["default_booking_minutes"].as_i64()), (StatusCode::CREATED, Some(60)), "{pool}");
    let (status, pool2) = create(json!({"name": "short", "granularity_minutes": 45, "max_booking_minutes": 90,
        "kinds": [{"kind": GPU, "capacity": 1}]}))
    .await;
    assert_eq!((status, pool2["default_booking_minutes"].as_i64()), (StatusCode::CREATED, Some(45)), "one slot");
    let path = format!("/api/v1/pools/{}", pool["id"].as_str().unwrap());
    for minutes in [0, 50, 24 * 60 * 8] {
        let (status, err) =
            f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"default_booking_minutes": minutes}))).await;
        assert_eq!(
            (status, err["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("default_booking_minutes")),
            "{minutes}: {err}"
        );
        assert!(err["message"].as_str().unwrap().contains("15-minute slots"), "{err}");
    }
    let (status, set) =
        f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"default_booking_minutes": 120}))).await;
    assert_eq!((status, set["default_booking_minutes"].as_i64()), (StatusCode::OK, Some(120)), "{set}");
    // Slots of 45 minutes: neither two hours nor one fit them, so the length becomes one slot.
    let (status, set) = f.call(Method::PATCH, &path, Some(&f.admin), Some(json!({"granularity_minutes": 45}))).await;
    assert_eq!((status, set["default_booking_minutes"].as_i64()), (StatusCode::OK, Some(45)), "{set}");
    // A user reads it with the pool (the calendar takes it from there).
    let (_, pools) = f.call(Method::GET, "/api/v1/pools", Some(&f.ada), None).await;
    assert!(pools.as_array().unwrap().iter().all(|p| p["default_booking_minutes"].as_i64().is_some()), "{pools}");
}
