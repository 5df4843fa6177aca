use super::window::{claim, Volume, SESSION_CONFIG, SESSION_CONFIG_PATH};
use super::{cpu, memory, meta, typed, Cluster, Session, PUBLISHED_PORT};
use app::model::Kept;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Service};
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::json;

const WORKSPACE: &str = "workspace";
/// The gate's port (`berth gate`), the only one published.
const PORT: i32 = 8888;
/// The workspace's own port, behind the gate (Jupyter images read `JUPYTER_PORT`).
const WORKSPACE_PORT: i32 = 8889;
/// What the gate asks for (it only passes bytes on).
const GATE_CPU_MILLIS: i64 = 50;
const GATE_MEMORY_MIB: i64 = 64;

/// Who may use the workspace when it was last applied (its owner and
/// co-owners as the cluster names them, comma-separated): when anyone drops
/// out, the worker rotates the access token (`rotate::if_holders_left`).
pub const HOLDERS_ANNOTATION: &str = "berth.io/holders";

/// The worker's volume claims with their sizes in GiB: the home and the
/// model cache (see `window::claim`).
pub fn claims(session: &Session) -> [(String, i64); 2] {
    Kept::ALL.map(|purpose| claim(session, purpose))
}

/// Home and the model cache (see `claims`); a kept volume's claim names it,
/// which the worker has reserved for it (`claimRef`).
pub fn persistent_volume_claims(session: &Session, cluster: &Cluster) -> Vec<PersistentVolumeClaim> {
    Kept::ALL
        .into_iter()
        .map(|purpose| {
            let (name, gib) = claim(session, purpose);
            let mut spec = json!({
                "accessModes": ["ReadWriteOnce"],
                "resources": { "requests": { "storage": format!("{gib}Gi") } },
            });
            if let Some(class) = &cluster.storage_class {
                spec["storageClassName"] = json!(class);
            }
            match session.window.volume(purpose) {
                Volume::Kept { volume, .. } => spec["volumeName"] = json!(volume),
                // The team's volumes are shared with its other sessions: many readers and writers at once.
                Volume::Team { volume, class, .. } => {
                    spec["volumeName"] = json!(volume);
                    spec["accessModes"] = json!(["ReadWriteMany"]);
                    spec["storageClassName"] = json!(class);
                }
                Volume::PerSession { .. } | Volume::New { .. } => {}
            }
            typed(json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(session, &name), "spec": spec }))
        })
        .collect()
}

