//! `--kueue` with the real Kueue controller (../shared/envtest/kueue.xz,
//! started beside the real API server by `.ci/kube-stack.sh kueue`): what
//! users rely on. A Job in the session's queue asking for the booked units
//! is admitted; one beyond the booking waits with Kueue's reason; at the
//! window's end HoldAndDrain evicts and both queues go, no finalizer stuck.

mod common;

use axum::http::Method;
use common::kube_stack::As;
use common::world::{lab_node_labels, world, World};
use common::MIG;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::{json, Value};
use server::worker::manifests::kueue::{KUEUE_API, LOCAL_QUEUE};
use server::worker::manifests::{self, Cluster};
use server::worker::snapshot::resource;
use std::time::{Duration, Instant};

/// A batch Job for the session's queue, as its user would write it: on the
/// pool's nodes, asking for `units` of the booked kind.
fn job(name: &str, units: i32) -> Job {
    let request = json!({ MIG: units.to_string(), "cpu": "1", "memory": "1Gi" });
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": { "name": name, "labels": { "kueue.x-k8s.io/queue-name": LOCAL_QUEUE } },
        "spec": { "suspend": true, "template": { "spec": {
            "restartPolicy": "Never",
            "nodeSelector": lab_node_labels(),
            "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
            "containers": [{ "name": "train", "image": "busybox", "command": ["true"],
                "resources": { "requests": request, "limits": request } }],
        } } },
    }))
    .unwrap()
}

/// The Workload Kueue made for `job`, as JSON.
async fn workload(admin: &kube::Client, namespace: &str, job: &str) -> Option<Value> {
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), namespace, &resource(KUEUE_API, "Workload"));
    let all = api.list(&ListParams::default()).await.unwrap().items;
    all.into_iter().map(|w| serde_json::to_value(w).unwrap()).find(|w| {
        w["metadata"]["ownerReferences"].as_array().is_some_and(|owners| owners.iter().any(|o| o["name"] == job))
    })
}

fn condition<'a>(workload: &'a Value, kind: &str) -> Option<&'a Value> {
    workload["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == kind)
}

async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "{what} within 60 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kueue_admits_what_was_booked_holds_the_rest_and_lets_the_queues_go_at_the_end() {
    let Some((w, _turn)) = world(Cluster { kueue: true, ..Cluster::default() }).await else { return };
    w.stack.with_kueue();
    let id = w.book(MIG, 1, "interactive", w.f.lab).await;
    w.until_active(id, &lab_node_labels()).await;
    let ns = World::namespace(id);
    let jobs: Api<Job> = Api::namespaced(w.stack.client(As::User("ada@a.test")).await, &ns);

    // One unit × 2 time-slice replicas is what was booked: a Job asking for both runs.
    jobs.create(&PostParams::default(), &job("fits", 2)).await.expect("the user submits a Job");
    until("the Job that fits admitted", || async {
        jobs.get("fits").await.unwrap().spec.and_then(|s| s.suspend) == Some(false)
    })
    .await;
    // One more is beyond the booking: it waits, and Kueue says why.
    jobs.create(&PostParams::default(), &job("beyond", 1)).await.unwrap();
    until("Kueue's reason for the Job beyond the booking", || async {
        workload(&w.admin, &ns, "beyond").await.is_some_and(|wl| {
            condition(&wl, "QuotaReserved").is_some_and(|c| {
                c["status"] == "False" && c["message"].as_str().is_some_and(|m| m.contains("insufficient"))
            })
        })
    })
    .await;
    assert_eq!(jobs.get("beyond").await.unwrap().spec.and_then(|s| s.suspend), Some(true));

    // The window ends: HoldAndDrain evicts, the queues and the namespace go.
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.until_gone(id, "completed").await;
    let queues: Api<DynamicObject> = Api::all_with(w.admin.clone(), &resource(KUEUE_API, "ClusterQueue"));
    let params = ListParams::default().labels(&manifests::managed_selector());
    until("the ClusterQueue gone, no finalizer stuck", || async {
        queues.list(&params).await.unwrap().items.is_empty()
    })
    .await;
}
