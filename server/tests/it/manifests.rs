//! Golden tests of every object the worker applies for a session, and a
//! schema check of each (and of every file in `deploy/`) with
//! `kubernetes-validate --strict` for Kubernetes 1.30.

use crate::common;

use serde_json::{json, Value};
use server::provisioner::manifests::{self, Cluster, Expose, ImageCache, KindGrant, Proxy, Session};

fn session() -> Session {
    Session {
        booking_id: "0f0e0d0c-0b0a-4908-8706-050403020100".parse().unwrap(),
        pool_id: "861c3a7c-e77b-4766-9d2f-5901933eeed4".parse().unwrap(),
        tenant: "team-a".into(),
        user: "ada@example.test".into(),
        co_owners: vec![],
        quantity: 2,
        interactive: true,
        image: "quay.io/jupyter/pytorch-notebook:cuda12-latest".into(),
        kind: KindGrant {
            kind: "nvidia.com/mig-1g.24gb".into(),
            replicas_per_unit: 2,
            cpu_millis_per_unit: 4000,
            memory_mib_per_unit: 32768,
            storage_gib_per_unit: 50,
            lend_idle: false,
        },
        other_kinds: vec!["nvidia.com/gpu".into(), "nvidia.com/mig-3g.48gb".into()],
        placement: app::model::Placement {
            node_selector: [
                ("nvidia.com/gpu.product".to_string(), "NVIDIA-H100-NVL".to_string()),
                ("berth.io/pool".to_string(), "lab".to_string()),
            ]
            .into(),
            tolerations: vec![app::model::Toleration {
                key: Some("nvidia.com/gpu".into()),
                operator: Some("Exists".into()),
                effect: Some("NoSchedule".into()),
                ..Default::default()
            }],
            ..Default::default()
        },
        window: manifests::Window {
            owner_id: "00000000-0000-4000-8000-0000000000a1".parse().unwrap(),
            pool: "lab-h100".into(),
            ends_at: "2026-11-28T12:00:00Z".parse().unwrap(),
            home: manifests::Volume::New { gib: 50 },
            cache: manifests::Volume::New { gib: 200 },
            kept_until: manifests::KeptUntil {
                home: "2026-12-28T12:00:00Z".parse().unwrap(),
                cache: Some("2026-12-14T12:00:00Z".parse().unwrap()),
                team_cache: false,
            },
            ending_soon: None,
            continues: None,
        },
    }
}

fn cluster() -> Cluster {
    Cluster {
        ingress_namespace: "ingress-nginx".into(),
        domain: "gpu.example.org".into(),
        ingress_class: Some("nginx".into()),
        storage_class: Some("fast".into()),
        proxy: Some(Proxy {
            http: "http://proxy.corp:3128".into(),
            https: "http://proxy.corp:3128".into(),
            no_proxy: ".cluster.local,.svc,10.0.0.0/8".into(),
            cidr: "10.20.0.5/32".into(),
            port: 3128,
        }),
        model_cache_gib: 200,
        expose: Expose::Ingress,
        image_cache: None,
        berth_namespace: "berth".into(),
        deny_resources: vec!["nvidia.com/gpu".into(), "amd.com/gpu".into(), "nvidia.com/gpu.shared".into()],
        gate_image: "registry.example.org/platform/berth:0.1.0".into(),
        kueue: false,
        scale_ahead: None,
    }
}

const VLLM: &str = "vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn image_cache() -> ImageCache {
    ImageCache {
        images: vec![VLLM.into()],
        registries: vec!["quay.io/jupyter".into(), "docker.io/vllm".into()],
        node_selector: [("nvidia.com/gpu.present".to_string(), "true".to_string())].into(),
        pause_image: "registry.k8s.io/pause:3.10".into(),
    }
}

const NS: &str = "berth-team-a-0f0e0d0c";

fn labels() -> Value {
    json!({
        "app.kubernetes.io/managed-by": "berth",
        "berth.io/booking": "0f0e0d0c-0b0a-4908-8706-050403020100",
        "berth.io/tenant": "team-a",
    })
}

