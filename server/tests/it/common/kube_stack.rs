//! A real Kubernetes API server (etcd, kube-apiserver, kube-controller-manager)
//! with deploy/ applied, started once per suite (a module of the test binary,
//! as each was a binary of its own before) by `.ci/kube-stack.sh` and stopped
//! when the binary exits. Clients act as the accounts that would
//! really act: admin, deploy/'s `berth-worker` and `berth-portal`
//! ServiceAccounts, or any user through impersonation. Also a stand-in
//! kubelet: there is no scheduler and no kubelet, so a test that needs a
//! ready workspace binds its pods to a Node and reports them Running.

use super::processes::repo_root;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where the running stack keeps its kubeconfigs.
pub struct Stack {
    pub dir: PathBuf,
    kueue: OnceLock<()>,
}

/// Who a client acts as.
pub enum As<'a> {
    Admin,
    /// deploy/'s berth-worker ServiceAccount (a TokenRequest token).
    Worker,
    /// deploy/'s berth-portal ServiceAccount.
    Portal,
    /// A user as the OIDC username claim names them, impersonated by admin.
    User(&'a str),
}

/// Each suite's stacks by name ("<suite>" and "<suite>/second"). A suite's
/// tests clean the cluster of every session namespace but their own
/// (`World::no_sessions_left`), so two suites never share a cluster.
static STACKS: Mutex<BTreeMap<String, Suite>> = Mutex::new(BTreeMap::new());

/// A suite's stack and who uses it: the test threads that asked for it
/// (each counted until it exits), and since when nobody has.
struct Suite {
    stack: &'static OnceLock<Option<Stack>>,
    users: usize,
    idle_since: Option<Instant>,
}

/// A stack nobody has used for this long is stopped (started again if its
/// suite asks once more): the suites run one after another, and a dozen
/// idle API servers slowed the DaemonSet controller of the one in use past
/// its tests' patience. Tests of one suite follow each other within
/// milliseconds.
const IDLE_STOP: Duration = Duration::from_secs(20);

thread_local! {
    /// The stacks this thread uses; dropped, and uncounted, when it exits.
    static USING: RefCell<Vec<Using>> = const { RefCell::new(Vec::new()) };
}

struct Using(String);

impl Drop for Using {
    fn drop(&mut self) {
        let mut stacks = STACKS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(suite) = stacks.get_mut(&self.0) {
            suite.users -= 1;
            if suite.users == 0 {
                suite.idle_since = Some(Instant::now());
            }
        }
    }
}

/// The suite calling: the test's module, which libtest names its thread
/// after ("real_cluster_homes::a_teams_…"). Tests call `stack()` from their
/// own body, which runs on that thread under either tokio flavour.
fn suite() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("main");
    name.split("::").next().unwrap_or(name).to_string()
}

fn stack_named(name: String) -> Option<&'static Stack> {
    let once = {
        let mut stacks = STACKS.lock().unwrap();
        let suite = stacks.entry(name.clone()).or_insert_with(|| Suite {
            stack: Box::leak(Box::new(OnceLock::new())),
            users: 0,
            idle_since: None,
        });
        let counted = USING.with(|using| using.borrow().iter().any(|u| u.0 == name));
        if !counted {
            suite.users += 1;
            suite.idle_since = None;
            USING.with(|using| using.borrow_mut().push(Using(name.clone())));
        }
        suite.stack
    };
    static REAPER: OnceLock<()> = OnceLock::new();
    REAPER.get_or_init(|| {
        std::thread::spawn(stop_idle_stacks);
    });
    // Started outside the map's lock: another suite's start takes ~9 s.
    once.get_or_init(|| start(overlay(&name))).as_ref()
}

/// Stops every stack idle for `IDLE_STOP`, for as long as the binary runs.
fn stop_idle_stacks() {
    loop {
        std::thread::sleep(Duration::from_secs(2));
        let idle: Vec<&'static OnceLock<Option<Stack>>> = {
            let mut stacks = STACKS.lock().unwrap_or_else(|e| e.into_inner());
            let names: Vec<String> = stacks
                .iter()
                .filter(|(_, s)| s.users == 0 && s.idle_since.is_some_and(|at| at.elapsed() >= IDLE_STOP))
                .map(|(name, _)| name.clone())
                .collect();
            names.iter().filter_map(|name| stacks.remove(name)).map(|suite| suite.stack).collect()
        };
        for stack in idle.into_iter().filter_map(|once| once.get()).flatten() {
            let _ =
                Command::new("bash").arg(repo_root().join(".ci/kube-stack.sh")).arg("stop").arg(&stack.dir).output();
        }
    }
}

