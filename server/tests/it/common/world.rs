//! One test's world on the shared real API server (see kube_stack.rs): a
//! database of its own, the worker as deploy/'s `berth-worker`, and the
//! steps a session's life takes there. The tests of a binary share one API
//! server and the worker collects every managed namespace its database does
//! not know, so they take turns (`world` holds the turn).

use super::kube_stack::{reap_pods, run_pods, stack, As, Stack};
use super::{slot, Fixture};
use axum::http::Method;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{json, Value};
use server::provisioner::manifests::{self, owned_by, Cluster};
use server::provisioner::reconcile::{Policy, Reconciler};
use server::provisioner::snapshot::{resource, SESSION_KINDS};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Ada books `quantity` of `kind` on `pool` from the slot running now to
/// `slot(4)`.
pub async fn book_now(f: &Fixture, kind: &str, quantity: i32, mode: &str, pool: Uuid) -> Uuid {
    // The slot running now is in the past once the next one begins: a
    // request made a moment before a boundary waits for it.
    let into_slot = (chrono::Utc::now() - super::current_slot()).num_milliseconds();
    if into_slot > 15 * 60 * 1000 - 3000 {
        tokio::time::sleep(Duration::from_millis((15 * 60 * 1000 - into_slot + 200) as u64)).await;
    }
    // A loaded machine may still cross it before the server decides: then
    // the slot that has just begun is booked instead.
    for attempt in 0..2 {
        let body = json!({ "pool_id": pool, "kind": kind, "quantity": quantity,
            "start": super::current_slot(), "end": slot(4), "mode": mode });
        let (status, body) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body)).await;
        let crossed = status == 422 && body["field"] == "start" && attempt == 0;
        if !crossed {
            assert_eq!(status, 201, "{body}");
            return body["id"].as_str().unwrap().parse().unwrap();
        }
    }
    unreachable!("the second attempt returns or fails its assertion")
}

static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The demo pool's nodes (its node selector).
pub fn lab_node_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("nvidia.com/gpu.product".to_string(), "NVIDIA-H100-NVL".to_string())])
}

pub struct World {
    pub stack: &'static Stack,
    pub f: Fixture,
    pub admin: kube::Client,
    pub worker: Reconciler,
}

/// A world of this test's own, once the other tests are done with the
/// API server; `None` where the real server cannot run (see kube_stack).
pub async fn world(cluster: Cluster) -> Option<(World, tokio::sync::MutexGuard<'static, ()>)> {
    let stack = stack()?;
    let turn = TURN.lock().await;
    let f = Fixture::new().await;
    let worker = Reconciler {
        policy: Policy { retry_delay: Duration::from_millis(50), ..Policy::default() },
        ..Reconciler::new(f.db.clone(), stack.client(As::Worker).await, cluster)
    };
    let world = World { stack, admin: stack.client(As::Admin).await, f, worker };
    world.no_sessions_left().await;
    Some((world, turn))
}

impl World {
    pub async fn book(&self, kind: &str, quantity: i32, mode: &str, pool: Uuid) -> Uuid {
        book_now(&self.f, kind, quantity, mode, pool).await
    }

    pub async fn state(&self, id: Uuid) -> String {
        self.f.booking_state(id).await
    }

    pub fn namespace(id: Uuid) -> String {
        manifests::namespace_name("team-a", id)
    }