fn meta(name: &str) -> Value {
    json!({ "name": name, "namespace": NS, "labels": labels() })
}

fn to_value<T: serde::Serialize>(object: T) -> Value {
    serde_json::to_value(object).unwrap()
}

#[test]
fn namespace_is_labelled_annotated_with_host_kind_and_placement_and_under_pod_security() {
    let mut expected_labels = labels();
    for (key, value) in [
        ("enforce", "baseline"),
        ("enforce-version", "latest"),
        ("warn", "restricted"),
        ("warn-version", "latest"),
        ("audit", "restricted"),
        ("audit-version", "latest"),
    ] {
        expected_labels[format!("pod-security.kubernetes.io/{key}")] = json!(value);
    }
    assert_eq!(
        to_value(manifests::namespace(&session(), &cluster())),
        json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {
                "name": NS, "labels": expected_labels,
                "annotations": {
                    "berth.io/booking-id": "0f0e0d0c-0b0a-4908-8706-050403020100",
                    "berth.io/host": "berth-team-a-0f0e0d0c.gpu.example.org",
                    "berth.io/gpu-kind": "nvidia.com/mig-1g.24gb",
                    "berth.io/node-selector.0": "berth.io/pool=lab",
                    "berth.io/node-selector.1": "nvidia.com/gpu.product=NVIDIA-H100-NVL",
                    "berth.io/toleration.0": "nvidia.com/gpu|Exists||NoSchedule",
                    // The only home claim the namespace may hold is this person's.
                    "berth.io/owner": "00000000-0000-4000-8000-0000000000a1",
                    "openshift.io/node-selector": "berth.io/pool=lab,nvidia.com/gpu.product=NVIDIA-H100-NVL",
                    "scheduler.alpha.kubernetes.io/node-selector": "berth.io/pool=lab,nvidia.com/gpu.product=NVIDIA-H100-NVL",
                },
            },
        })
    );
    let mut anywhere = session();
    anywhere.placement = Default::default();
    let annotations = to_value(manifests::namespace(&anywhere, &cluster()))["metadata"]["annotations"].clone();
    assert_eq!(
        annotations.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["berth.io/booking-id", "berth.io/gpu-kind", "berth.io/host", "berth.io/owner"],
        "without a selector, OpenShift's cluster default stays in force"
    );
}

#[test]
fn quota_grants_the_booked_units_times_replicas_and_zero_of_every_other_kind_and_denied_resource() {
    assert_eq!(
        to_value(manifests::resource_quota(&session(), &cluster())),
        json!({
            "apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta("berth-session"),
            "spec": { "hard": {
                "requests.nvidia.com/mig-1g.24gb": "4",
                "requests.nvidia.com/gpu": "0", "requests.nvidia.com/mig-3g.48gb": "0",
                "requests.amd.com/gpu": "0", "requests.nvidia.com/gpu.shared": "0",
                "requests.cpu": "8", "limits.cpu": "8",
                "requests.memory": "64Gi", "limits.memory": "64Gi",
                "requests.ephemeral-storage": "100Gi", "limits.ephemeral-storage": "100Gi",
                "requests.storage": "250Gi", // home 50 + model cache 200
                "pods": "20", "services": "5", "services.loadbalancers": "0", "services.nodeports": "0",
                "persistentvolumeclaims": "4", "secrets": "20", "configmaps": "20", "replicationcontrollers": "0",
                "count/ingresses.networking.k8s.io": "5", "count/routes.route.openshift.io": "5",
                // Workload objects: per booked unit (2 here).
                "count/deployments.apps": "20", "count/replicasets.apps": "100", "count/statefulsets.apps": "10",
                "count/jobs.batch": "100", "count/cronjobs.batch": "10",
                "count/horizontalpodautoscalers.autoscaling": "10", "count/serviceaccounts": "20",
                "count/endpoints": "20", "count/endpointslices.discovery.k8s.io": "40",
                "count/poddisruptionbudgets.policy": "10",
            } },
        })
    );
    let mut whole = session();
    whole.kind.kind = "nvidia.com/gpu".into();
    whole.other_kinds = vec!["nvidia.com/mig-1g.24gb".into()];
    let hard = to_value(manifests::resource_quota(&whole, &cluster()))["spec"]["hard"].clone();
    assert_eq!(hard["requests.nvidia.com/gpu"], "4", "the booked kind is never zeroed, even when denied by default");
    assert_eq!(hard["requests.nvidia.com/mig-1g.24gb"], "0");
}

