//! A booking as Kueue quota (`--kueue`): the booked units become a
//! ClusterQueue of the session's own, which only the session's namespace
//! may submit to (through the LocalQueue `session` there), in the pool's
//! cohort, never borrowing beyond what was booked. Kueue's v1beta2 API.
//!
//! A kind that lends (`lend_idle`) lets its sessions lend every booked unit
//! to the pool's backfill ClusterQueue (no quota of its own: it runs only
//! on what sessions lend), and a session takes it back the moment its owner
//! submits work (`reclaimWithinCohort: Any` preempts the backfill).

use super::{cpu, memory, Session};
use app::backend::sessions::due::Backfill;
use app::model::Placement;
use serde_json::{json, Value};
use uuid::Uuid;

pub const KUEUE_API: &str = "kueue.x-k8s.io/v1beta2";
/// The LocalQueue users submit batch Jobs to
/// (label `kueue.x-k8s.io/queue-name: session`).
pub const LOCAL_QUEUE: &str = app::model::KUEUE_LOCAL_QUEUE;
/// The LocalQueue of a pool's backfill, in the namespace its admin names.
pub const BACKFILL_QUEUE: &str = app::model::KUEUE_BACKFILL_QUEUE;
/// Marks a pool's backfill queues (value: the pool's id), apart from the
/// sessions' (`berth.io/booking`).
pub const BACKFILL_LABEL: &str = "berth.io/backfill";

/// The session's ClusterQueue: named as its namespace (cluster-wide unique,
/// one per booking).
pub fn cluster_queue_name(session: &Session) -> String {
    session.namespace()
}

fn short(pool: Uuid) -> String {
    pool.simple().to_string()[..8].to_string()
}

/// A pool's cohort: its sessions' queues may reclaim from each other only
/// what they lent, never borrow (`borrowingLimit: 0`).
pub fn cohort(pool: Uuid) -> String {
    format!("berth-pool-{}", short(pool))
}

/// A pool's backfill ClusterQueue.
pub fn backfill_queue_name(pool: Uuid) -> String {
    format!("berth-backfill-{}", short(pool))
}

/// One ResourceFlavor per pool and kind: `berth-<pool>-<kind>`, e.g.
/// `berth-861c3a7c-mig-1g.24gb` (a DNS subdomain: dots allowed).
pub fn flavor_name(pool: Uuid, kind: &str) -> String {
    format!("berth-{}-{}", short(pool), kind.rsplit('/').next().unwrap_or("gpu"))
}

/// Berth's label, and `extra` (the booking's, or the backfill's).
fn labels(extra: &[(&str, String)]) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert(super::MANAGED_BY.0.into(), super::MANAGED_BY.1.into());
    for (key, value) in extra {
        labels.insert((*key).into(), value.clone().into());
    }
    Value::Object(labels)
}

/// The session's own labels (the worker collects its queues by them).
fn session_labels(session: &Session) -> Value {
    json!(session.labels())
}

/// Where the pool's nodes are: its node selector, and its tolerations.
pub fn resource_flavor(pool: Uuid, kind: &str, placement: &Placement) -> Value {
    let tolerations: Vec<Value> =
        placement.tolerations.iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect();
    json!({
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": { "name": flavor_name(pool, kind), "labels": labels(&[]) },
        "spec": { "nodeLabels": placement.node_selector, "tolerations": tolerations },
    })
}

pub fn session_flavor(session: &Session) -> Value {
    resource_flavor(session.pool_id, &session.kind.kind, &session.placement)
}