    /// Passes of the worker, the kubelet's part played between them, until
    /// the booking is active (the Deployment controller counts the pod).
    pub async fn until_active(&self, id: Uuid, node_labels: &BTreeMap<String, String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let report = self.worker.pass().await.expect("a pass");
            assert!(report.errors.is_empty(), "the real server refused: {:?}", report.errors);
            if self.state(id).await == "active" {
                return;
            }
            run_pods(&self.admin, "gpu-node-1", node_labels, &Self::namespace(id)).await;
            assert!(Instant::now() < deadline, "{id} not active within 60 s: {:?}", self.steps(id).await);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// Passes (playing the kubelet) until the worker records the session's
    /// workspace ready, as after a restart: its card then offers Open.
    pub async fn until_ready(&self, id: Uuid, node_labels: &BTreeMap<String, String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let report = self.worker.pass().await.expect("a pass");
            assert!(report.errors.is_empty(), "the real server refused: {:?}", report.errors);
            let stored = app::backend::sessions::session_status::load(&self.f.db, &[id]).await.unwrap();
            if stored.get(&id).is_some_and(|s| s.status.workspace_url.is_some()) {
                return;
            }
            // A restart replaces the pod: the old one goes once "its containers stop".
            reap_pods(&self.admin).await;
            run_pods(&self.admin, "gpu-node-1", node_labels, &Self::namespace(id)).await;
            assert!(Instant::now() < deadline, "{id} not ready within 60 s: {:?}", self.steps(id).await);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    pub async fn steps(&self, id: Uuid) -> Vec<(String, String, String)> {
        let stored = app::backend::sessions::session_status::load(&self.f.db, &[id]).await.unwrap();
        let status = stored.get(&id).map(|s| s.status.clone()).unwrap_or_default();
        status.steps.into_iter().map(|s| (s.step, s.state.as_str().to_string(), s.detail)).collect()
    }

    /// Passes until the namespace is really gone (the controller manager
    /// finalizes it) and the booking is `state`.
    pub async fn until_gone(&self, id: Uuid, state: &str) -> Duration {
        let started = Instant::now();
        let namespaces: Api<Namespace> = Api::all(self.admin.clone());
        loop {
            // The kubelet's part: the worker gave the pods SIGTERM and their
            // grace period; a kubelet removes each once its containers exit.
            self.worker.pass().await.expect("a pass");
            reap_pods(&self.admin).await;
            let gone = namespaces.get_opt(&Self::namespace(id)).await.unwrap().is_none();
            if gone && self.state(id).await == state {
                return started.elapsed();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "{} still there after 60 s", Self::namespace(id));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Namespaces of earlier tests (another database's bookings) are gone,
    /// so a test sees only its own.
    pub async fn no_sessions_left(&self) {
        let namespaces: Api<Namespace> = Api::all(self.admin.clone());
        let managed = ListParams::default().labels(&manifests::managed_selector());
        // Sessions only: Berth's own namespace carries the managed-by label too.
        let sessions = || async {
            let all = namespaces.list(&managed).await.unwrap().items;
            all.into_iter().filter(|ns| owned_by(ns, None).is_some()).collect::<Vec<_>>()
        };
        for ns in sessions().await {
            let name = ns.metadata.name.unwrap_or_default();
            let _ = namespaces.delete(&name, &Default::default()).await;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while !sessions().await.is_empty() {
            reap_pods(&self.admin).await;
            assert!(Instant::now() < deadline, "namespaces of an earlier test not gone within 60 s");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A cluster rule Berth does not know of: the API server refuses, with
    /// `message`, any `resource` named `name` (group "" or "apps"), until
    /// `allow_again`. Returns once the rule is in force.
    pub async fn refuse(&self, group: &str, resource: &str, name: &str, message: &str) -> std::path::PathBuf {
        let policy = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": { "name": "test-refuse" }, "spec": { "failurePolicy": "Fail",
            "matchConstraints": { "resourceRules": [{ "apiGroups": [group], "apiVersions": ["v1"],
                "resources": [resource], "operations": ["CREATE", "UPDATE"] }] },
            "validations": [{ "expression": format!("object.metadata.name != '{name}'"), "message": message }] } });
        let binding = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": { "name": "test-refuse" }, "spec": { "policyName": "test-refuse", "validationActions": ["Deny"] } });
        let file = self.stack.dir.join("test-refuse.json");
        std::fs::write(&file, json!({ "apiVersion": "v1", "kind": "List", "items": [policy, binding] }).to_string())
            .unwrap();
        let applied = self.stack.kubectl(&["apply", "--server-side", "-f", file.to_str().unwrap()]);
        assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
        let metadata = json!({ "name": name, "namespace": "default" });
        let probe = match group {
            "apps" => json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
                "spec": { "selector": { "matchLabels": { "a": "b" } }, "template": { "metadata": { "labels": { "a": "b" } },
                    "spec": { "containers": [{ "name": "c", "image": "i" }] } } } }),
            _ => json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata }),
        };
        let probe_file = self.stack.dir.join("test-refuse-probe.json");
        std::fs::write(&probe_file, probe.to_string()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let tried = self.stack.kubectl(&["create", "--dry-run=server", "-f", probe_file.to_str().unwrap()]);
            if String::from_utf8_lossy(&tried.stderr).contains(message) {
                return file;
            }
            assert!(Instant::now() < deadline, "the test policy never took effect");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Lifts the rule of `refuse`; returns once the probe is admitted again.
    pub async fn allow_again(&self, file: &std::path::Path) {
        let deleted = self.stack.kubectl(&["delete", "-f", file.to_str().unwrap()]);
        assert!(deleted.status.success(), "{}", String::from_utf8_lossy(&deleted.stderr));
        let probe = self.stack.dir.join("test-refuse-probe.json");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.stack.kubectl(&["create", "--dry-run=server", "-f", probe.to_str().unwrap()]).status.success() {
            assert!(Instant::now() < deadline, "the test policy stayed in force");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A pool of one kind on nodes labelled `pool=<name>`.
    pub async fn pool(&self, name: &str, kind: &str, replicas: i32) -> Uuid {
        let body = json!({ "name": name, "kinds": [{ "kind": kind, "capacity": 4, "replicas_per_unit": replicas,
            "vram_gb_per_unit": 48, "cpu_millis_per_unit": 2000, "memory_mib_per_unit": 8192, "storage_gib_per_unit": 10 }],
            "node_selector": { "berth.io/pool": name }, "images": ["quay.io/jupyter/minimal-notebook:latest"] });
        let (status, body) = self.f.call(Method::POST, "/api/v1/pools", Some(&self.f.admin), Some(body)).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().parse().unwrap()
    }

    /// Every object of the session, as the admin reads it: kind/name → object.
    pub async fn objects(&self, id: Uuid) -> BTreeMap<String, Value> {
        let ns = Self::namespace(id);
        let mut found = BTreeMap::new();
        // Every kind the worker puts into a session (its snapshot's list).
        for (api_version, kind) in SESSION_KINDS {
            let api: Api<DynamicObject> = Api::namespaced_with(self.admin.clone(), &ns, &resource(api_version, kind));
            for object in api.list(&ListParams::default()).await.unwrap() {
                let name = object.metadata.name.clone().unwrap_or_default();
                // The controller manager's own: the CA bundles it puts in every namespace.
                if name != "kube-root-ca.crt" && name != "openshift-service-ca.crt" {
                    found.insert(format!("{kind}/{name}"), serde_json::to_value(object).unwrap());
                }
            }
        }
        found
    }
}