#[test]
fn with_kueue_the_booking_is_a_cluster_queue_of_its_own_holding_what_the_quota_holds() {
    use manifests::kueue;
    let session = session();
    let (flavor, queue, local) =
        (kueue::session_flavor(&session), kueue::cluster_queue(&session), kueue::local_queue(&session));
    assert_eq!(
        flavor,
        json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": { "name": "berth-861c3a7c-mig-1g.24gb", "labels": { "app.kubernetes.io/managed-by": "berth" } },
            "spec": {
                "nodeLabels": { "berth.io/pool": "lab", "nvidia.com/gpu.product": "NVIDIA-H100-NVL" },
                "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
            },
        })
    );
    let hard = to_value(manifests::resource_quota(&session, &cluster()))["spec"]["hard"].clone();
    assert_eq!(
        queue,
        json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": { "name": "berth-team-a-0f0e0d0c", "labels": labels() },
            "spec": {
                "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": "berth-team-a-0f0e0d0c" } },
                "cohortName": "berth-pool-861c3a7c",
                "resourceGroups": [{
                    "coveredResources": ["nvidia.com/mig-1g.24gb", "cpu", "memory", "ephemeral-storage"],
                    "flavors": [{ "name": "berth-861c3a7c-mig-1g.24gb", "resources": [
                        // The quota's numbers: 2 units × 2 time-slice replicas, and its CPU and memory;
                        // lending none of it (unset, Kueue would lend it all to the cohort).
                        { "name": "nvidia.com/mig-1g.24gb", "nominalQuota": hard["requests.nvidia.com/mig-1g.24gb"], "borrowingLimit": "0", "lendingLimit": "0" },
                        { "name": "cpu", "nominalQuota": hard["requests.cpu"], "borrowingLimit": "0", "lendingLimit": "0" },
                        { "name": "memory", "nominalQuota": hard["requests.memory"], "borrowingLimit": "0", "lendingLimit": "0" },
                        { "name": "ephemeral-storage", "nominalQuota": hard["requests.ephemeral-storage"], "borrowingLimit": "0", "lendingLimit": "0" },
                    ] }],
                }],
                "preemption": { "reclaimWithinCohort": "Any", "withinClusterQueue": "Never" },
                "stopPolicy": "None",
            },
        })
    );
    assert_eq!(
        local["metadata"],
        json!({ "name": "session", "namespace": "berth-team-a-0f0e0d0c", "labels": labels() })
    );
    assert_eq!(local["spec"], json!({ "clusterQueue": "berth-team-a-0f0e0d0c" }));
    // Only with --kueue, and before anyone is let in (the user's binding).
    let kinds = |cluster: &Cluster| -> Vec<String> {
        manifests::all(&session, cluster, "t").iter().map(|o| o["kind"].as_str().unwrap().to_string()).collect()
    };
    assert!(!kinds(&cluster()).contains(&"ClusterQueue".to_string()));
    let with = kinds(&Cluster { kueue: true, ..cluster() });
    let at = |kind: &str| with.iter().position(|k| k == kind).unwrap();
    assert!(at("LimitRange") < at("ResourceFlavor") && at("LocalQueue") < at("RoleBinding"), "{with:?}");
    // `berth manifests <id>` with both switches: the queues and the room held ahead.
    let ahead = manifests::ahead::ScaleAhead {
        lead: chrono::Duration::minutes(30),
        mode: manifests::ahead::AheadMode::CapacityBuffer,
        pause_image: "registry.k8s.io/pause:3.10".into(),
    };
    let both = Cluster { kueue: true, scale_ahead: Some(ahead), ..cluster() };
    let shown = manifests::preview(&session, &both);
    for kind in ["ClusterQueue", "LocalQueue", "ResourceFlavor", "PodTemplate", "CapacityBuffer"] {
        assert!(shown.contains(&format!("\"kind\": \"{kind}\"")), "{kind} missing from {shown}");
    }
}

