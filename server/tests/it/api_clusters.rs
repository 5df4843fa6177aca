//! Clusters over HTTP: admins alone read and manage them, with validation
//! naming the field and an audit line; a pool belongs to one and moves only
//! when nothing live or future would be stranded; a cluster with pools stays.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{slot, Fixture, MIG};
use serde_json::{json, Value};

async fn add(f: &Fixture, body: Value) -> (StatusCode, Value) {
    f.call(Method::POST, "/api/v1/clusters", Some(&f.admin), Some(body)).await
}

#[tokio::test]
async fn every_pool_starts_on_the_default_cluster_which_follows_the_workers_flags() {
    let f = Fixture::new().await;
    let (status, list) = f.call(Method::GET, "/api/v1/clusters", Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let default = &list[0];
    assert_eq!((default["name"].as_str(), default["access"].as_str()), (Some("default"), Some("in-cluster")));
    assert_eq!(default["pools"], json!(["lab-h100"]));
    for switch in ["workspace_domain", "expose", "kueue", "scale_ahead_mode", "scale_ahead_minutes", "image_cache"] {
        assert!(default[switch].is_null(), "{switch} follows the worker's flag: {default}");
    }
    let (_, pool) = f.call(Method::GET, &format!("/api/v1/pools/{}", f.lab), Some(&f.ada), None).await;
    assert_eq!(pool["cluster"], "default");
    // Nobody else reads how Berth reaches its clusters.
    for token in [&f.ada, &f.bob, &f.mia] {
        let (status, err) = f.call(Method::GET, "/api/v1/clusters", Some(token), None).await;
        assert_eq!((status, err["error"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
        let (status, _) = f
            .call(Method::POST, "/api/v1/clusters", Some(token), Some(json!({"name": "x", "access": "simulated"})))
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM cluster").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 1, "a refused request writes nothing");
}

#[tokio::test]
async fn bad_clusters_are_refused_naming_the_field_and_nothing_is_written() {
    let f = Fixture::new().await;
    let cases = [
        (json!({"name": "AWS", "access": "simulated"}), "name"),
        (json!({"name": "a-very-long-cluster-name-that-runs-past-forty", "access": "simulated"}), "name"),
        (json!({"access": "simulated"}), "name"),
        (json!({"name": "aws", "access": "kubeconfig"}), "kubeconfig_secret"),
        (json!({"name": "aws", "access": "in-cluster", "kubeconfig_secret": "aws"}), "kubeconfig_secret"),
        (json!({"name": "aws", "access": "kubeconfig", "kubeconfig_secret": "Not/A/Secret"}), "kubeconfig_secret"),
        (json!({"name": "aws", "access": "simulated", "workspace_domain": "localhost"}), "workspace_domain"),
        (json!({"name": "aws", "access": "simulated", "expose": "nodeport"}), "expose"),
        (json!({"name": "aws", "access": "simulated", "scale_ahead_mode": "eager"}), "scale_ahead_mode"),
        (json!({"name": "aws", "access": "simulated", "scale_ahead_minutes": 0}), "scale_ahead_minutes"),
        (json!({"name": "default", "access": "simulated"}), "name"),
    ];
    for (body, field) in cases {
        let (status, err) = add(&f, body.clone()).await;
        assert!(status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::CONFLICT, "{body}: {status} {err}");
        assert_eq!(err["field"], field, "{body}: {err}");
        assert!(!err["message"].as_str().unwrap().contains("constraint"), "no database text: {err}");
    }
    for body in
        [json!({"name": "aws", "access": "cloud"}), json!({"name": "aws", "access": "simulated", "colour": "red"})]
    {
        let (status, err) = add(&f, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {err}");
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM cluster").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 1);
}

#[tokio::test]
async fn admins_add_change_and_remove_a_cluster_and_the_audit_log_says_so() {
    let f = Fixture::new().await;
    let (status, aws) = add(
        &f,
        json!({"name": "aws-east", "access": "kubeconfig", "kubeconfig_secret": "aws-east-kubeconfig",
               "workspace_domain": "gpu.aws.example.com", "expose": "route", "kueue": true,
               "scale_ahead_mode": "placeholder", "scale_ahead_minutes": 30, "image_cache": false}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{aws}");
    assert_eq!(aws["expose"], "route");
    assert_eq!(aws["pools"], json!([]));
    let id = aws["id"].as_str().unwrap();
    let path = format!("/api/v1/clusters/{id}");

    // A PUT replaces the whole cluster: what it leaves out follows the flags again.
    let (status, put) = f
        .call(
            Method::PUT,
            &path,
            Some(&f.admin),
            Some(json!({"name": "aws-east", "access": "in-cluster", "kueue": false})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    assert_eq!((put["access"].as_str(), put["kubeconfig_secret"].is_null()), (Some("in-cluster"), true));
    assert_eq!((put["kueue"].as_bool(), put["expose"].is_null()), (Some(false), true));
    let (status, err) =
        f.call(Method::PUT, &path, Some(&f.admin), Some(json!({"name": "aws-west", "access": "in-cluster"}))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("name")), "{err}");
    let missing = format!("/api/v1/clusters/{}", uuid::Uuid::new_v4());
    assert_eq!(
        f.call(Method::PUT, &missing, Some(&f.admin), Some(json!({"access": "simulated"}))).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(f.call(Method::GET, &missing, Some(&f.admin), None).await.0, StatusCode::NOT_FOUND);

    assert_eq!(f.call(Method::DELETE, &path, Some(&f.admin), None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(f.call(Method::GET, &path, Some(&f.admin), None).await.0, StatusCode::NOT_FOUND);
    let (_, log) = f.call(Method::GET, "/api/v1/audit?action=cluster", Some(&f.admin), None).await;
    let lines: Vec<(String, String)> = log["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("{log}"))
        .iter()
        .map(|e| (e["action"].as_str().unwrap().to_string(), e["target"].as_str().unwrap().to_string()))
        .collect();
    for action in ["cluster.create", "cluster.update", "cluster.delete"] {
        assert!(lines.contains(&(action.to_string(), "aws-east".to_string())), "{action}: {lines:?}");
    }
    let detail = log.to_string();
    assert!(detail.contains("kubeconfig Secret aws-east-kubeconfig") && detail.contains("expose route"), "{detail}");
}

#[tokio::test]
async fn a_pool_moves_only_when_nothing_live_or_future_is_stranded_and_a_cluster_with_pools_stays() {
    let f = Fixture::new().await;
    let (_, aws) = add(&f, json!({"name": "aws", "access": "simulated"})).await;
    let aws_path = format!("/api/v1/clusters/{}", aws["id"].as_str().unwrap());
    let (_, list) = f.call(Method::GET, "/api/v1/clusters", Some(&f.admin), None).await;
    let default_path = format!("/api/v1/clusters/{}", list[1]["id"].as_str().unwrap());
    assert_eq!(list[1]["name"], "default");

    // A new pool goes to the cluster named, else to the default one.
    let pool = |name: &str, cluster: Option<&str>| {
        let mut body = json!({"name": name, "kinds": [{"kind": MIG, "capacity": 2}]});
        if let Some(cluster) = cluster {
            body["cluster"] = json!(cluster);
        }
        body
    };
    let (status, on_aws) =
        f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(pool("on-aws", Some("aws")))).await;
    assert_eq!((status, on_aws["cluster"].as_str()), (StatusCode::CREATED, Some("aws")), "{on_aws}");
    let (_, plain) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(pool("plain", None))).await;
    assert_eq!(plain["cluster"], "default");
    let (status, err) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(pool("nowhere", Some("gcp")))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("cluster")), "{err}");

    // The lab holds a future booking: it stays where its session will run.
    let booking =
        json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(4), "end": slot(8), "mode": "interactive"});
    assert_eq!(f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(booking)).await.0, StatusCode::CREATED);
    let lab_path = format!("/api/v1/pools/{}", f.lab);
    let (status, err) =
        f.call(Method::PATCH, &lab_path, Some(&f.admin), Some(json!({"cluster": "aws", "description": "moved"}))).await;
    assert_eq!(
        (status, err["error"].as_str(), err["field"].as_str()),
        (StatusCode::CONFLICT, Some("pool_has_bookings"), Some("cluster")),
        "{err}"
    );
    let (_, lab) = f.call(Method::GET, &lab_path, Some(&f.admin), None).await;
    assert_eq!(
        (lab["cluster"].as_str(), lab["description"].as_str()),
        (Some("default"), Some("Reference lab: one whole GPU and four MIG slices")),
        "nothing half-written"
    );

    // Neither cluster can go while pools run on it; the one with bookings says so.
    let (status, err) = f.call(Method::DELETE, &default_path, Some(&f.admin), None).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("cluster_has_bookings")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("1 booking"), "{err}");
    let (status, err) = f.call(Method::DELETE, &aws_path, Some(&f.admin), None).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("cluster_has_pools")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("on-aws"), "{err}");

    // A pool with nothing live moves; then its old cluster may go.
    let on_aws_path = format!("/api/v1/pools/{}", on_aws["id"].as_str().unwrap());
    let (status, moved) =
        f.call(Method::PATCH, &on_aws_path, Some(&f.admin), Some(json!({"cluster": "default"}))).await;
    assert_eq!((status, moved["cluster"].as_str()), (StatusCode::OK, Some("default")), "{moved}");
    // A home kept on it is a volume there: the cluster stays until it went.
    let aws_id = aws_path.rsplit('/').next().unwrap().parse::<uuid::Uuid>().unwrap();
    let ada: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(&f.db).await.unwrap();
    sqlx::query(
        "INSERT INTO home (cluster_id, user_id, storage_class, volume, size_gib) VALUES ($1, $2, '', 'pv-aws', 50)",
    )
    .bind(aws_id)
    .bind(ada)
    .execute(&f.db)
    .await
    .unwrap();
    let (status, err) = f.call(Method::DELETE, &aws_path, Some(&f.admin), None).await;
    assert_eq!((status, err["error"].as_str()), (StatusCode::CONFLICT, Some("cluster_has_homes")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("1 home or model cache"), "{err}");
    sqlx::query("UPDATE home SET gone_at = now() WHERE volume = 'pv-aws'").execute(&f.db).await.unwrap();
    assert_eq!(f.call(Method::DELETE, &aws_path, Some(&f.admin), None).await.0, StatusCode::NO_CONTENT);
    let (_, list) = f.call(Method::GET, "/api/v1/clusters", Some(&f.admin), None).await;
    assert_eq!(list[0]["pools"], json!(["lab-h100", "on-aws", "plain"]));
}

/// The portal's own host is under no workspace domain: every host under
/// one is a session's (the hosts policies keep them for sessions), and the
/// portal would be a sibling site of every workspace.
#[tokio::test]
async fn no_workspace_domain_holds_the_portals_own_host() {
    use tower::ServiceExt;
    let f = Fixture::new().await;
    let config = server::auth::AuthConfig::local("https://berth.example.org".parse().unwrap());
    let app =
        server::router(server::AppState::new(f.db.clone(), "target/site", server::auth::Auth::new(config).unwrap()));
    let add = |body: Value| {
        let request = axum::http::Request::post("/api/v1/clusters")
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {}", f.admin))
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        common::raw(&app, request)
    };
    let (status, err) = add(json!({"name": "under", "access": "simulated", "workspace_domain": "example.org"})).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("workspace_domain")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("berth.example.org is under example.org"), "{err}");
    let (status, err) =
        add(json!({"name": "beside", "access": "simulated", "workspace_domain": "gpu.example.org"})).await;
    assert_eq!(status, StatusCode::CREATED, "{err}");
    let request = axum::http::Request::get("/api/v1/clusters")
        .header(axum::http::header::AUTHORIZATION, format!("Bearer {}", f.ada));
    let response = app.clone().oneshot(request.body(axum::body::Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // The process refuses to start with its own host under its domain.
    let output = common::processes::berth()
        .args(["serve", "--public-url", "https://portal.gpu.example.org", "--workspace-domain", "gpu.example.org"])
        .env("DATABASE_URL", "postgres://127.0.0.1:1/none")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && said.contains("portal.gpu.example.org is under gpu.example.org"), "{said}");
}

/// A worker that refuses to publish (its domain unguarded) says why on the
/// Clusters page; a database failure's text stays in the worker's log.
#[tokio::test]
async fn the_clusters_page_says_why_a_clusters_worker_refuses() {
    let f = Fixture::new().await;
    let said = "workspaces would be published under gpu.elsewhere.example.net, but this cluster's policies guard berth.example.org";
    sqlx::query("INSERT INTO cluster_status (cluster_id, worker, error) SELECT id, 'w1', $1 FROM cluster WHERE name = 'default'")
        .bind(said)
        .execute(&f.db)
        .await
        .unwrap();
    let (status, rows) = f.call(Method::POST, "/rpc/admin/clusters", Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!((rows[0][0]["name"].as_str(), rows[0][1].as_str()), (Some("default"), Some(said)), "{rows}");
    sqlx::query("UPDATE cluster_status SET error = 'the database: password authentication failed for user \"berth\"'")
        .execute(&f.db)
        .await
        .unwrap();
    let (_, rows) = f.call(Method::POST, "/rpc/admin/clusters", Some(&f.admin), None).await;
    assert!(rows[0][1].is_null(), "{rows}");
    let (status, _) = f.call(Method::POST, "/rpc/admin/clusters", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
