//! A hostile neighbour gets nothing, round 3, on a real API server (v1.36)
//! with deploy/ applied: what a controller makes for a session's user is
//! judged as if they made it. The user writes a pod's `ephemeral` volume or
//! a StatefulSet's `volumeClaimTemplates`; the ephemeral-volume and
//! StatefulSet controllers of the real kube-controller-manager make the
//! claims. Each attack sits beside its legitimate form, which still works.

use crate::common;
use crate::policy::attack::*;
use crate::policy::session;

use common::kube_stack::{stack, As, Stack};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{json, Value};
use server::provisioner::snapshot::resource;
use std::time::{Duration, Instant};

const MIG: &str = "nvidia.com/mig-1g.24gb";
/// Another team's person, whose home a claim named for them would take.
const BOB: &str = "6b0b0b0b-0b0a-4908-8706-050403020100";

/// Another team's pre-provisioned volume, Available to whichever claim names it.
fn other_teams_volume(name: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "PersistentVolume", "metadata": { "name": name, "labels": { "team": "other" } },
        "spec": { "capacity": { "storage": "1Gi" }, "accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                  "persistentVolumeReclaimPolicy": "Retain", "hostPath": { "path": format!("/data/{name}") } } })
}

/// A claim template as a user writes it into a pod or a StatefulSet: one
/// naming `volume`, or one to be provisioned. (The provisioned one names a
/// class of its own: Kubernetes hands any Available volume to a pending
/// claim of its class, whoever asks; docs/security.md, "kept volumes".)
fn claim_spec(volume: Option<&str>) -> Value {
    let class = if volume.is_some() { "manual" } else { "standard" };
    let mut spec = json!({ "accessModes": ["ReadWriteOnce"], "storageClassName": class,
        "resources": { "requests": { "storage": "1Gi" } } });
    if let Some(volume) = volume {
        spec["volumeName"] = json!(volume);
    }
    spec
}

fn pod_with_ephemeral(name: &str, volume_name: &str, claim: Value) -> Value {
    let mut object = pod(
        name,
        json!({ "nodeSelector": { "berth.io/pool": "a" }, "containers": [container(json!({}))],
            "volumes": [{ "name": volume_name, "ephemeral": { "volumeClaimTemplate": { "spec": claim } } }] }),
    );
    object["spec"]["containers"][0]["volumeMounts"] = json!([{ "name": volume_name, "mountPath": "/data" }]);
    object
}

fn stateful_set(name: &str, claim: Value) -> Value {
    json!({ "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": { "name": name },
        "spec": { "serviceName": name, "replicas": 1, "selector": { "matchLabels": { "app": name } },
            "template": { "metadata": { "labels": { "app": name } },
                "spec": { "nodeSelector": { "berth.io/pool": "a" }, "containers": [{ "name": "main", "image": "python:3.12",
                    "volumeMounts": [{ "name": "data", "mountPath": "/data" }] }] } },
            "volumeClaimTemplates": [{ "metadata": { "name": "data" }, "spec": claim }] } })
}

/// Makes `object` in `namespace` as `client`, for real (once a RoleBinding
/// just made lets them: the API server's authorizer learns it a moment later).
async fn make(client: &kube::Client, namespace: &str, mut object: Value) {
    object["metadata"]["namespace"] = json!(namespace);
    let typed: DynamicObject = serde_json::from_value(object.clone()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match api(client, &object, namespace).create(&PostParams::default(), &typed).await {
            Ok(_) => return,
            Err(kube::Error::Api(status)) if status.code == 403 && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(other) => panic!("{other}"),
        }
    }
}

/// Waits (up to 30 s) until `namespace` holds the claim `name`.
async fn claim_appears(admin: &kube::Client, namespace: &str, name: &str) -> Value {
    let claims: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), namespace, &resource("v1", "PersistentVolumeClaim"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(claim) = claims.get_opt(name).await.unwrap() {
            return serde_json::to_value(claim).unwrap();
        }
        assert!(Instant::now() < deadline, "the controller made no claim {name} in {namespace} within 30 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The controller's own word that the API server refused its claim `name`,
/// naming one of `said` (when two policies refuse a claim, the API server
/// names whichever it evaluated first, and that order varies): a Warning event (the StatefulSet controller records one)
/// or its log (the ephemeral-volume controller only logs). Waits up to 30 s.
async fn controller_refused(stack: &Stack, admin: &kube::Client, namespace: &str, name: &str, said: &[&str]) {
    let events: Api<DynamicObject> = Api::namespaced_with(admin.clone(), namespace, &resource("v1", "Event"));
    let log = stack.dir.join("logs/kube-controller-manager.log");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let in_events = events.list(&ListParams::default()).await.unwrap().items.iter().any(|event| {
            let message = event.data["message"].as_str().unwrap_or_default();
            message.contains(name) && said.iter().any(|said| message.contains(said))
        });
        let in_log = std::fs::read_to_string(&log).unwrap_or_default().lines().any(|line| {
            (line.contains(&format!("\\\"{name}\\\"")) || line.contains(&format!("\"{name}\"")))
                && said.iter().any(|said| line.contains(said))
        });
        if in_events || in_log {
            return;
        }
        if Instant::now() >= deadline {
            let claims: Api<DynamicObject> =
                Api::namespaced_with(admin.clone(), namespace, &resource("v1", "PersistentVolumeClaim"));
            let made = claims.get_opt(name).await.unwrap().is_some();
            let said_of_it: Vec<String> = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter(|line| line.contains(name))
                .map(str::to_string)
                .collect();
            panic!("no refusal of the claim {name} ({said:?}) within 30 s; made: {made}; the controller said: {said_of_it:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A session of the test user's, set up as the worker would, settled, with
/// room for claims and pods of the user's own (`room_for_claims`).
async fn roomy_session(
    admin: &kube::Client,
    worker: &kube::Client,
    id: &str,
) -> (server::provisioner::manifests::Session, String) {
    let mine = session::session("team-v", id, MIG, &[("berth.io/pool", "a")]);
    set_up(worker, &mine, &cluster()).await;
    let ns = mine.namespace();
    settled(admin, &ns).await;
    room_for_claims(worker, &ns).await;
    (mine, ns)
}

/// Room in the session's quota for claims and pods of the user's own (it
/// otherwise holds exactly Berth's workspace): without it the quota, not
/// the policy, would refuse the attacks, and the legitimate forms too. Only Berth changes a
/// session's quota (berth-session-guardrails), so the worker makes it.
async fn room_for_claims(worker: &kube::Client, ns: &str) {
    let quotas: Api<DynamicObject> = Api::namespaced_with(worker.clone(), ns, &resource("v1", "ResourceQuota"));
    let room = json!({ "spec": { "hard": { "requests.storage": "1Ti", "requests.cpu": "16", "limits.cpu": "16",
        "requests.memory": "128Gi", "limits.memory": "128Gi" } } });
    quotas.patch("berth-session", &PatchParams::default(), &Patch::Merge(&room)).await.unwrap();
    // Admission counts against the quota's status, which the controller
    // manager brings up to the new spec a moment later.
    let deadline = Instant::now() + Duration::from_secs(30);
    while quotas.get("berth-session").await.unwrap().data["status"]["hard"]["requests.storage"] != "1Ti" {
        assert!(Instant::now() < deadline, "the quota's status did not follow its spec within 30 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn no_claim(admin: &kube::Client, namespace: &str, name: &str) {
    let claims: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), namespace, &resource("v1", "PersistentVolumeClaim"));
    assert!(claims.get_opt(name).await.unwrap().is_none(), "{namespace}/{name} should never have been made");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_a_controller_makes_for_a_session_user_are_judged_as_the_users() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let (_, ns) = roomy_session(&admin, &worker, "7f0e0d0c-0b0a-4908-8706-050403020100").await;
    ensure(&admin, vec![other_teams_volume("theirs-1"), other_teams_volume("theirs-2")]).await;
    let user = stack.client(As::User(session::USER)).await;

    // Through the ephemeral-volume controller: a claim naming their volume,
    // and one named like a person's kept home (`<pod>-<volume>` = home-<id>).
    make(&user, &ns, pod_with_ephemeral("grab", "data", claim_spec(Some("theirs-1")))).await;
    make(&user, &ns, pod_with_ephemeral("home", BOB, claim_spec(None))).await;
    make(&user, &ns, pod_with_ephemeral("mine", "scratch", claim_spec(None))).await;
    // Through the StatefulSet controller, the same.
    make(&user, &ns, stateful_set("grab", claim_spec(Some("theirs-2")))).await;
    make(&user, &ns, stateful_set("web", claim_spec(None))).await;

    // The legitimate forms: the user's own claims, provisioned (no volume named).
    let own = claim_appears(&admin, &ns, "mine-scratch").await;
    assert!(own["spec"]["volumeName"].as_str().unwrap_or_default().is_empty());
    claim_appears(&admin, &ns, "data-web-0").await;

    controller_refused(stack, &admin, &ns, "grab-data", &["may not name a volume"]).await;
    // Named like someone's kept home, and a claim only Berth makes in a session.
    let refusals = ["would be someone", "only Berth changes them"];
    controller_refused(stack, &admin, &ns, &format!("home-{BOB}"), &refusals).await;
    controller_refused(stack, &admin, &ns, "data-grab-0", &["may not name a volume"]).await;
    for name in ["grab-data".to_string(), format!("home-{BOB}"), "data-grab-0".to_string()] {
        no_claim(&admin, &ns, &name).await;
    }
    let volumes: Api<DynamicObject> = Api::all_with(admin.clone(), &resource("v1", "PersistentVolume"));
    for name in ["theirs-1", "theirs-2"] {
        let volume = volumes.get(name).await.unwrap();
        assert!(volume.data["spec"]["claimRef"].is_null(), "{name} was reserved for a session's claim");
    }

    // A pod named home in a namespace of the user's own: the claim it would
    // make is named like a kept home and refused there too.
    ensure(
        &admin,
        vec![
            json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "ada-own" } }),
            json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": { "name": "edit", "namespace": "ada-own" },
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit" },
                "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": session::USER }] }),
        ],
    )
    .await;
    let mut outside = pod_with_ephemeral("home", BOB, claim_spec(None));
    outside["spec"].as_object_mut().unwrap().remove("nodeSelector");
    make(&user, "ada-own", outside).await;
    controller_refused(stack, &admin, "ada-own", &format!("home-{BOB}"), &["named like a Berth home"]).await;
    no_claim(&admin, "ada-own", &format!("home-{BOB}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_claims_choose_no_volume_by_label_or_from_another_namespace() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let (_, ns) = roomy_session(&admin, &worker, "8f0e0d0c-0b0a-4908-8706-050403020100").await;
    let user = stack.client(As::User(session::USER)).await;
    let claim = |extra: Value| {
        let mut spec = claim_spec(None);
        merge(&mut spec, extra);
        json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": { "name": "c" }, "spec": spec })
    };
    in_force("berth-session-volumes", || {
        create(&user, &ns, claim(json!({ "selector": { "matchLabels": { "team": "other" } } })))
    })
    .await;
    assert_eq!(create(&user, &ns, claim(json!({}))).await, Ok(()), "a claim of the user's own");
    refused_with(
        "a claim choosing volumes by label",
        create(&user, &ns, claim(json!({ "selector": { "matchLabels": { "team": "other" } } }))).await,
        "may not choose volumes by label",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_owner_never_changes_once_set() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let mine = session::session("team-v", "9f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    set_up(&worker, &mine, &cluster()).await;
    let ns = mine.namespace();
    settled(&admin, &ns).await;
    let namespaces: Api<DynamicObject> = Api::all_with(worker.clone(), &resource("v1", "Namespace"));
    let dry = PatchParams { dry_run: true, ..Default::default() };
    let annotate = |key: &str, value: Option<&str>| {
        let body = json!({ "metadata": { "annotations": { key: value } } });
        let (namespaces, dry, ns) = (namespaces.clone(), dry.clone(), ns.clone());
        async move { outcome(namespaces.patch(&ns, &dry, &Patch::Merge(&body)).await) }
    };
    in_force("berth-worker-scope", || annotate("berth.io/owner", Some(BOB))).await;
    refused_with("another owner", annotate("berth.io/owner", Some(BOB)).await, "never changes once set");
    refused_with("no owner", annotate("berth.io/owner", None).await, "never changes once set");
    // The worker's other marks on its session still change (the window's end, for one).
    assert_eq!(annotate("berth.io/ends-at", Some("2026-11-29T12:00:00Z")).await, Ok(()));
    assert_eq!(annotate("berth.io/owner", Some(session::OWNER)).await, Ok(()), "the same owner, kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_kubeconfig_runs_nothing_and_reads_no_file_of_berths() {
    use app::model::{Cluster as ClusterRecord, ClusterAccess};
    use server::provisioner::cluster_clients::ClusterClients;
    let Some(stack) = stack() else { return };
    let admin = stack.client(As::Admin).await;
    let marker = std::env::temp_dir().join(format!("berth-exec-ran-{}", uuid::Uuid::new_v4().simple()));
    let port = stack.api_port();
    let token = std::fs::read_to_string(stack.kubeconfig(&As::Admin)).unwrap();
    let token =
        token.lines().find_map(|l| l.trim().strip_prefix("user: {token: \"")).map(|t| t.trim_end_matches("\"}"));
    let token = token.expect("the admin's token in its kubeconfig");
    let kubeconfig = |user: String| {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: m\ncontexts: [{{name: m, context: {{cluster: m, user: m}}}}]\n\
             clusters: [{{name: m, cluster: {{server: 'https://127.0.0.1:{port}', insecure-skip-tls-verify: true}}}}]\n\
             users: [{{name: m, user: {{{user}}}}}]\n"
        )
    };
    let exec = format!(
        "exec: {{apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh, \
         args: [-c, 'touch {} && echo {{}}']}}",
        marker.display()
    );
    let cases = [
        ("exec", kubeconfig(exec), "an exec plugin"),
        ("token-file", kubeconfig("tokenFile: /etc/hostname".into()), "tokenFile"),
        ("inline", kubeconfig(format!("token: {token}")), ""),
    ];
    ensure(&admin, vec![json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "hub-kubeconfigs" } })])
        .await;
    let secrets: Vec<Value> = cases
        .iter()
        .map(|(name, text, _)| {
            json!({ "apiVersion": "v1", "kind": "Secret",
                "metadata": { "name": name, "namespace": "hub-kubeconfigs" }, "stringData": { "kubeconfig": text } })
        })
        .collect();
    ensure(&admin, secrets).await;
    let clients = ClusterClients::new("hub", admin.clone()).kubeconfigs("hub-kubeconfigs", "hub-kubeconfigs");
    for (name, _, said) in cases {
        let member = ClusterRecord {
            id: uuid::Uuid::new_v4(),
            name: name.into(),
            access: ClusterAccess::Kubeconfig,
            kubeconfig_secret: Some(name.into()),
            switches: Default::default(),
            pools: vec![],
            created_at: chrono::Utc::now(),
        };
        let for_worker = clients.for_worker(&member).await;
        let for_portal = clients.for_portal(&member).await;
        if said.is_empty() {
            // The legitimate form: inline credentials reach the member.
            let client = for_worker.expect("an inline kubeconfig");
            let namespaces: Api<DynamicObject> =
                Api::namespaced_with(client, "berth", &resource("v1", "ServiceAccount"));
            namespaces.get("berth-worker").await.expect("the member answers");
            assert!(for_portal.is_ok());
            continue;
        }
        for outcome in [for_worker.map(|_| ()), for_portal.map(|_| ())] {
            let said_it = outcome.as_ref().is_err_and(|e| e.contains(said) && e.contains("only inline credentials"));
            assert!(said_it, "{name}: {outcome:?}");
        }
    }
    assert!(!marker.exists(), "the exec plugin ran in Berth's process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_controller_makes_carries_berths_marks_and_no_autoscaler_moves_berths_workspace() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let (mine, ns) = roomy_session(&admin, &worker, "af0e0d0c-0b0a-4908-8706-050403020100").await;
    let user = stack.client(As::User(session::USER)).await;
    let template = |labels: Value| {
        json!({ "metadata": { "labels": labels },
            "spec": { "nodeSelector": { "berth.io/pool": "a" }, "containers": [container(json!({}))] } })
    };
    let replica_set = |labels: Value| {
        let mut selector = labels.clone();
        selector.as_object_mut().unwrap().retain(|k, _| k == "app");
        json!({ "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": { "name": "decoy" },
            "spec": { "replicas": 1, "selector": { "matchLabels": selector }, "template": template(labels) } })
    };
    let forged =
        json!({ "app": "decoy", "app.kubernetes.io/managed-by": "berth", "berth.io/booking": mine.booking_id });
    in_force("berth-template-labels", || create(&user, &ns, replica_set(forged.clone()))).await;
    let said = "which is Berth's: only its worker sets it";
    refused_with(
        "a ReplicaSet whose pods would carry Berth's labels",
        create(&user, &ns, replica_set(forged.clone())).await,
        said,
    );
    let job = json!({ "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": "j" },
        "spec": { "template": { "metadata": { "annotations": { "berth.io/applied": "x" } },
            "spec": { "restartPolicy": "Never", "nodeSelector": { "berth.io/pool": "a" }, "containers": [container(json!({}))] } } } });
    refused_with("a Job whose pods would carry Berth's annotation", create(&user, &ns, job).await, said);
    let cron = json!({ "apiVersion": "batch/v1", "kind": "CronJob", "metadata": { "name": "c" },
        "spec": { "schedule": "0 * * * *", "jobTemplate": { "metadata": { "labels": { "app.kubernetes.io/managed-by": "berth" } },
            "spec": { "template": { "spec": { "restartPolicy": "Never", "nodeSelector": { "berth.io/pool": "a" },
            "containers": [container(json!({}))] } } } } } });
    refused_with("a CronJob whose Jobs would carry Berth's label", create(&user, &ns, cron).await, "which is Berth's");
    // Outside every session too: the worker's lists are cluster-wide.
    ensure(&admin, vec![json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "team-decoys" } })])
        .await;
    refused_with(
        "the same in a namespace of one's own",
        create(&admin, "team-decoys", replica_set(forged)).await,
        said,
    );
    // The legitimate form: a user's own ReplicaSet, labelled as they like.
    assert_eq!(create(&user, &ns, replica_set(json!({ "app": "decoy", "team": "v" }))).await, Ok(()));

    // An autoscaler of the user's acting on the worker's workspace: the
    // scale the controller writes for it is refused, as the user's would be.
    ensure(
        &admin,
        vec![json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "serve", "namespace": ns },
            "spec": { "replicas": 1, "selector": { "matchLabels": { "app": "serve" } }, "template": template(json!({ "app": "serve" })) } })],
    )
    .await;
    // The controller reads a scale and writes it back (update, its RBAC).
    let hpa = stack.client(As::User("system:serviceaccount:kube-system:horizontal-pod-autoscaler")).await;
    let scale = |name: &str| {
        let deployments: Api<DynamicObject> =
            Api::namespaced_with(hpa.clone(), &ns, &resource("apps/v1", "Deployment"));
        let name = name.to_string();
        async move {
            let mut scale: Value =
                serde_json::to_value(deployments.get_subresource("scale", &name).await.unwrap()).unwrap();
            scale["spec"]["replicas"] = json!(3);
            // Unconditional: the deployment controller writes the object meanwhile.
            scale["metadata"].as_object_mut().unwrap().remove("resourceVersion");
            let dry = PostParams { dry_run: true, ..Default::default() };
            outcome(deployments.replace_subresource("scale", &name, &dry, &scale).await)
        }
    };
    refused_with("the HPA controller scaling the workspace", scale("workspace").await, "is Berth's");
    assert_eq!(scale("serve").await, Ok(()), "the HPA controller scaling the user's own Deployment");
}