/// The workspace: the booked image, the access token in its environment
/// (also as `JUPYTER_TOKEN`, so Jupyter asks for it), proxy settings, home
/// and model cache mounted, on port 8889 behind `berth gate` on 8888, the
/// only published port (see `crate::gate`). In `interactive` mode it holds
/// one unit of the booked kind; in `inference` mode none (the units are left
/// for the user's serving pods).
pub fn deployment(session: &Session, cluster: &Cluster) -> Deployment {
    let grant = &session.kind;
    // The pod takes half of one unit's CPU and memory, the gate's share included.
    let mut requests = json!({
        "cpu": cpu((i64::from(grant.cpu_millis_per_unit / 2) - GATE_CPU_MILLIS).max(GATE_CPU_MILLIS)),
        "memory": memory((i64::from(grant.memory_mib_per_unit / 2) - GATE_MEMORY_MIB).max(4 * GATE_MEMORY_MIB)),
    });
    let mut limits = requests.clone();
    if session.interactive {
        requests[&grant.kind] = json!("1");
        limits[&grant.kind] = json!("1");
    }
    let token = json!({ "secretKeyRef": { "name": super::ACCESS_SECRET, "key": "token" } });
    let gate = json!({ "cpu": cpu(GATE_CPU_MILLIS), "memory": memory(GATE_MEMORY_MIB) });
    let hardened = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    // The pods carry the session's id (its first booking's) as their
    // booking label: a booking that continues the session changes neither
    // the (immutable) selector nor the template, so the pod runs on.
    let selector = json!({ "app.kubernetes.io/name": WORKSPACE, "berth.io/booking": session.session_id().to_string() });
    let mut pod_labels = session.labels();
    pod_labels.insert("app.kubernetes.io/name".into(), WORKSPACE.into());
    pod_labels.insert(super::BOOKING_LABEL.into(), session.session_id().to_string());
    let mut metadata = meta(session, WORKSPACE);
    metadata["annotations"] = json!({ HOLDERS_ANNOTATION: super::holders(session).join(",") });
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": 1,
            "strategy": { "type": "Recreate" },
            "selector": { "matchLabels": selector },
            "template": {
                "metadata": { "labels": pod_labels },
                "spec": {
                    "automountServiceAccountToken": false,
                    // SIGTERM, then the pool's grace to checkpoint before the
                    // window's end takes the pod (at most what berth-session-devices allows).
                    "terminationGracePeriodSeconds": session.placement.end_grace_seconds,
                    "securityContext": { "runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 100, "seccompProfile": { "type": "RuntimeDefault" } },
                    "containers": [{
                        "name": WORKSPACE,
                        "image": session.image,
                        "ports": [{ "name": "workspace", "containerPort": WORKSPACE_PORT }],
                        "env": [
                            { "name": "BERTH_ACCESS_TOKEN", "valueFrom": token.clone() },
                            { "name": "JUPYTER_TOKEN", "valueFrom": token.clone() },
                            { "name": "JUPYTER_PORT", "value": WORKSPACE_PORT.to_string() },
                            // Read when the container starts; /etc/berth follows extensions.
                            { "name": "BERTH_WINDOW_END",
                              "valueFrom": { "configMapKeyRef": { "name": SESSION_CONFIG, "key": "window-end" } } },
                        ],
                        "envFrom": [{ "configMapRef": { "name": "berth-proxy" } }],
                        "resources": { "requests": requests, "limits": limits },
                        "readinessProbe": { "tcpSocket": { "port": WORKSPACE_PORT }, "periodSeconds": 5 },
                        "securityContext": hardened,
                        "volumeMounts": [
                            { "name": "home", "mountPath": "/home/jovyan" },
                            { "name": "model-cache", "mountPath": "/models" },
                            { "name": "berth", "mountPath": SESSION_CONFIG_PATH, "readOnly": true },
                        ],
                    }, {
                        "name": "gate",
                        "image": cluster.gate_image,
                        "args": ["gate"],
                        "ports": [{ "name": PUBLISHED_PORT, "containerPort": PORT }],
                        "env": [
                            { "name": "BERTH_ACCESS_TOKEN", "valueFrom": token },
                            { "name": "BERTH_GATE_ORIGIN", "value": format!("https://{}", host(session, cluster)) },
                        ],
                        "resources": { "requests": gate, "limits": gate },
                        "readinessProbe": { "httpGet": { "path": crate::gate::READY_PATH, "port": PORT }, "periodSeconds": 5 },
                        "securityContext": hardened,
                    }],
                    "volumes": [
                        { "name": "home", "persistentVolumeClaim": { "claimName": claim(session, Kept::Home).0 } },
                        { "name": "model-cache", "persistentVolumeClaim": { "claimName": claim(session, Kept::Cache).0 } },
                        { "name": "berth", "configMap": { "name": SESSION_CONFIG } },
                    ],
                },
            },
        },
    });
    // On the pool's nodes only (the placement policy refuses pods without it).
    let placement = &session.placement;
    let pod = &mut deployment["spec"]["template"]["spec"];
    if !placement.node_selector.is_empty() {
        pod["nodeSelector"] = json!(placement.node_selector);
    }
    if !placement.tolerations.is_empty() {
        pod["tolerations"] = json!(placement.tolerations);
    }
    if let Some(class) = &placement.priority_class {
        pod["priorityClassName"] = json!(class);
    }
    if let Some(class) = &placement.runtime_class {
        pod["runtimeClassName"] = json!(class);
    }
    typed(deployment)
}

pub fn service(session: &Session) -> Service {
    typed(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(session, WORKSPACE),
        "spec": {
            "selector": { "app.kubernetes.io/name": WORKSPACE, "berth.io/booking": session.session_id().to_string() },
            "ports": [{ "name": "http", "port": 80, "targetPort": PUBLISHED_PORT }],
        },
    }))
}

/// The workspace's host name: `<namespace>.<domain>`.
pub fn host(session: &Session, cluster: &Cluster) -> String {
    format!("{}.{}", session.namespace(), cluster.domain)
}

/// `https://<namespace>.<domain>/` to the workspace.
pub fn ingress(session: &Session, cluster: &Cluster) -> Ingress {
    let host = host(session, cluster);
    let mut spec = json!({
        "rules": [{ "host": host, "http": { "paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": { "service": { "name": WORKSPACE, "port": { "name": "http" } } },
        }] } }],
        "tls": [{ "hosts": [host] }],
    });
    if let Some(class) = &cluster.ingress_class {
        spec["ingressClassName"] = json!(class);
    }
    typed(
        json!({ "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta(session, WORKSPACE), "spec": spec }),
    )
}

/// The OpenShift way to the workspace (when `--expose route`): the same host,
/// TLS terminated at the router, plain HTTP redirected.
pub fn route(session: &Session, cluster: &Cluster) -> serde_json::Value {
    json!({
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": meta(session, WORKSPACE),
        "spec": {
            "host": host(session, cluster),
            "to": { "kind": "Service", "name": WORKSPACE, "weight": 100 },
            "port": { "targetPort": PUBLISHED_PORT },
            "tls": { "termination": "edge", "insecureEdgeTerminationPolicy": "Redirect" },
            "wildcardPolicy": "None",
        },
    })
}