#[test]
fn limit_range_defaults_fit_a_bare_pod_inside_the_quota() {
    assert_eq!(
        to_value(manifests::limit_range(&session())),
        json!({
            "apiVersion": "v1", "kind": "LimitRange", "metadata": meta("berth-defaults"),
            "spec": { "limits": [{
                "type": "Container",
                "default": { "cpu": "1", "memory": "8Gi", "ephemeral-storage": "2Gi" },
                "defaultRequest": { "cpu": "500m", "memory": "4Gi", "ephemeral-storage": "1Gi" },
            }] },
        })
    );
}

#[test]
fn the_user_works_in_the_namespace_through_berths_session_role_and_reads_its_quota() {
    let user = json!([{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ada@example.test" }]);
    assert_eq!(
        to_value(manifests::session_user_binding(&session())),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta("berth-session-user"),
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "berth-session-user" },
            "subjects": user,
        })
    );
    assert_eq!(
        to_value(manifests::quota_reader_role(&session())),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta("berth-quota-reader"),
            "rules": [{ "apiGroups": [""], "resources": ["resourcequotas", "limitranges"], "verbs": ["get", "list", "watch"] }],
        })
    );
    assert_eq!(
        to_value(manifests::quota_reader_binding(&session())),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta("berth-quota-reader"),
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "berth-quota-reader" },
            "subjects": user,
        })
    );
    assert_eq!(
        to_value(manifests::access_secret(&session(), "s3cret")),
        json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": meta("berth-workspace-access"),
            "type": "Opaque", "stringData": { "token": "s3cret" },
        })
    );
}

#[test]
fn network_policies_admit_only_the_namespace_and_the_ingress_controller_to_published_ports_and_egress_to_dns_and_proxy()
{
    let policies: Vec<Value> = manifests::network_policies(&session(), &cluster()).into_iter().map(to_value).collect();
    assert_eq!(
        policies,
        [
            json!({
                "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta("berth-ingress"),
                "spec": {
                    "podSelector": {}, "policyTypes": ["Ingress"],
                    "ingress": [
                        { "from": [{ "podSelector": {} }] },
                        {
                            "from": [{ "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": "ingress-nginx" } } }],
                            "ports": [{ "protocol": "TCP", "port": "http" }],
                        },
                    ],
                },
            }),
            json!({
                "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta("berth-egress"),
                "spec": {
                    "podSelector": {}, "policyTypes": ["Egress"],
                    "egress": [
                        { "to": [{ "podSelector": {} }] },
                        {
                            "to": [{
                                "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": "kube-system" } },
                                "podSelector": { "matchLabels": { "k8s-app": "kube-dns" } },
                            }],
                            "ports": [{ "protocol": "UDP", "port": 53 }, { "protocol": "TCP", "port": 53 }],
                        },
                        { "to": [{ "ipBlock": { "cidr": "10.20.0.5/32" } }], "ports": [{ "protocol": "TCP", "port": 3128 }] },
                    ],
                },
            }),
        ]
    );
    let mut closed = cluster();
    closed.proxy = None;
    let egress = to_value(&manifests::network_policies(&session(), &closed)[1]);
    assert_eq!(egress["spec"]["egress"].as_array().unwrap().len(), 2, "no proxy, no way out but DNS");
}

