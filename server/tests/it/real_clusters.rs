//! One Berth, two real clusters (issue 49): two real API servers (etcd,
//! kube-apiserver, kube-controller-manager, deploy/ applied to each), a
//! pool on each and each cluster's worker acting as deploy/'s
//! `berth-worker` there. The test plays both kubelets. East's worker reaches
//! its API server through a door the test can shut (a TCP relay), so east
//! is unreachable from the worker while its state stays.

use crate::common;

use axum::http::Method;
use common::kube_stack::{reap_pods, run_pods, second_stack, stack, As, Stack};
use common::{Fixture, MIG};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::json;
use server::provisioner::manifests::{self, owned_by, Cluster};
use server::provisioner::reconcile::{ClusterRef, Policy, Reconciler};
use server::provisioner::snapshot::{resource, SESSION_KINDS};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The hub's portal opens ada's workspace on east through its own kubeconfig
/// of east (east's berth-portal, which reads access Secrets only), kept
/// apart from the worker's: neither hub identity reads the other's.
async fn opens_on_east(f: &Fixture, west: &Stack, east: &Stack, id: Uuid) {
    let _ = west.kubectl(&["-n", "berth-portal-clusters", "delete", "secret", "east", "--ignore-not-found"]);
    let kubeconfig = format!("kubeconfig={}", east.kubeconfig(&As::Portal).display());
    let created = west.kubectl(&[
        "-n",
        "berth-portal-clusters",
        "create",
        "secret",
        "generic",
        "east",
        "--from-file",
        &kubeconfig,
    ]);
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let reach = server::provisioner::cluster_clients::ClusterClients::new("default", west.client(As::Portal).await)
        .kubeconfigs("berth-clusters", "berth-portal-clusters");
    let mode = app::model::ClusterMode { simulated: false, kueue: false };
    let portal =
        server::router(common::test_state(f.db.clone()).with_cluster(Cluster::default(), mode, Arc::new(reach)));
    let request = axum::http::Request::get(format!("/bookings/{id}/open"))
        .header("authorization", format!("Bearer {}", f.ada))
        .body(axum::body::Body::empty())
        .unwrap();
    let response = tower::ServiceExt::oneshot(portal, request).await.unwrap();
    assert_eq!(response.status(), 303);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    // The address east's worker recorded, and a code only east's token redeems.
    let recorded: String = sqlx::query_scalar("SELECT workspace_url FROM session_status WHERE booking_id = $1")
        .bind(id)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert!(location.starts_with(&recorded), "{location} is not under {recorded}");
    let east_secrets: Api<Secret> =
        Api::namespaced(east.client(As::Admin).await, &manifests::namespace_name("team-a", id));
    let token = east_secrets.get(manifests::ACCESS_SECRET).await.unwrap().data.unwrap()["token"].clone();
    let gate =
        server::gate::Gate::new(String::from_utf8(token.0).unwrap(), "127.0.0.1:9".parse().unwrap(), "https://x");
    let code = location.split("/.berth/open?code=").nth(1).expect(&location);
    assert_eq!(gate.redeem(code, chrono::Utc::now().timestamp()), Ok(()), "{location}");
    // Neither hub identity reads the other's kubeconfigs.
    let hub_portal: Api<Secret> = Api::namespaced(west.client(As::Portal).await, "berth-clusters");
    let refused = hub_portal.get("east-kubeconfig").await.unwrap_err();
    assert!(matches!(&refused, kube::Error::Api(s) if s.code == 403), "{refused}");
    let hub_worker: Api<Secret> = Api::namespaced(worker_client(west, None).await, "berth-portal-clusters");
    let refused = hub_worker.get("east").await.unwrap_err();
    assert!(matches!(&refused, kube::Error::Api(s) if s.code == 403), "{refused}");
}

