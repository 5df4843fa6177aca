//! deploy/ on a real Kubernetes API server (v1.36): both overlays apply
//! with no error, every admission policy type-checks cleanly, and every
//! refusal docs/operations.md promises is attempted as the session's user
//! (impersonation) inside a session the worker's own account set up —
//! refused with the policy's message — while the legitimate form of each
//! action is admitted. Requests are dry runs: admission runs in full,
//! nothing is stored, so the cases do not depend on each other.

use crate::common;
use crate::policy::attack;
use crate::policy::session;

use attack::*;
use common::kube_stack::{stack, As};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{json, Value};
use server::provisioner::manifests::{self, Expose, Session};
use server::provisioner::retry::retrying;
use server::provisioner::snapshot::resource;
use session::USER;
use std::time::{Duration, Instant};

const MIG: &str = "nvidia.com/mig-1g.24gb";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_overlays_apply_without_error_and_every_policy_type_checks() {
    let Some(stack) = stack() else { return };
    // The harness applied the Kubernetes overlay; both again, as a server-side dry run.
    for overlay in ["deploy/overlays/kubernetes", "deploy/overlays/openshift"] {
        let applied =
            stack.kubectl(&["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-k", overlay]);
        let stderr = String::from_utf8_lossy(&applied.stderr);
        assert!(applied.status.success(), "{overlay}: {stderr}");
        assert!(!stderr.contains("rror"), "{overlay}: {stderr}");
    }
    let admin = stack.client(As::Admin).await;
    let policies: Api<DynamicObject> =
        Api::all_with(admin, &resource("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list = policies.list(&Default::default()).await.unwrap();
        let names: Vec<String> = list.items.iter().filter_map(|p| p.metadata.name.clone()).collect();
        let checked = list.items.iter().all(|p| {
            p.data["status"]["observedGeneration"].as_i64() == p.metadata.generation
                && !p.data["status"]["typeChecking"].is_null()
        });
        if checked {
            assert_eq!(names.len(), 28, "{names:?}");
            for policy in &list.items {
                let warnings = &policy.data["status"]["typeChecking"]["expressionWarnings"];
                assert!(warnings.is_null(), "{:?}: {warnings:#}", policy.metadata.name);
            }
            return;
        }
        assert!(Instant::now() < deadline, "the API server did not type-check the policies");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_user_is_refused_every_escape_the_readme_lists_and_admitted_to_real_work() {
    let Some(stack) = stack() else { return };
    let worker = stack.client(As::Worker).await;
    let mut mine = session::session("team-p", "0f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    let gpu_taint = app::model::Toleration {
        key: Some("nvidia.com/gpu".into()),
        operator: Some("Exists".into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    };
    mine.placement.tolerations = vec![gpu_taint];
    let theirs = Session {
        user: "bob@example.test".into(),
        ..session::session("team-q", "aaaabbbb-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")])
    };
    let mut openshift = cluster();
    openshift.expose = Expose::Route;
    set_up(&worker, &mine, &openshift).await;
    set_up(&worker, &theirs, &cluster()).await;
    let ns = mine.namespace();
    settled(&stack.client(As::Admin).await, &ns).await;
    let own = manifests::host(&mine, &cluster());
    let their_host = manifests::host(&theirs, &cluster());
    let user = stack.client(As::User(USER)).await;
    let selector = json!({ "berth.io/pool": "a" });
    let mig = json!({ "limits": { MIG: "1", "cpu": "1", "memory": "1Gi" } });

    let admitted = [
        (
            "the workspace pod",
            pod(
                "ws",
                serde_json::to_value(manifests::deployment(&mine, &cluster())).unwrap()["spec"]["template"]["spec"]
                    .clone(),
            ),
        ),
        (
            "a pod with the booked kind on the pool's nodes",
            pod("p", json!({ "nodeSelector": selector, "containers": [container(mig.clone())] })),
        ),
        (
            "a pod with the pool's own toleration",
            pod(
                "p",
                json!({ "nodeSelector": selector, "containers": [container(mig.clone())],
                "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }] }),
            ),
        ),
        (
            "a Deployment asking for the booked kind",
            json!({ "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "serve" }, "spec": { "selector": { "matchLabels": { "app": "serve" } },
            "template": { "metadata": { "labels": { "app": "serve" } },
            "spec": { "nodeSelector": selector, "containers": [container(mig.clone())] } } } }),
        ),
        (
            "a Job",
            json!({ "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": "train" },
            "spec": { "template": { "spec": { "restartPolicy": "Never", "nodeSelector": selector,
            "containers": [container(json!({}))] } } } }),
        ),
        ("a Service", service(json!({ "type": "ClusterIP" }))),
        (
            "a pod with ordinary environment and 30 s of grace",
            pod(
                "p",
                json!({ "nodeSelector": selector,
            "terminationGracePeriodSeconds": 30, "containers": [{ "name": "main", "image": "python:3.12",
            "env": [{ "name": "HF_HOME", "value": "/models" }] }] }),
            ),
        ),
        (
            "an Ingress on the session's host",
            ingress("i", Some(&own), json!({ "spec": { "tls": [{ "hosts": [own] }] } })),
        ),
        ("an Ingress on a name under it", ingress("i", Some(&format!("api.{own}")), json!({}))),
        ("a Route on the session's host", route(Some(&own), "None")),
        (
            "an Ingress with an allowed annotation",
            ingress(
                "i",
                Some(&own),
                json!({ "metadata": { "annotations": { "nginx.ingress.kubernetes.io/proxy-body-size": "1g",
                "kubectl.kubernetes.io/last-applied-configuration": "{}" } } }),
            ),
        ),
        (
            "a Route with an allowed annotation",
            annotated(route(Some(&own), "None"), "haproxy.router.openshift.io/timeout", "5m"),
        ),
        (
            "a Secret of the user's",
            json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "hf-token" }, "stringData": { "t": "x" } }),
        ),
    ];
    for (case, object) in admitted {
        assert_eq!(create(&user, &ns, object).await, Ok(()), "should be admitted: {case}");
    }

    let other_gpu = json!({ "limits": { "nvidia.com/gpu": "1" } });
    let refused = [
        ("another session's host", ingress("i", Some(&their_host), json!({})), "or a name under it"),
        ("a rule without a host", ingress("i", None, json!({})), "needs a host"),
        ("a look-alike suffix", ingress("i", Some(&format!("x{own}")), json!({})), "or a name under it"),
        (
            "a default backend",
            ingress(
                "i",
                Some(&own),
                json!({ "spec": { "defaultBackend":
            { "service": { "name": "evil", "port": { "number": 80 } } } } }),
            ),
            "default backend",
        ),
        (
            "TLS for another host",
            ingress("i", Some(&own), json!({ "spec": { "tls": [{ "hosts": [their_host] }] } })),
            "TLS hosts",
        ),
        (
            "a configuration snippet",
            ingress(
                "i",
                Some(&own),
                json!({ "metadata": { "annotations":
            { "nginx.ingress.kubernetes.io/server-snippet": "location / {}" } } }),
            ),
            "snippet",
        ),
        (
            "an alias claiming another name under the wildcard certificate",
            annotated(
                ingress("i", Some(&own), json!({})),
                "nginx.ingress.kubernetes.io/server-alias",
                "login.berth.local",
            ),
            "server-alias is not allowed",
        ),
        (
            "the ingress controller as a forwarder into the cluster",
            annotated(
                ingress("i", Some(&own), json!({})),
                "nginx.ingress.kubernetes.io/mirror-target",
                "http://10.0.0.1/",
            ),
            "mirror-target is not allowed",
        ),
        (
            "a Route annotation the session does not need",
            annotated(route(Some(&own), "None"), "haproxy.router.openshift.io/rewrite-target", "/admin"),
            "rewrite-target is not allowed",
        ),
        ("a Route for another host", route(Some(&their_host), "None"), "spec.host"),
        ("a Route without a host", route(None, "None"), "spec.host"),
        ("a Route with a subdomain wildcard", route(Some(&own), "Subdomain"), "wildcard policy"),
        (
            "an ExternalName Service",
            service(json!({ "type": "ExternalName", "externalName": "db.corp" })),
            "ExternalName",
        ),
        ("a Service claiming externalIPs", service(json!({ "externalIPs": ["10.9.9.9"] })), "externalIPs"),
        (
            "a pod without the pool's node selector",
            pod("p", json!({ "containers": [container(mig.clone())] })),
            "node selector",
        ),
        (
            "a toleration of every taint (another pool's GPU nodes, the control plane)",
            pod(
                "p",
                json!({ "nodeSelector": selector, "tolerations": [{ "operator": "Exists" }],
                "containers": [container(json!({}))] }),
            ),
            "only their pool's tolerations",
        ),
        (
            "a toleration the pool does not carry",
            pod(
                "p",
                json!({ "nodeSelector": selector, "containers": [container(json!({}))],
                "tolerations": [{ "key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule" }] }),
            ),
            "only their pool's tolerations",
        ),
        (
            "a pod pinned to a node",
            pod(
                "p",
                json!({ "nodeSelector": selector, "nodeName": "gpu-b-1",
            "containers": [container(json!({}))] }),
            ),
            "spec.nodeName",
        ),
        (
            "another GPU kind",
            pod("p", json!({ "nodeSelector": selector, "containers": [container(other_gpu.clone())] })),
            "may not ask for other GPUs",
        ),
        (
            "another GPU kind in an init container",
            pod(
                "p",
                json!({ "nodeSelector": selector,
            "initContainers": [{ "name": "warm", "image": "python:3.12", "resources": other_gpu }], "containers": [container(json!({}))] }),
            ),
            "may not ask for other GPUs",
        ),
        (
            "a network policy",
            json!({ "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": { "name": "allow-all" }, "spec": { "podSelector": {}, "egress": [{}] } }),
            "forbidden",
        ),
        (
            "a second quota",
            json!({ "apiVersion": "v1", "kind": "ResourceQuota", "metadata": { "name": "more" },
            "spec": { "hard": { "pods": "100" } } }),
            "forbidden",
        ),
        (
            "a role binding",
            json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "me" }, "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin" },
            "subjects": [{ "kind": "User", "name": USER }] }),
            "forbidden",
        ),
        (
            "storage beyond what was booked (home and the model cache fill the quota)",
            json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": { "name": "scratch" },
            "spec": { "accessModes": ["ReadWriteOnce"], "resources": { "requests": { "storage": "1Gi" } } } }),
            "exceeded quota: berth-session",
        ),
        (
            "every GPU of the node by environment, with no GPU request",
            pod(
                "p",
                json!({ "nodeSelector": selector, "containers": [{ "name": "main", "image": "python:3.12",
                "env": [{ "name": "NVIDIA_VISIBLE_DEVICES", "value": "all" }] }] }),
            ),
            "may not choose GPUs by environment",
        ),
        (
            "a GPU chosen by environment in an init container",
            pod(
                "p",
                json!({ "nodeSelector": selector, "containers": [container(json!({}))],
                "initContainers": [{ "name": "warm", "image": "python:3.12",
                "env": [{ "name": "CUDA_VISIBLE_DEVICES", "value": "3" }] }] }),
            ),
            "may not choose GPUs by environment",
        ),
        (
            "a year of termination grace (the GPU held after the window)",
            pod(
                "p",
                json!({ "nodeSelector": selector, "terminationGracePeriodSeconds": 31536000,
                "containers": [container(json!({}))] }),
            ),
            "at most 30 s of termination grace",
        ),
        (
            "a claim of another team's pre-provisioned volume",
            json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": { "name": "theirs" },
                "spec": { "accessModes": ["ReadWriteOnce"], "volumeName": "team-b-data",
                "resources": { "requests": { "storage": "1Gi" } } } }),
            "may not name a volume",
        ),
        (
            "a claim named like the worker's",
            json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": { "name": "berth-model-cache" }, "spec": { "accessModes": ["ReadWriteOnce"],
            "resources": { "requests": { "storage": "1Gi" } } } }),
            "guard rails",
        ),
    ];
    for (case, object, said) in refused {
        match create(&user, &ns, object).await {
            Ok(()) => panic!("should be refused: {case}"),
            Err(message) => assert!(message.contains(said), "{case}: expected `{said}` in {message}"),
        }
    }

    // Changing or deleting what the worker set up.
    let dry_delete = DeleteParams { dry_run: true, ..DeleteParams::default() };
    let dry_patch = PatchParams { dry_run: true, ..PatchParams::default() };
    let secrets: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "Secret"));
    let token = json!({ "stringData": { "token": "chosen-by-the-user" } });
    let said = outcome(secrets.patch(manifests::ACCESS_SECRET, &dry_patch, &Patch::Merge(&token)).await);
    assert!(said.unwrap_err().contains("guard rails"), "the access token is not the user's to replace");
    let claims: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "PersistentVolumeClaim"));
    let cache = manifests::window::claim(&mine, app::model::Kept::Cache).0;
    let said = outcome(claims.delete(&cache, &dry_delete).await);
    assert!(said.unwrap_err().contains("guard rails"), "the model cache's room is not the user's");
    let policies: Api<DynamicObject> =
        Api::namespaced_with(user.clone(), &ns, &resource("networking.k8s.io/v1", "NetworkPolicy"));
    assert!(outcome(policies.delete("berth-egress", &dry_delete).await).unwrap_err().contains("forbidden"));
    let quotas: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "ResourceQuota"));
    let more = json!({ "spec": { "hard": { "requests.nvidia.com/mig-1g.24gb": "100" } } });
    assert!(outcome(quotas.patch("berth-session", &dry_patch, &Patch::Merge(&more)).await)
        .unwrap_err()
        .contains("forbidden"));
    let namespaces: Api<DynamicObject> = Api::all_with(user.clone(), &resource("v1", "Namespace"));
    let annotate = json!({ "metadata": { "annotations": { "berth.io/host": their_host } } });
    assert!(outcome(namespaces.patch(&ns, &dry_patch, &Patch::Merge(&annotate)).await)
        .unwrap_err()
        .contains("forbidden"));
    // Berth's own objects (berth-session-objects): not changed, scaled or
    // deleted by the user, who restarts the workspace by deleting its pod.
    let deployments: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("apps/v1", "Deployment"));
    let image =
        json!({ "spec": { "template": { "spec": { "containers": [{ "name": "workspace", "image": "mine" }] } } } });
    let said = outcome(deployments.patch("workspace", &dry_patch, &Patch::Strategic(image)).await).unwrap_err();
    assert!(said.contains("the Deployment workspace is Berth's: only its worker changes it"), "{said}");
    let scale = json!({ "spec": { "replicas": 0 } });
    let said = outcome(deployments.patch_subresource("scale", "workspace", &dry_patch, &Patch::Merge(&scale)).await);
    assert!(said.unwrap_err().contains("is Berth's"), "scaling the workspace");
    assert!(outcome(deployments.delete("workspace", &dry_delete).await).unwrap_err().contains("is Berth's"));
    let config_maps: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "ConfigMap"));
    assert!(outcome(config_maps.delete("berth-proxy", &dry_delete).await).unwrap_err().contains("is Berth's"));
    let services: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "Service"));
    let port = json!({ "spec": { "ports": [{ "name": "http", "port": 80, "targetPort": 22 }] } });
    let said = outcome(services.patch("workspace", &dry_patch, &Patch::Merge(&port)).await);
    assert!(said.unwrap_err().contains("the Service workspace is Berth's"));
    // (This session was set up as on OpenShift: published by a Route.)
    let routes: Api<DynamicObject> =
        Api::namespaced_with(user.clone(), &ns, &resource("route.openshift.io/v1", "Route"));
    assert!(outcome(routes.delete("workspace", &dry_delete).await)
        .unwrap_err()
        .contains("the Route workspace is Berth's"));
    let own = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "mine", "namespace": ns },
        "data": { "a": "1" } });
    config_maps.create(&PostParams::default(), &serde_json::from_value(own).unwrap()).await.unwrap();
    let changed = json!({ "data": { "a": "2" } });
    assert_eq!(outcome(config_maps.patch("mine", &dry_patch, &Patch::Merge(&changed)).await), Ok(()));
    assert_eq!(outcome(config_maps.delete("mine", &dry_delete).await), Ok(()));
    // The workspace's pod, as the controller manager made it from the worker's template.
    let pods: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "Pod"));
    let of_workspace = kube::api::ListParams::default().labels("app.kubernetes.io/name=workspace");
    let deadline = Instant::now() + Duration::from_secs(30);
    let workspace_pod = loop {
        if let Some(found) = pods.list(&of_workspace).await.unwrap().items.pop() {
            break found.metadata.name.unwrap();
        }
        assert!(Instant::now() < deadline, "the controller manager made no workspace pod");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(outcome(pods.delete(&workspace_pod, &dry_delete).await), Ok(()), "a restart by deleting the pod");

    // Nothing at all in another session.
    assert!(create(&user, &theirs.namespace(), service(json!({}))).await.unwrap_err().contains("forbidden"));
    // The user's own things are theirs to change.
    let user_secret = json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "mine", "namespace": ns },
        "stringData": { "t": "x" } });
    secrets.create(&PostParams::default(), &serde_json::from_value(user_secret).unwrap()).await.unwrap();
    assert_eq!(outcome(secrets.patch("mine", &dry_patch, &Patch::Merge(&token)).await), Ok(()));
    assert_eq!(outcome(secrets.delete("mine", &dry_delete).await), Ok(()));

    // An ephemeral container (`kubectl debug`) is added through its own
    // subresource; the session user has no right to it, so this is tried by
    // the admin: the policy holds for anyone.
    let admin = stack.client(As::Admin).await;
    let pods: Api<DynamicObject> = Api::namespaced_with(admin.clone(), &ns, &resource("v1", "Pod"));
    let target = pod("debug-me", json!({ "nodeSelector": selector, "containers": [container(json!({}))] }));
    pods.create(&PostParams::default(), &serde_json::from_value(target).unwrap()).await.unwrap();
    let debug = |env: Value| json!({ "spec": { "ephemeralContainers": [{ "name": "debug", "image": "busybox", "env": env }] } });
    let added = |patch: Value| {
        let pods = pods.clone();
        let params = dry_patch.clone();
        async move {
            outcome(pods.patch_subresource("ephemeralcontainers", "debug-me", &params, &Patch::Strategic(patch)).await)
        }
    };
    let refused = added(debug(json!([{ "name": "NVIDIA_VISIBLE_DEVICES", "value": "all" }]))).await;
    assert!(refused.unwrap_err().contains("may not choose GPUs by environment"));
    assert_eq!(added(debug(json!([{ "name": "TERM", "value": "xterm" }]))).await, Ok(()), "a plain debug container");

    // The worker's account itself stays inside session namespaces.
    let outside = create(&worker, "default", service(json!({}))).await;
    assert!(outside.unwrap_err().contains("only inside session namespaces"));
}