#[test]
fn proxy_settings_are_a_config_map() {
    assert_eq!(
        to_value(manifests::proxy_config_map(&session(), &cluster())),
        json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("berth-proxy"),
            "data": {
                "HTTP_PROXY": "http://proxy.corp:3128", "HTTPS_PROXY": "http://proxy.corp:3128",
                "NO_PROXY": ".cluster.local,.svc,10.0.0.0/8",
                "http_proxy": "http://proxy.corp:3128", "https_proxy": "http://proxy.corp:3128",
                "no_proxy": ".cluster.local,.svc,10.0.0.0/8",
            },
        })
    );
    let direct = Cluster { proxy: None, ..cluster() };
    let empty = to_value(manifests::proxy_config_map(&session(), &direct));
    assert_eq!(empty.get("data"), None, "no `data: {{}}`: the API server drops it, and every pass would rewrite it");
}

#[test]
fn volumes_are_the_owners_home_and_the_cache() {
    let claims_of = |session: &Session| -> Vec<Value> {
        manifests::persistent_volume_claims(session, &cluster()).into_iter().map(to_value).collect()
    };
    let claim = |name: &str, size: &str| {
        json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(name),
            "spec": { "accessModes": ["ReadWriteOnce"], "resources": { "requests": { "storage": size } }, "storageClassName": "fast" },
        })
    };
    const HOME: &str = "home-00000000-0000-4000-8000-0000000000a1";
    const CACHE: &str = "cache-00000000-0000-4000-8000-0000000000a1";
    // A first session: new volumes of the tenant's home and cache sizes.
    assert_eq!(claims_of(&session()), [claim(HOME, "50Gi"), claim(CACHE, "200Gi")]);
    // A returning person: the claims name their kept volumes, at their sizes.
    let mut returning = session();
    returning.window.home = manifests::Volume::Kept { volume: "pvc-1234".into(), gib: 80 };
    returning.window.cache = manifests::Volume::Kept { volume: "pvc-5678".into(), gib: 300 };
    let (mut home, mut cache) = (claim(HOME, "80Gi"), claim(CACHE, "300Gi"));
    home["spec"]["volumeName"] = json!("pvc-1234");
    cache["spec"]["volumeName"] = json!("pvc-5678");
    assert_eq!(claims_of(&returning), [home, cache]);
    // A session started before volumes were kept keeps its own claims; a
    // tenant whose cache is per session gets its own cache.
    let mut before = session();
    before.window.home = manifests::Volume::PerSession { gib: 100 };
    before.window.cache = manifests::Volume::PerSession { gib: 200 };
    assert_eq!(claims_of(&before), [claim("berth-home", "100Gi"), claim("berth-model-cache", "200Gi")]);
    let per_session = to_value(manifests::session_config(&before));
    assert_eq!(per_session["data"].get("home-kept-until"), None);
    assert_eq!(per_session["data"].get("model-cache-kept-until"), None);
    // The workspace reads its window at /etc/berth.
    let config = to_value(manifests::session_config(&session()));
    assert_eq!(
        config["data"],
        json!({ "window-end": "2026-11-28T12:00:00Z", "booking": "0f0e0d0c-0b0a-4908-8706-050403020100",
                "pool": "lab-h100", "kind": "nvidia.com/mig-1g.24gb", "home-kept-until": "2026-12-28T12:00:00Z",
                "model-cache-kept-until": "2026-12-14T12:00:00Z" })
    );
    let end = session().window.ends_at;
    let at = |minutes: i64| manifests::window::ending_soon(end, end - chrono::Duration::minutes(minutes));
    assert_eq!([at(16), at(15), at(6), at(5), at(0)], [None, Some(15), Some(15), Some(5), Some(5)]);
}