/// The tests of this binary share the two API servers: they take turns.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A TCP relay to an API server that the test can shut: while shut, every
/// connection (old and new) is dropped, as a server that went away.
struct Door {
    port: u16,
    open: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Door {
    async fn to(target: u16) -> Door {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let generation = Arc::new(tokio::sync::watch::channel(0u64).0);
        let (is_open, shut) = (open.clone(), generation.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !is_open.load(Ordering::SeqCst) {
                    continue; // dropped: the caller sees the connection reset
                }
                let mut shut = shut.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = shut.changed() => {}
                    }
                });
            }
        });
        Door { port, open, generation }
    }

    fn shut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    fn reopen(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

/// deploy/'s berth-worker on `stack`, through `door` when given.
async fn worker_client(stack: &Stack, door: Option<&Door>) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(stack.kubeconfig(&As::Worker)).unwrap();
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default()).await.unwrap();
    if let Some(door) = door {
        config.cluster_url = format!("https://127.0.0.1:{}", door.port).parse().unwrap();
    }
    kube::Client::try_from(config).unwrap()
}

async fn worker(f: &Fixture, cluster: &str, client: kube::Client) -> Reconciler {
    let id: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = $1").bind(cluster).fetch_one(&f.db).await.unwrap();
    Reconciler {
        policy: Policy { retry_delay: Duration::from_millis(50), ..Policy::default() },
        drives: Some(ClusterRef { id, name: cluster.into() }),
        ..Reconciler::new(f.db.clone(), client, Cluster::default())
    }
}

fn east_nodes() -> BTreeMap<String, String> {
    BTreeMap::from([("berth.io/pool".to_string(), "east-mig".to_string())])
}

/// Cluster `east` (its own worker's credentials) with a pool of MIG slices.
async fn east_pool(f: &Fixture) -> Uuid {
    let pool = json!({"name": "east-mig", "node_selector": {"berth.io/pool": "east-mig"},
        "images": ["quay.io/jupyter/minimal-notebook:latest"],
        "kinds": [{"kind": MIG, "capacity": 4, "vram_gb_per_unit": 24, "cpu_millis_per_unit": 1000,
                   "memory_mib_per_unit": 4096, "storage_gib_per_unit": 10}]});
    f.pool_on_new_cluster("east", "in-cluster", pool).await
}

async fn book(f: &Fixture, pool: Uuid) -> Uuid {
    common::world::book_now(f, MIG, 1, "interactive", pool).await
}

async fn sessions(admin: &kube::Client) -> Vec<String> {
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let managed = ListParams::default().labels(&manifests::managed_selector());
    let all = namespaces.list(&managed).await.unwrap().items;
    all.into_iter().filter(|ns| owned_by(ns, None).is_some()).filter_map(|ns| ns.metadata.name).collect()
}