/// Objects a tenant could pile up, Berth's labels on the tenant's objects,
/// and what the worker's account may still do (issue 33, items 3 and 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_holds_bounded_objects_berths_labels_are_the_workers_and_the_worker_is_no_cluster_admin() {
    let Some(stack) = stack() else { return };
    let worker = stack.client(As::Worker).await;
    let admin = stack.client(As::Admin).await;
    let mine = session::session("team-r", "0f0e0d0c-1b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "r")]);
    set_up(&worker, &mine, &cluster()).await;
    let ns = mine.namespace();
    settled(&admin, &ns).await;
    let user = stack.client(As::User(USER)).await;
    let deployment = |name: &str, labels: Value| {
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": name, "labels": labels },
            "spec": { "replicas": 0, "selector": { "matchLabels": { "app": name } },
            "template": { "metadata": { "labels": { "app": name } },
            "spec": { "nodeSelector": { "berth.io/pool": "r" }, "containers": [container(json!({}))] } } } })
    };

    // Berth's labels and annotations: the worker's alone.
    for (case, labels, said) in [
        (
            "Berth's managed-by label",
            json!({ "app.kubernetes.io/managed-by": "berth" }),
            "the label app.kubernetes.io/managed-by",
        ),
        (
            "a berth.io label",
            json!({ "berth.io/booking": "0f0e0d0c-1b0a-4908-8706-050403020100" }),
            "the label berth.io/booking",
        ),
    ] {
        let refused = create(&user, &ns, deployment("decoy", labels)).await;
        assert!(refused.as_ref().unwrap_err().contains(said), "{case}: {refused:?}");
    }
    let mut annotated = deployment("decoy", json!({}));
    annotated["metadata"]["annotations"] = json!({ "berth.io/booking-id": "x" });
    assert!(create(&user, &ns, annotated).await.unwrap_err().contains("the annotation berth.io/booking-id"));
    assert_eq!(create(&user, &ns, deployment("ok", json!({ "app.kubernetes.io/managed-by": "helm" }))).await, Ok(()));
    // An object carrying them is the worker's: the workspace's Ingress (this session's on plain Kubernetes).
    let ingresses: Api<DynamicObject> =
        Api::namespaced_with(user.clone(), &ns, &resource("networking.k8s.io/v1", "Ingress"));
    let dry_delete = DeleteParams { dry_run: true, ..DeleteParams::default() };
    let said = outcome(ingresses.delete("workspace", &dry_delete).await).unwrap_err();
    assert!(said.contains("the Ingress workspace is Berth's"), "{said}");
    // A namespace posing as a session is the worker's to make, not an admin's.
    let posing = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "posing",
        "labels": { "berth.io/booking": "x", "pod-security.kubernetes.io/enforce": "baseline" } } });
    assert!(create(&admin, "", posing).await.unwrap_err().contains("the label berth.io/booking"));

    // Object counts: ten Deployments per booked unit, the workspace's
    // among them, then the quota says no.
    let deployments: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("apps/v1", "Deployment"));
    let hard = stack.kubectl(&["get", "resourcequota", "berth-session", "-n", &ns, "-o", "jsonpath={.spec.hard}"]);
    let hard: Value = serde_json::from_slice(&hard.stdout).unwrap();
    assert_eq!(hard["count/deployments.apps"], "10", "{hard}");
    for i in 1..10 {
        let object: DynamicObject = serde_json::from_value(deployment(&format!("d{i}"), json!({}))).unwrap();
        let params = PostParams::default();
        retrying(5, Duration::from_millis(200), || deployments.create(&params, &object))
            .await
            .unwrap_or_else(|e| panic!("deployment {i} of 9 beside the workspace: {e}"));
    }
    // The quota controller recounts from its cache, which can lag the
    // creates above and write a count short by one for a moment (CI saw an
    // eleventh admitted so). A person's next create meets the settled count;
    // the test waits for it, seen twice.
    let used = || {
        let out = stack.kubectl(&["get", "resourcequota", "berth-session", "-n", &ns, "-o", "jsonpath={.status.used}"]);
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|u| u["count/deployments.apps"].as_str().map(String::from))
    };
    let settled = Instant::now() + Duration::from_secs(30);
    while !(used().as_deref() == Some("10") && {
        tokio::time::sleep(Duration::from_millis(500)).await;
        used().as_deref() == Some("10")
    }) {
        assert!(Instant::now() < settled, "the quota never counted the ten Deployments: {:?}", used());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let eleventh: DynamicObject = serde_json::from_value(deployment("d10", json!({}))).unwrap();
    let refused = outcome(deployments.create(&PostParams::default(), &eleventh).await).unwrap_err();
    assert!(
        refused.contains("exceeded quota: berth-session") && refused.contains("count/deployments.apps"),
        "{refused}"
    );

    // The worker's account: no Secret of the cluster but the access Secret
    // by name; no namespace without Pod Security; nothing privileged in `berth`.
    let secrets: Api<DynamicObject> = Api::all_with(worker.clone(), &resource("v1", "Secret"));
    assert_eq!(forbidden(secrets.list(&Default::default()).await), 403, "listing every Secret");
    let in_session: Api<DynamicObject> = Api::namespaced_with(worker.clone(), &ns, &resource("v1", "Secret"));
    assert_eq!(forbidden(in_session.list(&Default::default()).await), 403, "listing a session's Secrets");
    assert!(in_session.get(manifests::ACCESS_SECRET).await.is_ok(), "its own access Secret, by name");
    let user_secret =
        json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "hf-token" }, "stringData": { "t": "x" } });
    let theirs: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "Secret"));
    theirs.create(&PostParams::default(), &serde_json::from_value(user_secret).unwrap()).await.unwrap();
    assert_eq!(forbidden(in_session.get("hf-token").await), 403, "the user's own Secret");
    let unguarded = json!({ "apiVersion": "v1", "kind": "Namespace",
        "metadata": { "name": "berth-team-r-unguarded", "labels": { "berth.io/booking": "x" } } });
    assert!(create(&worker, "", unguarded).await.unwrap_err().contains("must enforce Pod Security"));
    let privileged = pod(
        "root",
        json!({ "containers": [{ "name": "c", "image": "busybox",
        "securityContext": { "privileged": true } }] }),
    );
    let refused = create(&admin, "berth", privileged).await.unwrap_err();
    assert!(refused.contains("violates PodSecurity \"restricted:latest\""), "{refused}");
}

fn forbidden<T>(outcome: Result<T, kube::Error>) -> u16 {
    match outcome {
        Err(kube::Error::Api(status)) => status.code,
        Ok(_) => 200,
        Err(other) => panic!("no answer: {other}"),
    }
}
