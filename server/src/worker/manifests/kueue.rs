//! A booking as Kueue quota (`--kueue`): the booked units become a
//! ClusterQueue of the session's own, which only the session's namespace
//! may submit to (through the LocalQueue `session` there), in the pool's
//! cohort, never borrowing beyond what was booked. Kueue's v1beta2 API.

use super::{cpu, memory, Session};
use serde_json::{json, Value};

pub const KUEUE_API: &str = "kueue.x-k8s.io/v1beta2";
/// The LocalQueue users submit batch Jobs to
/// (label `kueue.x-k8s.io/queue-name: session`).
pub const LOCAL_QUEUE: &str = app::model::KUEUE_LOCAL_QUEUE;

/// The session's ClusterQueue: named as its namespace (cluster-wide unique,
/// one per booking).
pub fn cluster_queue_name(session: &Session) -> String {
    session.namespace()
}

/// A pool's cohort: its sessions' queues may reclaim from each other only
/// what they lent, never borrow (`borrowingLimit: 0`).
pub fn cohort(session: &Session) -> String {
    format!("berth-pool-{}", &session.pool_id.simple().to_string()[..8])
}

/// One ResourceFlavor per pool and kind: `berth-<pool>-<kind>`, e.g.
/// `berth-861c3a7c-mig-1g.24gb` (a DNS subdomain: dots allowed).
pub fn flavor_name(session: &Session) -> String {
    let kind = session.kind.kind.rsplit('/').next().unwrap_or("gpu");
    format!("{}-{kind}", cohort(session).replacen("berth-pool-", "berth-", 1))
}

/// Labels of the cluster-scoped objects: Berth's, and for the queue the
/// booking's (the worker collects queues by it).
fn labels(session: &Session, per_booking: bool) -> Value {
    let mut labels = session.labels();
    if !per_booking {
        labels.retain(|key, _| key == super::MANAGED_BY.0);
    }
    json!(labels)
}

/// Where the pool's nodes are: its node selector, and its tolerations.
pub fn resource_flavor(session: &Session) -> Value {
    let tolerations: Vec<Value> =
        session.placement.tolerations.iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect();
    json!({
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": { "name": flavor_name(session), "labels": labels(session, false) },
        "spec": { "nodeLabels": session.placement.node_selector, "tolerations": tolerations },
    })
}

/// The booked kind's units × time-slice replicas (the ResourceQuota's
/// number), and CPU, memory and ephemeral storage as the quota grants them
/// (Kueue counts the LimitRange's defaults into a Job's requests, and a
/// resource no queue covers is never admitted), admitted only from
/// the session's namespace (the API server's immutable
/// `kubernetes.io/metadata.name` label).
pub fn cluster_queue(session: &Session) -> Value {
    let q = i64::from(session.quantity);
    let resource = |name: &str, quota: String| json!({ "name": name, "nominalQuota": quota, "borrowingLimit": "0" });
    json!({
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": { "name": cluster_queue_name(session), "labels": labels(session, true) },
        "spec": {
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": session.namespace() } },
            "cohortName": cohort(session),
            "resourceGroups": [{
                "coveredResources": [session.kind.kind.as_str(), "cpu", "memory", "ephemeral-storage"],
                "flavors": [{
                    "name": flavor_name(session),
                    "resources": [
                        resource(&session.kind.kind, session.schedulable_units().to_string()),
                        resource("cpu", cpu(q * i64::from(session.kind.cpu_millis_per_unit))),
                        resource("memory", memory(q * i64::from(session.kind.memory_mib_per_unit))),
                        resource("ephemeral-storage", format!("{}Gi", q * i64::from(session.kind.storage_gib_per_unit))),
                    ],
                }],
            }],
            // The session takes back what it lent at once.
            "preemption": { "reclaimWithinCohort": "Any", "withinClusterQueue": "Never" },
            "stopPolicy": "None",
        },
    })
}

pub fn local_queue(session: &Session) -> Value {
    json!({
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": { "name": LOCAL_QUEUE, "namespace": session.namespace(), "labels": labels(session, true) },
        "spec": { "clusterQueue": cluster_queue_name(session) },
    })
}