/// The booked kind's units × time-slice replicas (the ResourceQuota's
/// number), and CPU, memory and ephemeral storage as the quota grants them
/// (Kueue counts the LimitRange's defaults into a Job's requests, and a
/// resource no queue covers is never admitted), admitted only from
/// the session's namespace (the API server's immutable
/// `kubernetes.io/metadata.name` label). A lending kind lends all of it,
/// any other nothing.
pub fn cluster_queue(session: &Session) -> Value {
    let q = i64::from(session.quantity);
    let resource = |name: &str, quota: String| {
        // For Kueue an unset lendingLimit means "everything unused may be
        // borrowed" by any queue of the cohort: a kind that does not lend
        // says 0 on every resource.
        let lent = if session.kind.lend_idle { quota.clone() } else { "0".to_string() };
        json!({ "name": name, "nominalQuota": quota, "borrowingLimit": "0", "lendingLimit": lent })
    };
    json!({
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": { "name": cluster_queue_name(session), "labels": session_labels(session) },
        "spec": {
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": session.namespace() } },
            "cohortName": cohort(session.pool_id),
            "resourceGroups": [{
                "coveredResources": [session.kind.kind.as_str(), "cpu", "memory", "ephemeral-storage"],
                "flavors": [{
                    "name": flavor_name(session.pool_id, &session.kind.kind),
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
        "metadata": { "name": LOCAL_QUEUE, "namespace": session.namespace(), "labels": session_labels(session) },
        "spec": { "clusterQueue": cluster_queue_name(session) },
    })
}

/// A pool's backfill: a flavor per lending kind, a ClusterQueue in the
/// pool's cohort with no quota of its own (it borrows only what sessions
/// lend, and never preempts), and its LocalQueue in the admin's namespace.
pub fn backfill(pool: &Backfill) -> Vec<Value> {
    let marker = [(BACKFILL_LABEL, pool.pool_id.to_string())];
    let mut covered: Vec<&str> = pool.kinds.iter().map(String::as_str).collect();
    covered.extend(["cpu", "memory", "ephemeral-storage"]);
    let flavors: Vec<Value> = pool
        .kinds
        .iter()
        .map(|kind| {
            let resources: Vec<Value> =
                covered.iter().map(|name| json!({ "name": name, "nominalQuota": "0" })).collect();
            json!({ "name": flavor_name(pool.pool_id, kind), "resources": resources })
        })
        .collect();
    let mut objects: Vec<Value> =
        pool.kinds.iter().map(|kind| resource_flavor(pool.pool_id, kind, &pool.placement)).collect();
    objects.push(json!({
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": { "name": backfill_queue_name(pool.pool_id), "labels": labels(&marker) },
        "spec": {
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": pool.namespace } },
            "cohortName": cohort(pool.pool_id),
            "resourceGroups": [{ "coveredResources": covered, "flavors": flavors }],
            "preemption": { "reclaimWithinCohort": "Never", "withinClusterQueue": "Never" },
            "stopPolicy": "None",
        },
    }));
    objects.push(json!({
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": { "name": BACKFILL_QUEUE, "namespace": pool.namespace, "labels": labels(&marker) },
        "spec": { "clusterQueue": backfill_queue_name(pool.pool_id) },
    }));
    objects
}

/// The session's ClusterQueue is cluster-scoped, so reading it takes a
/// ClusterRole of its own: `berth-queue-reader:<namespace>`, naming that one
/// queue (berth-worker-scope lets the worker write no other kind of
/// ClusterRole, and bind nothing else by such a name).
pub fn queue_reader_name(session: &Session) -> String {
    format!("{QUEUE_READER_PREFIX}{}", session.namespace())
}

pub const QUEUE_READER_PREFIX: &str = "berth-queue-reader:";

pub fn queue_reader_role(session: &Session) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": { "name": queue_reader_name(session), "labels": session_labels(session) },
        "rules": [{ "apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"],
                    "resourceNames": [cluster_queue_name(session)], "verbs": ["get", "watch"] }],
    })
}

/// The session's holders (owner and co-owners), as in its RoleBindings.
pub fn queue_reader_binding(session: &Session) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": { "name": queue_reader_name(session), "labels": session_labels(session) },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": queue_reader_name(session) },
        "subjects": super::access::subjects(session),
    })
}
