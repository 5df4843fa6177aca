//! Nodes ready before a window opens (`--scale-ahead`): from the lead time
//! before a booking's start until its session runs (or five minutes after
//! the start), Berth's namespace holds room for every booked unit, so the
//! cluster autoscaler adds the pool's GPU nodes before the user arrives.
//! Either a CapacityBuffer (autoscaling.x-k8s.io/v1beta1) over a
//! PodTemplate of one unit, or — where the autoscaler has no buffers —
//! "balloon" pods: a Deployment of pause pods at a priority just above the
//! autoscaler's cut-off, preempted the moment real work needs the node.

use super::{Cluster, Session, BOOKING_LABEL, MANAGED_BY};
use serde_json::{json, Value};

/// The PriorityClass of balloon pods (deploy/rbac/berth-worker.yaml).
pub const BALLOON_PRIORITY_CLASS: &str = "berth-scale-ahead";

/// How the room is held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AheadMode {
    /// A CapacityBuffer the cluster autoscaler keeps room for.
    #[default]
    CapacityBuffer,
    /// Low-priority pause pods the autoscaler scales up for.
    Placeholder,
}

/// `--scale-ahead`: how long before a start, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleAhead {
    pub lead: chrono::Duration,
    pub mode: AheadMode,
    /// The image of the pods that hold the room (`--pause-image`).
    pub pause_image: String,
}

/// `berth-ahead-<first 8 hex of the booking>`.
pub fn name(session: &Session) -> String {
    format!("berth-ahead-{}", &session.booking_id.simple().to_string()[..8])
}

fn metadata(session: &Session, cluster: &Cluster) -> Value {
    json!({
        "name": name(session),
        "namespace": cluster.berth_namespace,
        "labels": { MANAGED_BY.0: MANAGED_BY.1, BOOKING_LABEL: session.booking_id.to_string() },
    })
}

/// One booked unit as a pod: on the pool's nodes (its selector and
/// tolerations), asking for one physical unit of the kind (its time-slice
/// replicas), doing nothing, as nobody.
fn unit_pod(session: &Session, pause: &str) -> Value {
    let tolerations: Vec<Value> =
        session.placement.tolerations.iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect();
    let request = json!({ session.kind.kind.clone(): session.kind.replicas_per_unit.to_string() });
    json!({
        "metadata": { "labels": { MANAGED_BY.0: MANAGED_BY.1, BOOKING_LABEL: session.booking_id.to_string() } },
        "spec": {
            "nodeSelector": session.placement.node_selector,
            "tolerations": tolerations,
            "automountServiceAccountToken": false,
            "terminationGracePeriodSeconds": 0,
            "securityContext": { "runAsNonRoot": true, "runAsUser": 65534, "seccompProfile": { "type": "RuntimeDefault" } },
            "containers": [{
                "name": "pause",
                "image": pause,
                "resources": { "requests": request, "limits": request },
                "securityContext": { "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } },
            }],
        },
    })
}

/// What `ahead` keeps in Berth's namespace for `session`, in the order applied.
pub fn objects(session: &Session, cluster: &Cluster, ahead: &ScaleAhead) -> Vec<Value> {
    match ahead.mode {
        AheadMode::CapacityBuffer => vec![
            json!({ "apiVersion": "v1", "kind": "PodTemplate", "metadata": metadata(session, cluster),
                    "template": unit_pod(session, &ahead.pause_image) }),
            json!({ "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
                    "metadata": metadata(session, cluster),
                    // Active: the autoscaler adds nodes for the buffer now.
                    "spec": { "podTemplateRef": { "name": name(session) }, "replicas": session.quantity,
                              "provisioningStrategy": "buffer.x-k8s.io/active-capacity" } }),
        ],
        AheadMode::Placeholder => {
            let mut pod = unit_pod(session, &ahead.pause_image);
            pod["spec"]["priorityClassName"] = BALLOON_PRIORITY_CLASS.into();
            let selector = json!({ BOOKING_LABEL: session.booking_id.to_string() });
            vec![json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata(session, cluster),
                         "spec": { "replicas": session.quantity, "selector": { "matchLabels": selector },
                                   "template": pod } })]
        }
    }
}

/// (apiVersion, kind) of what a mode keeps: the worker lists these to
/// remove the room no booking needs any more.
pub fn kinds(mode: AheadMode) -> &'static [(&'static str, &'static str)] {
    match mode {
        AheadMode::CapacityBuffer => &[("v1", "PodTemplate"), ("autoscaling.x-k8s.io/v1beta1", "CapacityBuffer")],
        AheadMode::Placeholder => &[("apps/v1", "Deployment")],
    }
}
