//! Berth on a real Kubernetes API server (v1.36, with its controller
//! manager), deploy/ applied, the worker acting as deploy/'s `berth-worker`
//! ServiceAccount and the portal as `berth-portal`: every session kind lives
//! its whole life here, as it would on a cluster (see common/kube_stack.rs).
//!
//! The tests share one API server and take turns, each on a database of its
//! own (common/world.rs).

use crate::common;

use axum::http::Method;
use common::kube_stack::{decoys, run_pods, As};
use common::world::{lab_node_labels, world, World};
use common::{GPU, MIG};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, PersistentVolumeClaim, ResourceQuota, Secret};
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{json, Value};
use server::provisioner::manifests::owned_by;
use server::provisioner::manifests::{self, Cluster, Expose, ImageCache, Proxy};
use server::provisioner::snapshot::Snapshot;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What a co-owner could leave behind to keep using a session after they
/// leave it: a second Jupyter that reads the access Secret, its Service and
/// an Ingress under the session's host.
fn foothold(ns: &str) -> Vec<Value> {
    let host = format!("{ns}.berth.local");
    let labels = json!({ "app": "mine" });
    vec![
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "second-jupyter", "namespace": ns },
            "spec": { "replicas": 1, "selector": { "matchLabels": labels }, "template": { "metadata": { "labels": labels },
            "spec": { "nodeSelector": lab_node_labels(),
                "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
                "containers": [{ "name": "jupyter", "image": "quay.io/jupyter/minimal-notebook:latest",
                "env": [{ "name": "JUPYTER_TOKEN", "valueFrom": { "secretKeyRef":
                    { "name": manifests::ACCESS_SECRET, "key": "token" } } }] }] } } } }),
        json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "mine", "namespace": ns },
            "spec": { "selector": labels, "ports": [{ "port": 80, "targetPort": 8888 }] } }),
        json!({ "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": { "name": "mine", "namespace": ns },
            "spec": { "rules": [{ "host": format!("lab.{host}"), "http": { "paths": [{ "path": "/", "pathType": "Prefix",
            "backend": { "service": { "name": "mine", "port": { "number": 80 } } } }] } }] } }),
    ]
}

fn dynamic(client: &kube::Client, ns: &str, object: &Value) -> Api<DynamicObject> {
    let resource = server::provisioner::snapshot::resource(
        object["apiVersion"].as_str().unwrap(),
        object["kind"].as_str().unwrap(),
    );
    Api::namespaced_with(client.clone(), ns, &resource)
}

async fn create_as(client: &kube::Client, ns: &str, object: &Value) {
    let typed: DynamicObject = serde_json::from_value(object.clone()).unwrap();
    let created = dynamic(client, ns, object).create(&Default::default(), &typed).await;
    created.unwrap_or_else(|e| panic!("{} {}: {e}", object["kind"], object["metadata"]["name"]));
}

async fn exists(client: &kube::Client, ns: &str, object: &Value) -> bool {
    let name = object["metadata"]["name"].as_str().unwrap();
    dynamic(client, ns, object).get_opt(name).await.unwrap().is_some_and(|o| o.metadata.deletion_timestamp.is_none())
}

