use super::{cpu, memory, meta, typed, Cluster, Session};
use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota};
use serde_json::json;
use std::collections::BTreeMap;

/// Object counts a session may hold; generous for notebooks, closed for
/// anything that would expose the namespace outside the cluster.
/// Ingresses and Routes are capped too: each may only publish the session's
/// own host (admission policy), but every one costs the ingress controller.
const OBJECT_COUNTS: [(&str, &str); 10] = [
    ("pods", "20"),
    ("services", "5"),
    ("services.loadbalancers", "0"),
    ("services.nodeports", "0"),
    ("persistentvolumeclaims", "4"),
    ("secrets", "20"),
    ("configmaps", "20"),
    ("replicationcontrollers", "0"),
    ("count/ingresses.networking.k8s.io", "5"),
    ("count/routes.route.openshift.io", "5"),
];

/// Workload objects a session may hold per booked unit: every one is
/// stored in etcd for the whole cluster, and each controller-made kind
/// (ReplicaSets, Jobs' pods, EndpointSlices, Events) multiplies. Room for a
/// notebook's usual work, not for filling the control plane: sixty empty
/// Deployments were admitted before these (issue 33).
const OBJECT_COUNTS_PER_UNIT: [(&str, i64); 10] = [
    ("count/deployments.apps", 10),
    // Each Deployment keeps up to 10 old ReplicaSets (revisionHistoryLimit).
    ("count/replicasets.apps", 50),
    ("count/statefulsets.apps", 5),
    ("count/jobs.batch", 50),
    ("count/cronjobs.batch", 5),
    ("count/horizontalpodautoscalers.autoscaling", 5),
    ("count/serviceaccounts", 10),
    ("count/endpoints", 10),
    ("count/endpointslices.discovery.k8s.io", 20),
    ("count/poddisruptionbudgets.policy", 5),
];

/// The quota: the booked units × time-slice replicas of the booked kind,
/// zero of every other GPU kind any pool offers and of `--deny-resources`,
/// CPU, memory and ephemeral storage as the pool grants per unit,
/// persistent storage for the worker's claims, and object counts. Extended resources only take
/// `requests.` quotas (they cannot be overcommitted).
pub fn resource_quota(session: &Session, cluster: &Cluster) -> ResourceQuota {
    let q = i64::from(session.quantity);
    let grant = &session.kind;
    let cpu = cpu(q * i64::from(grant.cpu_millis_per_unit));
    let memory = memory(q * i64::from(grant.memory_mib_per_unit));
    let storage = format!("{}Gi", q * i64::from(grant.storage_gib_per_unit));
    // Persistent storage: exactly the worker's own claims. The real API
    // server refused the model cache when this was the booked storage alone
    // (home already filled it). The user cannot delete or resize those two
    // claims (berth-session-guardrails), so the cache's share never becomes
    // room for claims of their own.
    let claimed: i64 = super::workspace::claims(session).iter().map(|(_, gib)| gib).sum();
    let mut hard: BTreeMap<String, String> = BTreeMap::new();
    hard.insert(format!("requests.{}", grant.kind), session.schedulable_units().to_string());
    for other in session.other_kinds.iter().chain(&cluster.deny_resources).filter(|k| **k != grant.kind) {
        hard.insert(format!("requests.{other}"), "0".into());
    }
    for key in ["requests.cpu", "limits.cpu"] {
        hard.insert(key.into(), cpu.clone());
    }
    for key in ["requests.memory", "limits.memory"] {
        hard.insert(key.into(), memory.clone());
    }
    for key in ["requests.ephemeral-storage", "limits.ephemeral-storage"] {
        hard.insert(key.into(), storage.clone());
    }
    hard.insert("requests.storage".into(), format!("{claimed}Gi"));
    for (key, value) in OBJECT_COUNTS {
        hard.insert(key.into(), value.into());
    }
    for (key, per_unit) in OBJECT_COUNTS_PER_UNIT {
        hard.insert(key.into(), (per_unit * q).to_string());
    }
    typed(json!({
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": meta(session, "berth-session"),
        "spec": { "hard": hard },
    }))
}

/// Defaults so that a bare `kubectl run` fits inside the quota: a small
/// share of one unit's CPU and memory unless the pod asks for more.
pub fn limit_range(session: &Session) -> LimitRange {
    let grant = &session.kind;
    let (millis, mib) =
        (i64::from(grant.cpu_millis_per_unit / 4).max(100), i64::from(grant.memory_mib_per_unit / 4).max(256));
    let request = json!({ "cpu": cpu(millis / 2), "memory": memory(mib / 2), "ephemeral-storage": "1Gi" });
    let limit = json!({ "cpu": cpu(millis), "memory": memory(mib), "ephemeral-storage": "2Gi" });
    typed(json!({
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": meta(session, "berth-defaults"),
        "spec": { "limits": [{ "type": "Container", "default": limit, "defaultRequest": request }] },
    }))
}