/// Earlier tests' sessions gone, so each test counts only its own.
async fn clean(admin: &kube::Client) {
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    for name in sessions(admin).await {
        let _ = namespaces.delete(&name, &Default::default()).await;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sessions(admin).await.is_empty() {
        reap_pods(admin).await;
        assert!(Instant::now() < deadline, "namespaces of an earlier test not gone within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Plays the kubelet of each cluster for each of its session namespaces,
/// until stopped.
fn kubelets(clusters: Vec<(kube::Client, BTreeMap<String, String>)>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            for (admin, labels) in &clusters {
                for ns in sessions(admin).await {
                    run_pods(admin, "gpu-node-1", labels, &ns).await;
                }
                // Pods the worker deleted go once their containers exit.
                reap_pods(admin).await;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    })
}

async fn eventually(f: &Fixture, what: &str, mut check: impl AsyncFnMut() -> bool, within: Duration) {
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}: {}", story(f).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every session's steps and every cluster's last error, for a failure's message.
async fn story(f: &Fixture) -> String {
    let steps: Vec<(Uuid, serde_json::Value)> =
        sqlx::query_as("SELECT booking_id, steps FROM session_status").fetch_all(&f.db).await.unwrap();
    let clusters: Vec<(Uuid, Option<String>)> =
        sqlx::query_as("SELECT cluster_id, error FROM cluster_status").fetch_all(&f.db).await.unwrap();
    format!("{steps:?} {clusters:?}")
}

async fn unreachable(f: &Fixture, cluster: &str) -> bool {
    let since: Option<chrono::DateTime<chrono::Utc>> = sqlx::query_scalar(
        "SELECT s.unreachable_since FROM cluster_status s JOIN cluster c ON c.id = s.cluster_id WHERE c.name = $1",
    )
    .bind(cluster)
    .fetch_optional(&f.db)
    .await
    .unwrap()
    .flatten();
    since.is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_real_clusters_converge_together_and_one_stopped_mid_window_fails_alone() {
    let (Some(west), Some(east)) = (stack(), second_stack()) else { return };
    let _turn = TURN.lock().await;
    let (west_admin, east_admin) = (west.client(As::Admin).await, east.client(As::Admin).await);
    clean(&west_admin).await;
    clean(&east_admin).await;
    let f = Fixture::new().await;
    let east_mig = east_pool(&f).await;
    let door = Door::to(east.api_port()).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let west_worker = worker(&f, "default", worker_client(west, None).await).await;
    let east_worker = worker(&f, "east", worker_client(east, Some(&door)).await).await;
    let leads = [
        tokio::spawn(server::provisioner::run::run(west_worker, stopped.clone())),
        tokio::spawn(server::provisioner::run::run(east_worker, stopped)),
    ];
    let kubelet =
        kubelets(vec![(west_admin.clone(), common::world::lab_node_labels()), (east_admin.clone(), east_nodes())]);

    // A session on each cluster, converging at the same time.
    let (on_west, on_east) = (book(&f, f.lab).await, book(&f, east_mig).await);
    eventually(
        &f,
        "both sessions are active",
        async || f.booking_state(on_west).await == "active" && f.booking_state(on_east).await == "active",
        Duration::from_secs(90),
    )
    .await;
    assert_eq!((sessions(&west_admin).await.len(), sessions(&east_admin).await.len()), (1, 1), "each on its own");

    // East goes away mid-window: west keeps starting sessions and ending
    // them; east's cards say so within a pass.
    door.shut();
    let (second_west, second_east) = (book(&f, f.lab).await, book(&f, east_mig).await);
    eventually(&f, "east is unreachable", async || unreachable(&f, "east").await, Duration::from_secs(30)).await;
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let cards = app::backend::bookings::mine::load(&f.db, &ada, "Europe/Berlin").await.unwrap();
    let note = cards.live.iter().find(|c| c.booking.id == on_east).and_then(|c| c.cluster_down.clone());
    assert!(note.is_some_and(|n| n.starts_with("Cluster east unreachable since")));
    eventually(
        &f,
        "west starts its next session",
        async || f.booking_state(second_west).await == "active",
        Duration::from_secs(90),
    )
    .await;
    let (status, _) =
        f.call(Method::POST, &format!("/api/v1/bookings/{on_west}/end"), Some(&f.ada), Some(json!({}))).await;
    assert!(status.is_success(), "ending the first west session: {status}");
    eventually(&f, "west ends a session", async || sessions(&west_admin).await.len() == 1, Duration::from_secs(60))
        .await;
    assert!(!unreachable(&f, "default").await);
    assert_eq!(f.booking_state(second_east).await, "approved", "east's new session waits for east");

    // East is back: its session converges, once.
    door.reopen();
    eventually(
        &f,
        "east converges again",
        async || f.booking_state(second_east).await == "active",
        Duration::from_secs(90),
    )
    .await;
    eventually(&f, "east is reachable", async || !unreachable(&f, "east").await, Duration::from_secs(30)).await;
    assert_eq!(sessions(&east_admin).await.len(), 2, "no duplicate on east");
    stop.send(true).unwrap();
    for lead in leads {
        lead.await.unwrap().unwrap();
    }
    kubelet.abort();
}

/// Each object of a session's namespace with who applied it.
async fn appliers(admin: &kube::Client, ns: &str) -> BTreeMap<String, Vec<String>> {
    let mut found = BTreeMap::new();
    for (api_version, kind) in SESSION_KINDS {
        let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), ns, &resource(api_version, kind));
        for object in api.list(&ListParams::default()).await.unwrap() {
            let name = object.metadata.name.clone().unwrap_or_default();
            // The controller manager's own: the CA bundles it puts in every namespace.
            if name == "kube-root-ca.crt" || name == "openshift-service-ca.crt" {
                continue;
            }
            let managers = object.metadata.managed_fields.unwrap_or_default();
            let applied = managers.into_iter().filter(|m| m.operation.as_deref() == Some("Apply"));
            found.insert(format!("{kind}/{name}"), applied.filter_map(|m| m.manager).collect());
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_moves_from_a_hub_worker_to_one_inside_the_cluster_without_a_double_apply() {
    let (Some(_), Some(east)) = (stack(), second_stack()) else { return };
    let _turn = TURN.lock().await;
    let admin = east.client(As::Admin).await;
    clean(&admin).await;
    let f = Fixture::new().await;
    let east_mig = east_pool(&f).await;
    let kubelet = kubelets(vec![(admin.clone(), east_nodes())]);
    // The hub drives east first (a kubeconfig of berth-worker); a worker
    // inside east waits on east's lease meanwhile.
    let (stop_hub, hub_stopped) = tokio::sync::watch::channel(false);
    let hub = tokio::spawn(server::provisioner::run::run(
        worker(&f, "east", worker_client(east, None).await).await,
        hub_stopped,
    ));
    let first = book(&f, east_mig).await;
    eventually(
        &f,
        "the hub starts the session",
        async || f.booking_state(first).await == "active",
        Duration::from_secs(90),
    )
    .await;
    // The worker inside east signs in to the database as east's own role
    // (`berth member-role`): it writes east's rows only, and leaves the
    // site's duties to the hub.
    let (_, member_url) = f.member_role("east").await;
    let mut inside = worker(&f, "east", worker_client(east, None).await).await;
    inside.db = common::clusters::signed_in(&member_url).await;
    inside.site_duties = false;
    let (stop_member, member_stopped) = tokio::sync::watch::channel(false);
    let member = tokio::spawn(server::provisioner::run::run(inside, member_stopped));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ns = manifests::namespace_name("team-a", first);
    let before = appliers(&admin, &ns).await;

    // The hub lets go; the member takes the lease and starts the next session.
    stop_hub.send(true).unwrap();
    hub.await.unwrap().unwrap();
    let handed_over = chrono::Utc::now();
    let second = book(&f, east_mig).await;
    eventually(
        &f,
        "the member starts the next session",
        async || f.booking_state(second).await == "active",
        Duration::from_secs(90),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The member, as its own role, reports its passes on east's status row.
    let reported: Option<chrono::DateTime<chrono::Utc>> = sqlx::query_scalar(
        "SELECT s.pass_at FROM cluster_status s JOIN cluster c ON c.id = s.cluster_id WHERE c.name = 'east'",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!(reported.is_some_and(|at| at > handed_over), "{reported:?}");
    // One applier per object, the same objects before and after the hand-over,
    // and the second session has the same set as the first: nothing applied twice.
    let after = appliers(&admin, &ns).await;
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    for (object, managers) in &after {
        assert_eq!(managers.len(), 1, "{object}: {managers:?}");
    }
    let second_objects = appliers(&admin, &manifests::namespace_name("team-a", second)).await;
    assert_eq!(second_objects.len(), after.len(), "{second_objects:?}");
    assert_eq!(sessions(&admin).await.len(), 2);
    stop_member.send(true).unwrap();
    member.await.unwrap().unwrap();
    kubelet.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_worker_drives_a_member_through_its_kubeconfig_secret_and_reads_no_other() {
    let (Some(west), Some(east)) = (stack(), second_stack()) else { return };
    let _turn = TURN.lock().await;
    let (west_admin, east_admin) = (west.client(As::Admin).await, east.client(As::Admin).await);
    clean(&east_admin).await;
    // The hub's side (deploy/overlays/hub), and east's berth-worker kubeconfig in it.
    let applied = west.kubectl(&["apply", "-f", "deploy/overlays/hub/kubeconfigs.yaml"]);
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    let _ = west.kubectl(&["-n", "berth-clusters", "delete", "secret", "east-kubeconfig", "--ignore-not-found"]);
    let kubeconfig = format!("kubeconfig={}", east.kubeconfig(&As::Worker).display());
    let created = west.kubectl(&[
        "-n",
        "berth-clusters",
        "create",
        "secret",
        "generic",
        "east-kubeconfig",
        "--from-file",
        &kubeconfig,
    ]);
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    // The hub's worker reads that Secret, and no Secret of Berth's own namespace.
    let hub_client = worker_client(west, None).await;
    let secrets: Api<Secret> = Api::namespaced(hub_client.clone(), "berth");
    let refused = secrets.list(&ListParams::default()).await.unwrap_err();
    assert!(matches!(&refused, kube::Error::Api(s) if s.code == 403), "{refused}");

    let f = Fixture::new().await;
    let east_mig = east_pool(&f).await;
    let body = json!({"access": "kubeconfig", "kubeconfig_secret": "east-kubeconfig"});
    let (_, list) = f.call(Method::GET, "/api/v1/clusters", Some(&f.admin), None).await;
    let east_id =
        list.as_array().unwrap().iter().find(|c| c["name"] == "east").unwrap()["id"].as_str().unwrap().to_string();
    let (status, changed) =
        f.call(Method::PUT, &format!("/api/v1/clusters/{east_id}"), Some(&f.admin), Some(body)).await;
    assert_eq!(status, 200, "{changed}");
    let db = f.db.clone();
    let build: server::provisioner::clusters::Build = Arc::new(move |client, _row, _own| Reconciler {
        policy: Policy { retry_delay: Duration::from_millis(50), ..Policy::default() },
        ..Reconciler::new(db.clone(), client, Cluster::default())
    });
    let reach = Arc::new(server::provisioner::cluster_clients::ClusterClients::new("default", hub_client));
    let fleet = server::provisioner::clusters::Fleet { db: f.db.clone(), reach, hub: true, build };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(fleet.run(stopped));
    let kubelet = kubelets(vec![(east_admin.clone(), east_nodes())]);
    let on_east = book(&f, east_mig).await;
    eventually(
        &f,
        "the hub starts the member's session",
        async || f.booking_state(on_east).await == "active",
        Duration::from_secs(90),
    )
    .await;
    assert_eq!(sessions(&east_admin).await.len(), 1, "on east");
    assert!(sessions(&west_admin).await.is_empty(), "not on the hub's own cluster");
    opens_on_east(&f, west, east, on_east).await;
    // The session's owner, on either cluster, reads no member's kubeconfig.
    for stack in [west, east] {
        let ada = stack.client(As::User("ada@a.test")).await;
        for (namespace, name) in [("berth-clusters", "east-kubeconfig"), ("berth-portal-clusters", "east")] {
            let secrets: Api<Secret> = Api::namespaced(ada.clone(), namespace);
            let refused = secrets.get(name).await.unwrap_err();
            assert!(matches!(&refused, kube::Error::Api(s) if s.code == 403 || s.code == 404), "{refused}");
        }
    }
    stop.send(true).unwrap();
    running.await.unwrap().unwrap();
    kubelet.abort();
}