/// Every object the worker applies exists, once, managed by `berth` alone.
fn assert_applied_once(objects: &BTreeMap<String, Value>, expected: &[Value]) {
    let names: Vec<String> = expected[1..]
        .iter()
        .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap()))
        .collect();
    let mut want = names.clone();
    want.sort();
    assert_eq!(objects.keys().cloned().collect::<Vec<_>>(), want, "exactly the worker's objects");
    for (name, object) in objects {
        let managers: Vec<&str> = object["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["operation"] == "Apply")
            .map(|f| f["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["berth"], "{name}: applied by the worker's field manager only");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mig_interactive_session_lives_its_whole_life_on_the_real_server() {
    let Some((w, _turn)) = world(Cluster::default()).await else { return };
    // No node yet (an earlier test's stand-in kubelet may have made one).
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(w.admin.clone());
    let _ = nodes.delete("gpu-node-1", &Default::default()).await;
    let id = w.book(MIG, 2, "interactive", w.f.lab).await;
    let report = w.worker.pass().await.unwrap();
    assert!(report.errors.is_empty(), "the real server refused: {:?}", report.errors);
    assert_eq!(report.applied, 16, "namespace and 15 objects in it");
    let facts = app::backend::sessions::facts::facts(&w.f.db, id).await.unwrap();
    let expected: Vec<_> =
        manifests::all(&manifests::Session::of(facts), &Cluster::default(), "").into_iter().collect();
    assert_applied_once(&w.objects(id).await, &expected);

    let ns = World::namespace(id);
    let quota: Api<ResourceQuota> = Api::namespaced(w.admin.clone(), &ns);
    let hard = quota.get("berth-session").await.unwrap().spec.unwrap().hard.unwrap();
    assert_eq!(hard["requests.nvidia.com/mig-1g.24gb"].0, "4", "2 slices × 2 time-slice replicas");
    assert_eq!(hard["requests.storage"].0, "250Gi", "ada's home (her tenant's 50) and the model cache (200)");
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(w.admin.clone(), &ns);
    assert_eq!(claims.list(&ListParams::default()).await.unwrap().items.len(), 2, "home and model cache admitted");
    assert_eq!(w.state(id).await, "approved", "not active before the workspace is ready");
    let ready = w.steps(id).await[6].clone();
    assert_eq!(ready.1, "working");
    assert_eq!(
        ready.2,
        "waiting for the workspace to report ready: the cluster has no node with the pool's labels \
         (nvidia.com/gpu.product=NVIDIA-H100-NVL)",
        "why it waits, as deploy/'s berth-worker can tell"
    );

    w.until_active(id, &lab_node_labels()).await;
    assert!(w.steps(id).await.iter().all(|(_, state, _)| state == "done"));
    let writes_before = w.objects(id).await;
    let report = w.worker.pass().await.unwrap();
    // The real server drops empty maps: the proxy ConfigMap without a proxy
    // once had `data: {}` and was rewritten by every pass.
    assert_eq!(report.applied, 0, "a converged pass writes nothing on the real server");
    assert_eq!(w.objects(id).await.keys().collect::<Vec<_>>(), writes_before.keys().collect::<Vec<_>>());

    // Decoys: not even a cluster admin may put Berth's label on an object
    // (berth-session-labels); 500 without it, 10 KB each, are never read.
    let session_only = [ns.clone()].into_iter().collect();
    let read = || Snapshot::read(&w.worker.client, &session_only, 0, Duration::ZERO);
    let before = read().await.unwrap().len();
    let refusal = decoys(&w.admin, 500).await;
    assert!(refusal.contains("the label app.kubernetes.io/managed-by is Berth's"), "{refusal}");
    assert_eq!(read().await.unwrap().len(), before, "not one decoy in the snapshot");
    assert_eq!(w.worker.pass().await.unwrap().applied, 0, "nor in the pass");
    let _ = Api::<Namespace>::all(w.admin.clone()).delete("decoys", &Default::default()).await;

    // A co-owner comes and goes: the worker's account rotates the token and
    // restarts the workspace (a merge patch under its own field manager).
    let secrets: Api<Secret> = Api::namespaced(w.admin.clone(), &ns);
    let token_now = || async { secrets.get(manifests::ACCESS_SECRET).await.unwrap().data.unwrap()["token"].clone() };
    let before = token_now().await;
    let co_owners = format!("/api/v1/bookings/{id}/co-owners");
    let shared = w.f.call(Method::POST, &co_owners, Some(&w.f.ada), Some(json!({ "email": "carol@a.test" }))).await;
    assert_eq!(shared.0, 409, "a session in ada's kept home is not shared now: {}", shared.1);
    // As a booking shared before that rule (the worker still rotates for it).
    sqlx::query(
        "INSERT INTO booking_co_owner (booking_id, user_id, added_by)
         SELECT $1, c.id, a.id FROM app_user c, app_user a WHERE c.email = 'carol@a.test' AND a.email = 'ada@a.test'",
    )
    .bind(id)
    .execute(&w.f.db)
    .await
    .unwrap();
    assert!(w.worker.repair_pass().await.unwrap().errors.is_empty());
    assert_eq!(token_now().await, before, "a new holder needs no new token");
    // While she holds it, carol leaves a foothold: a second Jupyter reading
    // the access Secret (it would read every new token) behind an Ingress.
    let carol = w.stack.client(As::User("carol@a.test")).await;
    let foothold = foothold(&ns);
    for object in &foothold {
        create_as(&carol, &ns, object).await;
    }
    let gone = w.f.call(Method::DELETE, &format!("{co_owners}/carol@a.test"), Some(&w.f.ada), None).await;
    assert_eq!(gone.0, 204);
    let report = w.worker.repair_pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_ne!(token_now().await, before, "carol's copy opens nothing");
    for object in &foothold {
        let kind = object["kind"].as_str().unwrap();
        assert!(!exists(&w.admin, &ns, object).await, "carol's {kind} was removed before the token changed");
    }
    let berths = w.objects(id).await;
    let ada: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(&w.f.db).await.unwrap();
    let home = format!("PersistentVolumeClaim/home-{ada}");
    for kept in ["Deployment/workspace", "Service/workspace", "Ingress/workspace", &home] {
        assert!(berths.contains_key(kept), "Berth's {kept} stays");
    }
    let note: String = sqlx::query_scalar(
        "SELECT reason FROM booking_event WHERE booking_id = $1 AND to_state = 'active' ORDER BY id DESC LIMIT 1",
    )
    .bind(id)
    .fetch_one(&w.f.db)
    .await
    .unwrap();
    // Carol's 3 objects, and by the time they go the ReplicaSet and pod her
    // Deployment's controllers may have made (not Berth's either): 3 to 5.
    let count = note.strip_prefix("Access changed: carol@a.test no longer holds this booking, so the ");
    let count: usize = count.and_then(|rest| rest.split(' ').next()?.parse().ok()).unwrap_or(0);
    assert!((3..=5).contains(&count) && note.contains("objects the session's users had made"), "{note}");
    let ada = app::backend::accounts::tokens::authenticate(&w.f.db, &w.f.ada).await.unwrap().unwrap();
    let card = app::backend::bookings::mine::one(&w.f.db, &ada, id, "UTC").await.unwrap().live.remove(0);
    assert_eq!(card.access_note.as_deref(), Some(note.as_str()), "ada's card says why the workspace restarted");
    let deployments: Api<Deployment> = Api::namespaced(w.admin.clone(), &ns);
    let template = deployments.get("workspace").await.unwrap().spec.unwrap().template.metadata.unwrap();
    assert!(template.annotations.unwrap().contains_key(server::provisioner::rotate::ROTATED_ANNOTATION));
    w.until_ready(id, &lab_node_labels()).await;

    // Open workspace: the portal reads the access Secret as berth-portal.
    let portal = w.stack.client(As::Portal).await;
    let mode = app::model::ClusterMode { simulated: false, kueue: false };
    let app = server::router(common::test_state(w.f.db.clone()).with_cluster(
        Cluster::default(),
        mode,
        server::provisioner::cluster_clients::ClusterClients::single(portal.clone()),
    ));
    let request = axum::http::Request::get(format!("/bookings/{id}/open"))
        .header("authorization", format!("Bearer {}", w.f.ada))
        .body(axum::body::Body::empty())
        .unwrap();
    let response = tower::ServiceExt::oneshot(app, request).await.unwrap();
    assert_eq!(response.status(), 303);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let token = secrets.get(manifests::ACCESS_SECRET).await.unwrap().data.unwrap()["token"].clone();
    let token = String::from_utf8(token.0).unwrap();
    let code = location.split("/.berth/open?code=").nth(1).expect(&location);
    let gate = server::gate::Gate::new(token, "127.0.0.1:9".parse().unwrap(), "https://x");
    assert_eq!(gate.redeem(code, chrono::Utc::now().timestamp()), Ok(()), "a one-time code for the gate: {location}");
    // …and nothing else: not another Secret, not a list.
    let portal_secrets: Api<Secret> = Api::namespaced(portal, &ns);
    assert_eq!(forbidden(portal_secrets.list(&ListParams::default()).await), 403);

    // End early: the namespace is really gone, the booking completed.
    let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200, "{body}");
    w.until_gone(id, "completed").await;
}

/// The HTTP status of a refusal (panics on success).
fn forbidden<T: std::fmt::Debug>(outcome: Result<T, kube::Error>) -> u16 {
    match outcome {
        Err(kube::Error::Api(status)) => status.code,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_gpu_inference_and_time_sliced_sessions_start_and_end_with_their_window() {
    let Some((w, _turn)) = world(Cluster::default()).await else { return };
    // A time-sliced share: GPUs the device plugin advertises 4 times each.
    let shared = w.pool("shared", GPU, 4).await;
    let whole = w.pool("whole", GPU, 1).await;
    let sessions = [
        (w.book(MIG, 1, "inference", w.f.lab).await, lab_node_labels(), ("nvidia.com/mig-1g.24gb", "2")),
        (w.book(GPU, 1, "interactive", whole).await, pool_labels("whole"), (GPU, "1")),
        (w.book(GPU, 2, "interactive", shared).await, pool_labels("shared"), (GPU, "8")),
    ];
    for (id, labels, (kind, units)) in &sessions {
        w.until_active(*id, labels).await;
        let quota: Api<ResourceQuota> = Api::namespaced(w.admin.clone(), &World::namespace(*id));
        let hard = quota.get("berth-session").await.unwrap().spec.unwrap().hard.unwrap();
        assert_eq!(hard[&format!("requests.{kind}")].0, *units, "{kind}");
        let deployments: Api<Deployment> = Api::namespaced(w.admin.clone(), &World::namespace(*id));
        let pod = deployments.get("workspace").await.unwrap().spec.unwrap().template.spec.unwrap();
        let requests = pod.containers[0].resources.clone().unwrap().requests.unwrap_or_default();
        assert_eq!(requests.contains_key(*kind), *kind != MIG, "{kind}: the inference workspace holds no unit");
        assert_eq!(pod.node_selector.unwrap(), *labels, "on the pool's nodes");
    }
    // The window ends (time moves on: the booking's end is put in the past).
    for (id, _, _) in &sessions {
        sqlx::query("UPDATE booking SET ends_at = now() - interval '1 second' WHERE id = $1")
            .bind(id)
            .execute(&w.f.db)
            .await
            .unwrap();
    }
    for (id, _, _) in &sessions {
        w.until_gone(*id, "completed").await;
    }
}

fn pool_labels(pool: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("berth.io/pool".to_string(), pool.to_string())])
}

/// The ServiceAccount of the image cache's first pod, once the DaemonSet
/// controller made one (admitted under Pod Security `restricted` in `berth`).
async fn cache_pod_account(admin: &kube::Client) -> Option<String> {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(admin.clone(), "berth");
    let params = ListParams::default().labels(&format!("app.kubernetes.io/name={}", manifests::IMAGE_CACHE));
    // 60 s: under a CI run's load the DaemonSet controller once took over 30.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(pod) = pods.list(&params).await.unwrap().items.into_iter().next() {
            return pod.spec.and_then(|spec| spec.service_account_name);
        }
        if Instant::now() >= deadline {
            // What the controller said (a refused create shows as FailedCreate).
            let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(admin.clone(), "berth");
            let said: Vec<String> = events
                .list(&ListParams::default())
                .await
                .map(|list| list.items)
                .unwrap_or_default()
                .into_iter()
                .map(|e| format!("{}: {}", e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
                .collect();
            panic!("the DaemonSet controller made no image cache pod; events in berth: {said:#?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openshift_route_the_image_cache_and_proxy_settings_are_applied_as_the_worker() {
    let proxy = Proxy {
        http: "http://proxy.corp:3128".into(),
        https: "http://proxy.corp:3128".into(),
        no_proxy: ".svc,.cluster.local".into(),
        cidr: "10.20.0.0/16".into(),
        port: 3128,
    };
    let vllm = format!("vllm/vllm-openai@sha256:{}", "0a".repeat(32));
    let cache = ImageCache {
        images: vec![vllm.clone()],
        registries: vec!["docker.io/vllm".into()],
        node_selector: lab_node_labels(),
        pause_image: "registry.k8s.io/pause:3.10".into(),
    };
    let cluster = Cluster {
        expose: Expose::Route,
        proxy: Some(proxy),
        image_cache: Some(cache),
        domain: "apps.example.org".into(),
        ..Cluster::default()
    };
    let Some((w, _turn)) = world(cluster.clone()).await else { return };
    let id = w.book(MIG, 1, "interactive", w.f.lab).await;
    w.until_active(id, &lab_node_labels()).await;
    let objects = w.objects(id).await;
    let route = &objects["Route/workspace"];
    assert_eq!(route["spec"]["host"], format!("{}.apps.example.org", World::namespace(id)));
    assert!(!objects.contains_key("Ingress/workspace"));
    let config: Api<ConfigMap> = Api::namespaced(w.admin.clone(), &World::namespace(id));
    let data = config.get("berth-proxy").await.unwrap().data.unwrap();
    assert_eq!(data["HTTPS_PROXY"], "http://proxy.corp:3128");
    let daemon_sets: Api<DaemonSet> = Api::namespaced(w.admin.clone(), "berth");
    let cache = daemon_sets.get(manifests::IMAGE_CACHE).await.unwrap();
    let images: Vec<String> = cache
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .init_containers
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| c.image)
        .collect();
    assert_eq!(images, [vllm], "digests from approved registries only: not the pool's tagged image");
    let account = cache_pod_account(&w.admin).await;
    assert_eq!(account.as_deref(), Some(manifests::IMAGE_CACHE), "the cache's pods run as its own account");
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 0, "converged, the image cache included");
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.until_gone(id, "completed").await;
    daemon_sets.delete(manifests::IMAGE_CACHE, &Default::default()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stuck_terminating_holds_the_next_one_and_admins_hear_of_it() {
    let Some((mut w, _turn)) = world(Cluster::default()).await else { return };
    let first = w.book(MIG, 2, "interactive", w.f.lab).await;
    w.until_active(first, &lab_node_labels()).await;
    // A pod that will not go: a finalizer no one removes (a stuck CSI
    // driver, a node that stopped answering).
    let ns = World::namespace(first);
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(w.admin.clone(), &ns);
    let pod = pods.list(&ListParams::default()).await.unwrap().items.remove(0).metadata.name.unwrap();
    let hold = json!({ "metadata": { "finalizers": ["berth.test/hold"] } });
    pods.patch(&pod, &Default::default(), &kube::api::Patch::Merge(&hold)).await.unwrap();
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{first}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.worker.pass().await.unwrap();

    // The next session of the pool waits, and says for whom.
    let next = w.book(MIG, 2, "interactive", w.f.lab).await;
    w.worker.pass().await.unwrap();
    let ready = w.steps(next).await[6].clone();
    assert_eq!(ready.1, "working");
    assert!(ready.2.contains(&format!("still terminating ({ns})")), "{}", ready.2);

    // Past the limit (0 here, 2 minutes by default): admins are told once.
    w.worker.policy.stuck_after = Duration::ZERO;
    server::metrics::handle(); // the recorder, before the gauge is set
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(w.worker.report_stuck().await.unwrap(), std::slice::from_ref(&ns));
    assert_eq!(w.worker.report_stuck().await.unwrap(), std::slice::from_ref(&ns));
    let told: Vec<(String, String)> =
        sqlx::query_as("SELECT event, detail FROM notification WHERE booking_id = $1 AND event = 'session.stuck'")
            .bind(first)
            .fetch_all(&w.f.db)
            .await
            .unwrap();
    assert_eq!(told, [("session.stuck".to_string(), ns.clone())]);
    let metrics = server::metrics::handle().render();
    assert!(metrics.contains("berth_session_namespaces_stuck 1"), "{metrics}");

    let release = json!({ "metadata": { "finalizers": null } });
    pods.patch(&pod, &Default::default(), &kube::api::Patch::Merge(&release)).await.unwrap();
    w.until_gone(first, "completed").await;
    assert!(w.worker.report_stuck().await.unwrap().is_empty());
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{next}/cancel"), Some(&w.f.ada), None).await;
    assert!(status.is_success(), "{status}");
    w.worker.pass().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clusters_own_words_reach_the_booking_card_and_the_pass_report() {
    let Some((w, _turn)) = world(Cluster::default()).await else { return };
    let said = "proxy settings are managed by the platform team (ticket PLAT-42)";
    let rule = w.refuse("", "configmaps", "berth-proxy", said).await;
    let id = w.book(MIG, 1, "interactive", w.f.lab).await;
    let report = w.worker.pass().await.unwrap();
    // Isolation is not complete, so the user is not bound yet.
    let objects = w.objects(id).await;
    assert!(objects.contains_key("NetworkPolicy/berth-egress"), "{:?}", objects.keys());
    assert!(!objects.contains_key("RoleBinding/berth-session-user"), "{:?}", objects.keys());
    let as_ada: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(w.stack.client(As::User("ada@a.test")).await, &World::namespace(id));
    assert!(matches!(as_ada.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 403));
    w.allow_again(&rule).await;
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].1.contains(said), "{:?}", report.errors);
    assert!(!report.errors[0].1.contains("403"), "the status name is replaced: {:?}", report.errors);
    let step = w.steps(id).await.into_iter().find(|(_, state, _)| state == "failed").unwrap();
    assert_eq!(step.0, "Network isolation");
    assert!(step.2.starts_with("ConfigMap berth-proxy: "), "{}", step.2);
    assert!(step.2.contains(said), "{}", step.2);
    // Once the rule is gone, the next passes finish the session.
    w.until_active(id, &lab_node_labels()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_provisioning_is_finished_by_the_next_without_duplicates_or_conflicts() {
    let Some((w, _turn)) = world(Cluster::default()).await else { return };
    let database: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&w.f.db).await.unwrap();
    let base = std::env::var("DATABASE_URL").unwrap();
    let url = format!("{}/{database}", base.rsplit_once('/').unwrap().0);
    // The domain this cluster's policies guard (deploy/'s berth-config):
    // a worker publishing under another starts no workspace.
    let maps: Api<ConfigMap> = Api::namespaced(w.admin.clone(), "berth");
    let domain = maps.get("berth-config").await.unwrap().data.unwrap()["BERTH_WORKSPACE_DOMAIN"].clone();
    let worker = |kubeconfig: &std::path::Path| {
        let child = common::processes::berth()
            .arg("worker")
            .env("DATABASE_URL", &url)
            .env("BERTH_WORKSPACE_DOMAIN", &domain)
            .env("KUBECONFIG", kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .spawn()
            .expect("berth worker starts");
        KillOnDrop(child)
    };
    let id = w.book(MIG, 1, "interactive", w.f.lab).await;
    let ns = World::namespace(id);
    let kubeconfig = w.stack.kubeconfig(&As::Worker);
    // The first worker gets as far as the workspace, which the cluster
    // refuses for now; it is killed there (SIGKILL: no drop, no goodbye).
    let rule = w.refuse("apps", "deployments", "workspace", "not yet: the test holds the workspace back").await;
    let mut first = worker(&kubeconfig);
    let deadline = Instant::now() + Duration::from_secs(30);
    while w.steps(id).await.get(5).is_none_or(|(_, state, _)| state != "failed") {
        assert!(Instant::now() < deadline, "the first worker did not reach the workspace: {:?}", w.steps(id).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    first.0.kill().unwrap();
    w.allow_again(&rule).await;
    first.0.wait().unwrap();
    let partial = w.objects(id).await.len();

    let second = worker(&kubeconfig);
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.state(id).await != "active" {
        assert!(Instant::now() < deadline, "the second worker did not converge: {:?}", w.steps(id).await);
        run_pods(&w.admin, "gpu-node-1", &lab_node_labels(), &ns).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    drop(second);
    let facts = app::backend::sessions::facts::facts(&w.f.db, id).await.unwrap();
    let expected: Vec<_> =
        manifests::all(&manifests::Session::of(facts), &Cluster::default(), "").into_iter().collect();
    let objects = w.objects(id).await;
    assert_eq!(partial + 3, objects.len(), "killed before the workspace, its Service and Ingress");
    assert_applied_once(&objects, &expected);
    let namespaces: Api<Namespace> = Api::all(w.admin.clone());
    let managed = namespaces.list(&ListParams::default().labels(&manifests::managed_selector())).await.unwrap();
    let sessions = managed.items.into_iter().filter(|ns| owned_by(ns, None).is_some());
    let names: Vec<String> = sessions.filter_map(|n| n.metadata.name).collect();
    assert_eq!(names, [ns], "no orphaned namespace");
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.until_gone(id, "completed").await;
}

/// A `berth worker` process that a failing assertion must not leave running.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The pool form offers only the cluster's classes: the worker reads them
/// (as deploy/'s berth-worker, names only) at its sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_names_only_priority_and_runtime_classes_the_cluster_has() {
    let Some((w, _turn)) = world(Cluster::default()).await else { return };
    let runtime: DynamicObject = serde_json::from_value(
        json!({ "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": { "name": "nvidia" }, "handler": "nvidia" }),
    )
    .unwrap();
    let classes: Api<DynamicObject> =
        Api::all_with(w.admin.clone(), &server::provisioner::snapshot::resource("node.k8s.io/v1", "RuntimeClass"));
    if classes.get_opt("nvidia").await.unwrap().is_none() {
        classes.create(&Default::default(), &runtime).await.unwrap();
    }
    w.worker.read_classes().await.expect("the worker's account lists the classes");
    let pool = format!("/api/v1/pools/{}", w.f.lab);
    let set = |body: Value| w.f.call(Method::PATCH, &pool, Some(&w.f.admin), Some(body));
    assert_eq!(set(json!({ "runtime_class": "nvidia" })).await.0, 200);
    let (status, err) = set(json!({ "runtime_class": "kata" })).await;
    assert_eq!((status.as_u16(), err["field"].as_str()), (422, Some("runtime_class")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("it has: nvidia"), "{err}");
    // Every cluster has the two system- classes; they are never a pool's.
    let known: Vec<String> = sqlx::query_scalar("SELECT name FROM cluster_class WHERE kind = 'priority' ORDER BY name")
        .fetch_all(&w.f.db)
        .await
        .unwrap();
    assert!(known.contains(&"system-node-critical".to_string()), "{known:?}");
    let (status, err) = set(json!({ "priority_class": "system-node-critical" })).await;
    assert_eq!((status.as_u16(), err["field"].as_str()), (422, Some("priority_class")), "{err}");
}
