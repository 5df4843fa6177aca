use super::{host, typed, Cluster, Session, BOOKING_ANNOTATION};
use k8s_openapi::api::core::v1::Namespace;
use serde_json::json;

/// The host the session may publish (itself and names under it); read by
/// the hosts admission policy in `deploy/policies/`.
pub const HOST_ANNOTATION: &str = "berth.io/host";
/// The booked kind, the only extended resource the session's pods may ask for.
pub const GPU_KIND_ANNOTATION: &str = "berth.io/gpu-kind";
/// Prefix of one annotation per node-selector label, `berth.io/node-selector.<i>`
/// = `key=value`: the placement policy checks each against the pod's
/// `nodeSelector` (CEL has no string split, so the pairs come one by one).
pub const NODE_SELECTOR_ANNOTATION: &str = "berth.io/node-selector";

/// Prefix of one annotation per pool toleration, `berth.io/toleration.<i>` =
/// `key|operator|value|effect` (see `toleration`): the placement policy
/// admits a pod's tolerations only when each is one of these.
pub const TOLERATION_ANNOTATION: &str = "berth.io/toleration";

/// The pool's PriorityClass and RuntimeClass, the only ones the session's
/// pods may name (policy berth-session-pod-fields); absent: none.
pub const PRIORITY_CLASS_ANNOTATION: &str = "berth.io/priority-class";
pub const RUNTIME_CLASS_ANNOTATION: &str = "berth.io/runtime-class";

/// A toleration as the placement policy compares it: absent fields as
/// Kubernetes defaults them (operator `Equal`, the rest empty), and
/// `tolerationSeconds` left out (it only shortens a stay).
pub fn toleration(t: &app::model::Toleration) -> String {
    let field = |f: &Option<String>| f.clone().unwrap_or_default();
    let operator = t.operator.clone().unwrap_or_else(|| "Equal".into());
    format!("{}|{operator}|{}|{}", field(&t.key), field(&t.value), field(&t.effect))
}

/// What the placement and pod-field policies read off a namespace: the
/// pool's node selector, tolerations and pod classes.
fn placement_annotations(placement: &app::model::Placement, annotations: &mut serde_json::Value) {
    let pairs = placement.node_selector.iter().map(|(key, value)| format!("{key}={value}"));
    for (i, pair) in pairs.enumerate() {
        annotations[format!("{NODE_SELECTOR_ANNOTATION}.{i}")] = json!(pair);
    }
    for (i, t) in placement.tolerations.iter().enumerate() {
        annotations[format!("{TOLERATION_ANNOTATION}.{i}")] = json!(toleration(t));
    }
    if let Some(class) = &placement.priority_class {
        annotations[PRIORITY_CLASS_ANNOTATION] = json!(class);
    }
    if let Some(class) = &placement.runtime_class {
        annotations[RUNTIME_CLASS_ANNOTATION] = json!(class);
    }
}

/// A pool's backfill namespace (`--kueue`, a lending kind) as the worker
/// marks it: it receives booked-but-idle GPUs, so the session guard rails
/// bind it too (by its `berth.io/backfill` label): the pool's nodes,
/// tolerations and pod classes, the lending kinds (`berth.io/gpu-kind.<i>`),
/// at most 30 s of grace, no device injection, and every GPU-requesting
/// pod or workload through the `backfill` LocalQueue (deploy/policies/
/// berth-backfill.yaml). Only labels and annotations: the namespace is the
/// admin's, and the worker may change nothing else of it (berth-worker-scope).
pub fn backfill_namespace(pool: &app::backend::sessions::due::Backfill) -> serde_json::Value {
    let mut annotations = json!({});
    placement_annotations(&pool.placement, &mut annotations);
    for (i, kind) in pool.kinds.iter().enumerate() {
        annotations[format!("{GPU_KIND_ANNOTATION}.{i}")] = json!(kind);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": pool.namespace,
            "labels": { super::kueue::BACKFILL_LABEL: pool.pool_id.to_string() },
            "annotations": annotations,
        },
    })
}

/// The session's namespace: Berth's labels; annotations with the booking,
/// the host, the booked kind, the pool's node selector, tolerations and pod
/// classes (the user cannot
/// edit the namespace, so admission policies trust them); the selector also
/// as OpenShift's project node selector and for the PodNodeSelector plugin;
/// and Pod Security admission enforcing `baseline` (GPU workspace images
/// need it) while warning and auditing against `restricted`.
pub fn namespace(session: &Session, cluster: &Cluster) -> Namespace {
    let mut labels = session.labels();
    for mode in ["enforce", "warn", "audit"] {
        let level = if mode == "enforce" { "baseline" } else { "restricted" };
        labels.insert(format!("pod-security.kubernetes.io/{mode}"), level.to_string());
        labels.insert(format!("pod-security.kubernetes.io/{mode}-version"), "latest".to_string());
    }
    let mut annotations = json!({
        BOOKING_ANNOTATION: session.booking_id.to_string(),
        HOST_ANNOTATION: host(session, cluster),
        GPU_KIND_ANNOTATION: session.kind.kind,
        super::window::OWNER_ANNOTATION: session.window.owner_id.to_string(),
    });
    placement_annotations(&session.placement, &mut annotations);
    let selector = &session.placement.node_selector;
    let pairs: Vec<String> = selector.iter().map(|(key, value)| format!("{key}={value}")).collect();
    // Without a selector, leave OpenShift's cluster-wide default in force.
    if !pairs.is_empty() {
        for key in ["openshift.io/node-selector", "scheduler.alpha.kubernetes.io/node-selector"] {
            annotations[key] = json!(pairs.join(","));
        }
    }
    typed(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": session.namespace(), "labels": labels, "annotations": annotations },
    }))
}