#[test]
fn the_workspace_holds_one_unit_when_interactive_and_none_for_inference() {
    // Who may use it, so that the worker notices anyone dropping out.
    let mut workspace_meta = meta("workspace");
    workspace_meta["annotations"] = json!({ "berth.io/holders": "ada@example.test" });
    let selector =
        json!({ "app.kubernetes.io/name": "workspace", "berth.io/booking": "0f0e0d0c-0b0a-4908-8706-050403020100" });
    let mut pod_labels = labels();
    pod_labels["app.kubernetes.io/name"] = json!("workspace");
    // Half of one unit's CPU and memory for the pod, the gate's 50m and 64Mi included.
    let resources = json!({ "cpu": "1950m", "memory": "16320Mi", "nvidia.com/mig-1g.24gb": "1" });
    let token = json!({ "secretKeyRef": { "name": "berth-workspace-access", "key": "token" } });
    let gate = json!({ "cpu": "50m", "memory": "64Mi" });
    let hardened = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    assert_eq!(
        to_value(manifests::deployment(&session(), &cluster())),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": workspace_meta,
            "spec": {
                "replicas": 1, "strategy": { "type": "Recreate" }, "selector": { "matchLabels": selector },
                "template": {
                    "metadata": { "labels": pod_labels },
                    "spec": {
                        "automountServiceAccountToken": false,
                        "terminationGracePeriodSeconds": 30,
                        "securityContext": { "runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 100, "seccompProfile": { "type": "RuntimeDefault" } },
                        // The workspace on 8889 behind the gate, whose 8888 alone is published.
                        "containers": [{
                            "name": "workspace",
                            "image": "quay.io/jupyter/pytorch-notebook:cuda12-latest",
                            "ports": [{ "name": "workspace", "containerPort": 8889 }],
                            "env": [
                                { "name": "BERTH_ACCESS_TOKEN", "valueFrom": token },
                                { "name": "JUPYTER_TOKEN", "valueFrom": token },
                                { "name": "JUPYTER_PORT", "value": "8889" },
                                { "name": "BERTH_WINDOW_END",
                                  "valueFrom": { "configMapKeyRef": { "name": "berth-session", "key": "window-end" } } },
                            ],
                            "envFrom": [{ "configMapRef": { "name": "berth-proxy" } }],
                            "resources": { "requests": resources, "limits": resources },
                            "readinessProbe": { "tcpSocket": { "port": 8889 }, "periodSeconds": 5 },
                            "securityContext": hardened,
                            "volumeMounts": [
                                { "name": "home", "mountPath": "/home/jovyan" },
                                { "name": "model-cache", "mountPath": "/models" },
                                { "name": "berth", "mountPath": "/etc/berth", "readOnly": true },
                            ],
                        }, {
                            "name": "gate",
                            "image": "registry.example.org/platform/berth:0.1.0",
                            "args": ["gate"],
                            "ports": [{ "name": "http", "containerPort": 8888 }],
                            // Its own origin: the only one whose pages may change the workspace.
                            "env": [
                                { "name": "BERTH_ACCESS_TOKEN", "valueFrom": token },
                                { "name": "BERTH_GATE_ORIGIN", "value": "https://berth-team-a-0f0e0d0c.gpu.example.org" },
                            ],
                            "resources": { "requests": gate, "limits": gate },
                            "readinessProbe": { "httpGet": { "path": "/.berth/ready", "port": 8888 }, "periodSeconds": 5 },
                            "securityContext": hardened,
                        }],
                        "volumes": [
                            { "name": "home", "persistentVolumeClaim": { "claimName": "home-00000000-0000-4000-8000-0000000000a1" } },
                            { "name": "model-cache", "persistentVolumeClaim": { "claimName": "cache-00000000-0000-4000-8000-0000000000a1" } },
                            { "name": "berth", "configMap": { "name": "berth-session" } },
                        ],
                        "nodeSelector": { "berth.io/pool": "lab", "nvidia.com/gpu.product": "NVIDIA-H100-NVL" },
                        "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
                    },
                },
            },
        })
    );
    let mut anywhere = session();
    anywhere.placement = Default::default();
    let pod = to_value(manifests::deployment(&anywhere, &cluster()))["spec"]["template"]["spec"].clone();
    assert!(
        pod.get("nodeSelector").is_none() && pod.get("tolerations").is_none(),
        "a pool without placement adds none"
    );
    let mut inference = session();
    inference.interactive = false;
    let pod = to_value(manifests::deployment(&inference, &cluster()));
    let requests = &pod["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"];
    assert_eq!(requests, &json!({ "cpu": "1950m", "memory": "16320Mi" }), "inference workspaces hold no GPU");

    assert_eq!(
        to_value(manifests::service(&session())),
        json!({
            "apiVersion": "v1", "kind": "Service", "metadata": meta("workspace"),
            "spec": { "selector": selector, "ports": [{ "name": "http", "port": 80, "targetPort": "http" }] },
        })
    );
    let host = "berth-team-a-0f0e0d0c.gpu.example.org";
    assert_eq!(
        to_value(manifests::ingress(&session(), &cluster())),
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta("workspace"),
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{ "host": host, "http": { "paths": [{
                    "path": "/", "pathType": "Prefix",
                    "backend": { "service": { "name": "workspace", "port": { "name": "http" } } },
                }] } }],
                "tls": [{ "hosts": [host] }],
            },
        })
    );
}