/// The calling suite's stack, started on first use; `None` (the test
/// skips) on a machine without the binaries, except under `CI=true`.
pub fn stack() -> Option<&'static Stack> {
    stack_named(suite())
}

/// A second, separate cluster for the tests of several clusters (another
/// etcd, API server and controller manager): a member cluster, with
/// deploy/overlays/member applied as shipped.
pub fn second_stack() -> Option<&'static Stack> {
    stack_named(format!("{}/second", suite()))
}

/// The overlay a stack of that name is started with.
fn overlay(name: &str) -> &'static str {
    if name.ends_with("/second") {
        "member"
    } else {
        "kubernetes"
    }
}

fn start(overlay: &str) -> Option<Stack> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("berth-kube-{}", uuid::Uuid::new_v4().simple()));
    let output = Command::new("bash")
        .arg(repo_root().join(".ci/kube-stack.sh"))
        .arg("start")
        .arg(&dir)
        .arg(std::process::id().to_string())
        .arg(overlay)
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Some(Stack { dir, kueue: OnceLock::new() }),
        Some(3) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipping the real-API-server tests: {}", said.trim());
            None
        }
        _ => panic!("the real Kubernetes API server did not start: {said}"),
    }
}

impl Stack {
    pub fn kubeconfig(&self, who: &As) -> PathBuf {
        self.dir.join(match who {
            As::Worker => "worker.kubeconfig",
            As::Portal => "portal.kubeconfig",
            As::Admin | As::User(_) => "admin.kubeconfig",
        })
    }

    /// The API server's port on 127.0.0.1.
    pub fn api_port(&self) -> u16 {
        std::fs::read_to_string(self.dir.join("api-port")).expect("the stack's port").trim().parse().expect("a port")
    }

    /// A client of the current test's runtime (a kube client's connection
    /// task lives on the runtime that made it, so clients are never shared).
    pub async fn client(&self, who: As<'_>) -> kube::Client {
        let kubeconfig = Kubeconfig::read_from(self.kubeconfig(&who)).expect("the stack's kubeconfig");
        let mut config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.expect("config");
        if let As::User(name) = who {
            config.auth_info.impersonate = Some(name.to_string());
            config.auth_info.impersonate_groups = Some(vec!["system:authenticated".into()]);
        }
        kube::Client::try_from(config).expect("client")
    }

    /// Adds the real Kueue controller to this stack, once per stack
    /// (`.ci/kube-stack.sh kueue`).
    pub fn with_kueue(&self) {
        self.kueue.get_or_init(|| {
            let output = Command::new("bash")
                .arg(repo_root().join(".ci/kube-stack.sh"))
                .arg("kueue")
                .arg(&self.dir)
                .output()
                .expect("bash runs");
            assert!(output.status.success(), "Kueue did not start: {}", String::from_utf8_lossy(&output.stderr));
        });
    }

    /// `kubectl` as admin against this stack.
    pub fn kubectl(&self, args: &[&str]) -> std::process::Output {
        Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .args(args)
            .env("KUBECONFIG", self.kubeconfig(&As::Admin))
            .current_dir(repo_root())
            .output()
            .expect("kubectl runs")
    }
}

