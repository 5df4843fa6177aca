//! `berth worker`, as the worker Deployment runs it: the cluster comes from
//! a kubeconfig (here the simulated cluster served over HTTP, as an API
//! server is), and a booking whose window is open gets its session.
//! This once panicked at startup: two TLS crypto providers were compiled in
//! and rustls refused to choose, so no real cluster was ever reached.

use crate::common;

use common::database;
use common::processes::{berth, berth_output};
use server::provisioner::manifests::namespace_name;
use server::provisioner::simulated::SimulatedCluster;
use std::time::{Duration, Instant};
use uuid::Uuid;

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_provisions_on_the_cluster_its_kubeconfig_names() {
    let (db, url) = database().await;
    berth_output(&url, &["seed-demo"]);
    berth_output(&url, &["user", "add", "--email", "ada@a.test", "--name", "Ada", "--tenant", "team-a"]);
    let booking: Uuid = sqlx::query_scalar(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, starts_at, ends_at, state)
         SELECT p.id, 'nvidia.com/mig-1g.24gb', u.id, m.tenant_id, 1, 'interactive', p.images[1],
                now() - interval '1 minute', now() + interval '1 hour', 'approved'
         FROM pool p, app_user u JOIN membership m ON m.user_id = u.id
         WHERE p.name = $1 AND u.email = 'ada@a.test' RETURNING id",
    )
    .bind(server::seed::DEMO_POOL)
    .fetch_one(&db)
    .await
    .unwrap();

    let cluster = SimulatedCluster::start(true).await;
    // deploy/'s berth-config, as on a real cluster: the worker publishes
    // only under the domain it names (its own default here).
    let config = serde_json::from_value(serde_json::json!({ "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "berth-config", "namespace": "berth" },
        "data": { "BERTH_WORKSPACE_DOMAIN": "berth.local" } }))
    .unwrap();
    let maps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(cluster.client(), "berth");
    maps.create(&Default::default(), &config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let kubeconfig = std::env::temp_dir().join(format!("berth-kubeconfig-{}", Uuid::new_v4().simple()));
    std::fs::write(&kubeconfig, SimulatedCluster::kubeconfig(listener.local_addr().unwrap())).unwrap();
    tokio::spawn(cluster.clone().serve_http(listener));
    let mut worker = berth()
        .arg("worker")
        .env("DATABASE_URL", &url)
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .spawn()
        .expect("berth worker starts");

    let deadline = Instant::now() + Duration::from_secs(30);
    let state = loop {
        let state: String = sqlx::query_scalar("SELECT state::text FROM booking WHERE id = $1")
            .bind(booking)
            .fetch_one(&db)
            .await
            .unwrap();
        let exited = worker.try_wait().unwrap();
        if state == "active" || exited.is_some() || Instant::now() > deadline {
            assert!(exited.is_none(), "berth worker exited: {exited:?}");
            break state;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    worker.kill().unwrap();
    let _ = worker.wait();
    let _ = std::fs::remove_file(&kubeconfig);
    assert_eq!(state, "active", "the session did not start within 30 s");
    assert!(cluster.namespace_names().contains(&namespace_name("team-a", booking)), "{:?}", cluster.namespace_names());
    assert!(cluster.writes() > 10, "the session's objects were applied through the served API");
}