#[test]
fn on_openshift_a_route_replaces_the_ingress() {
    let mut openshift = cluster();
    openshift.expose = Expose::Route;
    let route = json!({
        "apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": meta("workspace"),
        "spec": {
            "host": "berth-team-a-0f0e0d0c.gpu.example.org",
            "to": { "kind": "Service", "name": "workspace", "weight": 100 },
            "port": { "targetPort": "http" },
            "tls": { "termination": "edge", "insecureEdgeTerminationPolicy": "Redirect" },
            "wildcardPolicy": "None",
        },
    });
    assert_eq!(manifests::route(&session(), &openshift), route);
    let objects = manifests::all(&session(), &openshift, "t");
    assert_eq!(objects.inside.last(), Some(&route), "the Route takes the Ingress's place");
    assert!(objects.iter().all(|o| o["kind"] != "Ingress"));
    assert_eq!(openshift.workspace_url(&session()), "https://berth-team-a-0f0e0d0c.gpu.example.org/");
}

#[test]
fn the_image_cache_pulls_approved_digests_on_gpu_nodes_as_nobody_under_its_own_account() {
    let notebook = format!("quay.io/jupyter/pytorch-notebook@sha256:{}", "ab".repeat(32));
    let images = [notebook, VLLM.to_string()];
    let mut offered = images.to_vec();
    // A tag (what it names may change), and a digest from a registry no one approved.
    offered.insert(1, "quay.io/jupyter/pytorch-notebook:cuda12-latest".into());
    offered.push(format!("evil.example/miner@sha256:{}", "cd".repeat(32)));
    let labels = json!({ "app.kubernetes.io/managed-by": "berth", "app.kubernetes.io/name": "berth-image-cache" });
    let resources =
        json!({ "requests": { "cpu": "10m", "memory": "16Mi" }, "limits": { "cpu": "100m", "memory": "64Mi" } });
    let hardened = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    let pull = |i: usize| {
        json!({
            "name": format!("pull-{i}"), "image": images[i], "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", "exit 0"], "resources": resources, "securityContext": hardened,
        })
    };
    assert_eq!(
        to_value(manifests::image_cache_daemon_set("berth", &image_cache(), &offered)),
        json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": { "name": "berth-image-cache", "namespace": "berth", "labels": labels },
            "spec": {
                "selector": { "matchLabels": { "app.kubernetes.io/name": "berth-image-cache" } },
                "updateStrategy": { "type": "RollingUpdate", "rollingUpdate": { "maxUnavailable": "25%" } },
                "template": {
                    "metadata": { "labels": labels },
                    "spec": {
                        "nodeSelector": { "nvidia.com/gpu.present": "true" },
                        "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
                        "serviceAccountName": "berth-image-cache",
                        "automountServiceAccountToken": false,
                        "securityContext": { "runAsNonRoot": true, "runAsUser": 65534, "seccompProfile": { "type": "RuntimeDefault" } },
                        "initContainers": [pull(0), pull(1)],
                        "containers": [{ "name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": resources, "securityContext": hardened }],
                    },
                },
            },
        })
    );
}