/// Plays the kubelet (and the scheduler) for one node: a Node object with
/// `labels` and GPU capacity, every Pending pod of `namespace` bound to it
/// (`pods/binding`) and reported Running and Ready (`pods/status`). Returns
/// how many pods it made ready.
pub async fn run_pods(admin: &kube::Client, node: &str, labels: &BTreeMap<String, String>, namespace: &str) -> usize {
    let nodes: Api<Node> = Api::all(admin.clone());
    if nodes.get_opt(node).await.expect("read node").is_none() {
        let capacity = json!({ "cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8",
            "nvidia.com/mig-1g.24gb": "28", "nvidia.com/gpu.shared": "32", "ephemeral-storage": "1Ti" });
        let object = json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": node, "labels": labels },
            "status": { "capacity": capacity, "allocatable": capacity } });
        nodes.create(&PostParams::default(), &serde_json::from_value(object).unwrap()).await.expect("create node");
    }
    // A kubelet's heartbeat: a node that never reports Ready is tainted
    // unreachable:NoSchedule a minute after it appears (the node lifecycle
    // controller), and the DaemonSet controller then places nothing on it —
    // which a suite's later tests on the same node met.
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let ready = json!({ "status": { "conditions": [{ "type": "Ready", "status": "True", "reason": "KubeletReady",
        "message": "the tests' stand-in kubelet", "lastHeartbeatTime": now, "lastTransitionTime": now }] } });
    nodes.patch_status(node, &PatchParams::default(), &Patch::Merge(&ready)).await.expect("report the node ready");
    let pods: Api<Pod> = Api::namespaced(admin.clone(), namespace);
    let mut made_ready = 0;
    for pod in pods.list(&ListParams::default()).await.expect("list pods") {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if spec.node_name.is_none() {
            let binding = json!({ "apiVersion": "v1", "kind": "Binding", "metadata": { "name": name },
                "target": { "apiVersion": "v1", "kind": "Node", "name": node } });
            let bound: Result<serde_json::Value, _> =
                pods.create_subresource("binding", &name, &PostParams::default(), &binding).await;
            match bound {
                Ok(_) => {}
                // Deleted meanwhile, or its namespace is terminating: a kubelet would not run it either.
                Err(kube::Error::Api(status)) if matches!(status.code, 403 | 404 | 409) => continue,
                Err(err) => panic!("bind the pod: {err}"),
            }
        }
        let ready = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|conditions| conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        if ready {
            continue;
        }
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let containers: Vec<_> = spec
            .containers
            .iter()
            .map(|c| {
                json!({ "name": c.name, "image": c.image, "imageID": "", "ready": true, "restartCount": 0,
                "started": true, "state": { "running": { "startedAt": now } } })
            })
            .collect();
        let conditions: Vec<_> = ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
            .iter()
            .map(|t| json!({ "type": t, "status": "True", "lastTransitionTime": now }))
            .collect();
        let status = json!({ "status": { "phase": "Running", "conditions": conditions, "containerStatuses": containers,
            "podIP": "10.1.0.10", "hostIP": "10.0.0.10", "startTime": now } });
        match pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status)).await {
            Ok(_) => made_ready += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => panic!("report the pod ready: {err}"),
        }
    }
    made_ready
}

/// The kubelet's part in a deletion: a pod bound to a node keeps its
/// deletionTimestamp until the node's kubelet has stopped its containers and
/// removes it (grace 0); without that no session namespace would finalize.
pub async fn reap_pods(admin: &kube::Client) {
    let pods: Api<Pod> = Api::all(admin.clone());
    for pod in pods.list(&ListParams::default()).await.expect("list pods") {
        if pod.metadata.deletion_timestamp.is_none() {
            continue;
        }
        let (Some(name), Some(namespace)) = (pod.metadata.name, pod.metadata.namespace) else { continue };
        let in_namespace: Api<Pod> = Api::namespaced(admin.clone(), &namespace);
        let _ = in_namespace.delete(&name, &kube::api::DeleteParams::default().grace_period(0)).await;
    }
}

/// Decoys for the worker's cluster-wide lists, made by a cluster admin in
/// namespace `decoys`: a ConfigMap of 10 KB labelled as Berth's, which the
/// API server refuses (its refusal is returned), then `count` such
/// ConfigMaps without the label, which it admits.
pub async fn decoys(admin: &kube::Client, count: usize) -> String {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(admin.clone());
    let namespace = serde_json::from_value(json!({ "metadata": { "name": "decoys" } })).unwrap();
    let _ = namespaces.create(&Default::default(), &namespace).await;
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(admin.clone(), "decoys");
    let payload = "x".repeat(10_000);
    let decoy = |name: String, labels: serde_json::Value| {
        serde_json::from_value(
            json!({ "metadata": { "name": name, "labels": labels }, "data": { "payload": payload } }),
        )
        .unwrap()
    };
    let labelled = decoy("decoy".into(), json!({ "app.kubernetes.io/managed-by": "berth" }));
    let refusal = match config_maps.create(&Default::default(), &labelled).await {
        Err(kube::Error::Api(status)) => status.message,
        other => panic!("a decoy with Berth's label was not refused: {other:?}"),
    };
    for i in 0..count {
        let unlabelled = decoy(format!("decoy-{i}"), json!({ "app.kubernetes.io/managed-by": "helm" }));
        config_maps.create(&Default::default(), &unlabelled).await.unwrap();
    }
    refusal
}