#[test]
fn only_digests_from_approved_registries_are_cacheable() {
    let digest = "0123456789abcdef".repeat(4);
    let registries = ["nvcr.io/nvidia".to_string(), "docker.io/library".to_string(), "localhost:5000".to_string()];
    for (image, cacheable) in [
        (format!("nvcr.io/nvidia/tritonserver@sha256:{digest}"), true),
        (format!("ubuntu@sha256:{digest}"), true),
        (format!("localhost:5000/model@sha256:{digest}"), true),
        ("nvcr.io/nvidia/tritonserver:24.11-py3".to_string(), false),
        (format!("nvcr.io/nvidiax/tool@sha256:{digest}"), false),
        (format!("nvcr.io.evil.example/nvidia/x@sha256:{digest}"), false),
        (format!("vllm/vllm-openai@sha256:{digest}"), false),
        (format!("nvcr.io/nvidia/tritonserver@sha256:{}", &digest[1..]), false),
        (format!("nvcr.io/nvidia/tritonserver@sha256:{}", digest.to_uppercase()), false),
    ] {
        assert_eq!(manifests::cacheable(&image, &registries), cacheable, "{image}");
    }
}

#[test]
fn quantities_are_written_the_way_the_api_server_writes_them_back() {
    assert_eq!(
        (manifests::cpu(8000), manifests::cpu(500), manifests::cpu(1500)),
        ("8".into(), "500m".into(), "1500m".into())
    );
    assert_eq!((manifests::memory(65536), manifests::memory(1536)), ("64Gi".into(), "1536Mi".into()));
}

#[test]
fn namespace_names_stay_valid_for_the_longest_tenant() {
    let mut long = session();
    long.tenant = "a".repeat(40);
    let name = long.namespace();
    assert!(name.len() <= 63, "{name}");
    assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
}

/// Every rendered object, and every manifest in `deploy/`, passes
/// `kubernetes-validate --strict` for Kubernetes 1.30 (offline schemas).
#[test]
fn every_object_and_every_deploy_file_validates_strictly_against_kubernetes_1_30() {
    let dir = std::env::temp_dir().join(format!("berth-manifests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let mut inference = session();
    inference.interactive = false;
    let mut open = cluster();
    open.proxy = None;
    open.storage_class = None;
    open.ingress_class = None;
    open.expose = Expose::Route;
    for (s, c) in [(session(), cluster()), (inference, open)] {
        for object in manifests::all(&s, &c, "token") {
            let path = dir.join(format!("{}-{}-{}.json", files.len(), object["kind"].as_str().unwrap(), s.interactive));
            std::fs::write(&path, serde_json::to_vec_pretty(&object).unwrap()).unwrap();
            files.push(path);
        }
    }
    assert_eq!(files.len(), 2 * 16, "16 objects per session");
    let images = ["a:1".to_string(), "b:2".to_string()];
    let cache =
        serde_json::to_vec_pretty(&manifests::image_cache_daemon_set("berth", &image_cache(), &images)).unwrap();
    let path = dir.join("image-cache.json");
    std::fs::write(&path, cache).unwrap();
    files.push(path);
    let deploy = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy");
    for entry in common::processes::files_under(std::path::Path::new(deploy)) {
        // Helm values for the GPU Operator's chart are not Kubernetes objects.
        let helm_values = entry.file_name().is_some_and(|n| n == "helm-values.yaml");
        if entry.extension().is_some_and(|e| e == "yaml" || e == "yml") && !helm_values {
            files.push(entry);
        }
    }
    let output = std::process::Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", "1.30.0", "--quiet"])
        .args(&files)
        .output()
        .expect("kubernetes-validate is installed (pip install kubernetes-validate; `make test` does it)");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    std::fs::remove_dir_all(&dir).ok();
    assert!(output.status.success(), "kubernetes-validate refused:\n{report}");
    assert!(!report.contains("ERROR"), "{report}");
}
