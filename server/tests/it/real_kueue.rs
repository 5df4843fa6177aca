//! `--kueue` with the real Kueue controller (../shared/envtest/kueue.xz,
//! started beside the real API server by `.ci/kube-stack.sh kueue`): what
//! users rely on. A Job in the session's queue asking for the booked units
//! is admitted; one beyond the booking waits with Kueue's reason; at the
//! window's end HoldAndDrain evicts and both queues go, no finalizer stuck.
//! With a lending kind, a backfill Job runs on the idle booked units and is
//! preempted the moment the owner submits work; a kind that does not lend
//! lends nothing to any queue of its cohort.

use crate::common;

use axum::http::Method;
use common::kube_stack::As;
use common::world::{lab_node_labels, world, World};
use common::MIG;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::{json, Value};
use server::provisioner::manifests::kueue::{self, BACKFILL_QUEUE, KUEUE_API, LOCAL_QUEUE};
use server::provisioner::manifests::{self, Cluster};
use server::provisioner::snapshot::resource;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A batch Job for the session's queue, as its user would write it: on the
/// pool's nodes, asking for `units` of the booked kind.
fn job(name: &str, units: i32) -> Job {
    job_in(LOCAL_QUEUE, name, units, &lab_node_labels())
}

/// A Job for `queue` on nodes labelled `nodes`.
fn job_in(queue: &str, name: &str, units: i32, nodes: &BTreeMap<String, String>) -> Job {
    let request = json!({ MIG: units.to_string(), "cpu": "1", "memory": "1Gi" });
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": { "name": name, "labels": { "kueue.x-k8s.io/queue-name": queue } },
        "spec": { "suspend": true, "template": { "spec": {
            "restartPolicy": "Never",
            "nodeSelector": nodes,
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
    no_one_borrows_from_a_kind_that_does_not_lend(&w, &ns).await;

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

/// The session's kind does not lend: its queue says `lendingLimit: 0` on
/// every resource, and a queue of the same cohort with no quota of its own
/// (for Kueue, unset limits lend everything unused) borrows none of the idle
/// booked units. Before the fix this Job was admitted on ada's booking.
async fn no_one_borrows_from_a_kind_that_does_not_lend(w: &World, ns: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let queues: Api<DynamicObject> = Api::all_with(w.admin.clone(), &resource(KUEUE_API, "ClusterQueue"));
    let session = serde_json::to_value(queues.get(ns).await.unwrap()).unwrap();
    let resources = session["spec"]["resourceGroups"][0]["flavors"][0]["resources"].as_array().unwrap().clone();
    assert_eq!(resources.len(), 4);
    assert!(resources.iter().all(|r| r["lendingLimit"] == "0"), "lends nothing: {resources:?}");
    let flavor = session["spec"]["resourceGroups"][0]["flavors"][0]["name"].clone();
    let nothing = |name: &str| json!({ "name": name, "nominalQuota": "0" });
    let borrower: DynamicObject = serde_json::from_value(json!({ "apiVersion": KUEUE_API, "kind": "ClusterQueue",
        "metadata": { "name": "borrower" },
        "spec": { "cohortName": session["spec"]["cohortName"], "namespaceSelector": {},
            "resourceGroups": [{ "coveredResources": [MIG, "cpu", "memory", "ephemeral-storage"],
                "flavors": [{ "name": flavor, "resources":
                    [nothing(MIG), nothing("cpu"), nothing("memory"), nothing("ephemeral-storage")] }] }] } }))
    .unwrap();
    queues.create(&PostParams::default(), &borrower).await.unwrap();
    let namespaces: Api<Namespace> = Api::all(w.admin.clone());
    let borrowers: Namespace = serde_json::from_value(json!({ "metadata": { "name": "borrowers" } })).unwrap();
    namespaces.create(&PostParams::default(), &borrowers).await.unwrap();
    let local: DynamicObject = serde_json::from_value(json!({ "apiVersion": KUEUE_API, "kind": "LocalQueue",
        "metadata": { "name": "borrow", "namespace": "borrowers" }, "spec": { "clusterQueue": "borrower" } }))
    .unwrap();
    let locals: Api<DynamicObject> =
        Api::namespaced_with(w.admin.clone(), "borrowers", &resource(KUEUE_API, "LocalQueue"));
    locals.create(&PostParams::default(), &local).await.unwrap();
    let theirs: Api<Job> = Api::namespaced(w.admin.clone(), "borrowers");
    theirs.create(&PostParams::default(), &job_in("borrow", "borrowed", 1, &lab_node_labels())).await.unwrap();
    until("Kueue's refusal to lend ada's idle units", || async {
        workload(&w.admin, "borrowers", "borrowed").await.is_some_and(|wl| {
            condition(&wl, "QuotaReserved").is_some_and(|c| {
                c["status"] == "False" && c["message"].as_str().is_some_and(|m| m.contains("insufficient"))
            })
        })
    })
    .await;
    assert_eq!(theirs.get("borrowed").await.unwrap().spec.and_then(|s| s.suspend), Some(true));
    theirs.delete("borrowed", &Default::default()).await.unwrap();
    locals.delete("borrow", &Default::default()).await.unwrap();
    queues.delete("borrower", &Default::default()).await.unwrap();
}

/// dora, with the built-in `edit` role in the backfill namespace.
async fn backfill_user(w: &World) -> kube::Client {
    let binding: DynamicObject = serde_json::from_value(json!({ "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding", "metadata": { "name": "dora-edit", "namespace": "batch-backfill" },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit" },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "dora@a.test" }] }))
    .unwrap();
    let bindings: Api<DynamicObject> = Api::namespaced_with(
        w.admin.clone(),
        "batch-backfill",
        &resource("rbac.authorization.k8s.io/v1", "RoleBinding"),
    );
    if bindings.get_opt("dora-edit").await.unwrap().is_none() {
        bindings.create(&PostParams::default(), &binding).await.unwrap();
    }
    w.stack.client(As::User("dora@a.test")).await
}

/// As dora, dry runs: what reached past the lending before the namespace
/// was marked is refused, each with its reason. (The legitimate Job runs
/// in the test itself.)
async fn the_backfill_namespace_has_guard_rails(dora: &kube::Client, nodes: &BTreeMap<String, String>) {
    let dry = PostParams { dry_run: true, ..PostParams::default() };
    let create = |object: Value| {
        let (dora, dry) = (dora.clone(), dry.clone());
        async move {
            let kind = object["kind"].as_str().unwrap().to_string();
            let api_version = object["apiVersion"].as_str().unwrap().to_string();
            let api: Api<DynamicObject> = Api::namespaced_with(dora, "batch-backfill", &resource(&api_version, &kind));
            match api.create(&dry, &serde_json::from_value(object).unwrap()).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(status)) => Err(status.message),
                Err(other) => panic!("{other}"),
            }
        }
    };
    let mut long_grace = serde_json::to_value(job_in(BACKFILL_QUEUE, "held", 2, nodes)).unwrap();
    long_grace["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(86400);
    let template = serde_json::to_value(job_in(BACKFILL_QUEUE, "x", 2, nodes)).unwrap()["spec"]["template"].clone();
    let mut pod_template = template.clone();
    pod_template["metadata"] = json!({ "labels": { "app": "serve" } });
    pod_template["spec"]["restartPolicy"] = json!("Always");
    let deployment = json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "serve" },
        "spec": { "selector": { "matchLabels": { "app": "serve" } }, "template": pod_template } });
    let bare = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "bare" }, "spec": template["spec"] });
    let elsewhere = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "off" },
        "spec": { "nodeSelector": { "berth.io/pool": "another" }, "containers": [{ "name": "c", "image": "busybox" }] } });
    let mut critical = serde_json::to_value(job_in(BACKFILL_QUEUE, "critical", 1, nodes)).unwrap();
    critical["spec"]["template"]["spec"]["priorityClassName"] = json!("system-node-critical");
    for (case, object, said) in [
        ("a day of grace (the lent GPUs held after preemption)", long_grace, "at most 30 s of termination grace"),
        (
            "a Deployment asking for GPUs outside Kueue",
            deployment,
            "needs the label kueue.x-k8s.io/queue-name=backfill",
        ),
        ("a bare pod asking for GPUs", bare, "only through Kueue's backfill queue"),
        ("a pod off the pool's nodes", elsewhere, "node selector"),
        ("a Job at system-node-critical", critical, "priority class"),
    ] {
        match create(object).await {
            Ok(()) => panic!("should be refused in the backfill namespace: {case}"),
            Err(message) => assert!(message.contains(said), "{case}: expected `{said}` in {message}"),
        }
    }
    let cpu_only = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "cpu" },
        "spec": { "nodeSelector": nodes, "containers": [{ "name": "c", "image": "busybox" }] } });
    assert_eq!(create(cpu_only).await, Ok(()), "work that asks for no GPU is the namespace's own business");
}

async fn suspended(jobs: &Api<Job>, name: &str) -> Option<bool> {
    jobs.get(name).await.unwrap().spec.and_then(|s| s.suspend)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_job_runs_on_idle_booked_units_and_gives_them_back_when_the_owner_submits() {
    let Some((w, _turn)) = world(Cluster { kueue: true, ..Cluster::default() }).await else { return };
    w.stack.with_kueue();
    use k8s_openapi::api::core::v1::Namespace;
    let namespaces: Api<Namespace> = Api::all(w.admin.clone());
    // Lent GPUs must not meet privileged pods: the admin's namespace enforces
    // Pod Security baseline, or the worker does not mark it (berth-worker-scope).
    let batch: Namespace = serde_json::from_value(json!({ "metadata": { "name": "batch-backfill",
        "labels": { "pod-security.kubernetes.io/enforce": "baseline" } } }))
    .unwrap();
    if namespaces.get_opt("batch-backfill").await.unwrap().is_none() {
        namespaces.create(&PostParams::default(), &batch).await.unwrap();
    }
    // A pool whose MIG kind lends (1 unit = 2 time-slice replicas booked).
    let body = json!({ "name": "lending", "backfill_namespace": "batch-backfill",
        "kinds": [{ "kind": MIG, "capacity": 4, "replicas_per_unit": 2, "cpu_millis_per_unit": 4000,
                    "memory_mib_per_unit": 8192, "storage_gib_per_unit": 10, "lend_idle": true }],
        "node_selector": { "berth.io/pool": "lending" }, "images": ["quay.io/jupyter/minimal-notebook:latest"],
        "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }] });
    let (status, pool) = w.f.call(Method::POST, "/api/v1/pools", Some(&w.f.admin), Some(body)).await;
    assert_eq!(status, 201, "{pool}");
    let pool: uuid::Uuid = pool["id"].as_str().unwrap().parse().unwrap();
    let nodes = BTreeMap::from([("berth.io/pool".to_string(), "lending".to_string())]);
    let id = w.book(MIG, 1, "interactive", pool).await;
    w.until_active(id, &nodes).await;
    let report = w.worker.pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let ns = World::namespace(id);

    // The session lends every booked unit; the backfill queue has none of its own.
    let queues: Api<DynamicObject> = Api::all_with(w.admin.clone(), &resource(KUEUE_API, "ClusterQueue"));
    let session = serde_json::to_value(queues.get(&ns).await.unwrap()).unwrap();
    let gpus = &session["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0];
    assert_eq!((gpus["nominalQuota"].as_str(), gpus["lendingLimit"].as_str()), (Some("2"), Some("2")));
    let backfill = serde_json::to_value(queues.get(&kueue::backfill_queue_name(pool)).await.unwrap()).unwrap();
    assert_eq!(backfill["spec"]["cohortName"], session["spec"]["cohortName"]);
    assert_eq!(backfill["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"], "0");
    assert_eq!(backfill["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"], "batch-backfill");

    // Berth's worker cannot point a LocalQueue outside the sessions at a
    // session's queue (berth-worker-backfill-queues answers 422).
    let sneak: DynamicObject = serde_json::from_value(json!({ "apiVersion": KUEUE_API, "kind": "LocalQueue",
        "metadata": { "name": "sneak", "namespace": "batch-backfill",
                      "labels": { "app.kubernetes.io/managed-by": "berth", kueue::BACKFILL_LABEL: pool.to_string() } },
        "spec": { "clusterQueue": ns } }))
    .unwrap();
    let as_worker: Api<DynamicObject> = Api::namespaced_with(
        w.stack.client(common::kube_stack::As::Worker).await,
        "batch-backfill",
        &resource(KUEUE_API, "LocalQueue"),
    );
    match as_worker.create(&PostParams::default(), &sneak).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 422, "{}", status.message),
        other => panic!("the worker pointed a LocalQueue at a session's queue: {other:?}"),
    }

    // The worker marked the namespace, so the guard rails bind it; a user
    // with `edit` there (dora) is refused what would reach past the lending.
    let marked = namespaces.get("batch-backfill").await.unwrap().metadata.labels.unwrap_or_default();
    assert_eq!(marked.get(kueue::BACKFILL_LABEL), Some(&pool.to_string()));
    let dora = backfill_user(&w).await;
    the_backfill_namespace_has_guard_rails(&dora, &nodes).await;

    // Idle booked units: a backfill Job asking for both, with 30 s of grace, runs.
    let backfill_jobs: Api<Job> = Api::namespaced(dora.clone(), "batch-backfill");
    let mut backfill = job_in(BACKFILL_QUEUE, "backfill", 2, &nodes);
    backfill.spec.as_mut().unwrap().template.spec.as_mut().unwrap().termination_grace_period_seconds = Some(30);
    backfill_jobs.create(&PostParams::default(), &backfill).await.unwrap();
    until("the backfill Job admitted on lent units", || async {
        suspended(&backfill_jobs, "backfill").await == Some(false)
    })
    .await;
    // …and its pods pass the namespace's guard rails (made by the Job controller).
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(w.admin.clone(), "batch-backfill");
    until("the backfill Job's pods", || async {
        !pods.list(&ListParams::default().labels("job-name=backfill")).await.unwrap().items.is_empty()
    })
    .await;
    // The worker reads what the backfill borrowed.
    until("the backfill's use in the queue's status", || async {
        w.worker.repair_pass().await.unwrap();
        let units: Option<f64> = sqlx::query_scalar("SELECT units FROM lent_sample WHERE pool_id = $1 AND kind = $2")
            .bind(pool)
            .bind(MIG)
            .fetch_optional(&w.f.db)
            .await
            .unwrap();
        units == Some(2.0)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    w.worker.repair_pass().await.unwrap();
    let lent: f64 = sqlx::query_scalar("SELECT coalesce(sum(unit_seconds), 0) FROM lent_hour WHERE pool_id = $1")
        .bind(pool)
        .fetch_one(&w.f.db)
        .await
        .unwrap();
    assert!(lent >= 2.0, "two units for a second or more: {lent} unit-seconds");

    // The owner submits: the backfill is preempted at once, the owner's Job runs.
    let jobs: Api<Job> = Api::namespaced(w.stack.client(As::User("ada@a.test")).await, &ns);
    jobs.create(&PostParams::default(), &job_in(LOCAL_QUEUE, "mine", 2, &nodes)).await.unwrap();
    until("the owner's Job admitted", || async { suspended(&jobs, "mine").await == Some(false) }).await;
    assert_eq!(suspended(&backfill_jobs, "backfill").await, Some(true), "the backfill gave the units back");
    let evicted = workload(&w.admin, "batch-backfill", "backfill").await.unwrap();
    assert!(condition(&evicted, "Preempted").is_some_and(|c| c["status"] == "True"), "{evicted}");

    // The window ends: the session's queues go, and the backfill is drained
    // with them (Kueue would leave it running on units no one lends any
    // more); the pool's backfill queue stays while the pool lends, and admits
    // again on what is lent, here nothing.
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.until_gone(id, "completed").await;
    assert!(queues.get_opt(&ns).await.unwrap().is_none());
    until("the backfill evicted with its lender gone", || async {
        suspended(&backfill_jobs, "backfill").await == Some(true)
            && workload(&w.admin, "batch-backfill", "backfill")
                .await
                .is_some_and(|wl| condition(&wl, "QuotaReserved").is_some_and(|c| c["status"] == "False"))
    })
    .await;
    until("the backfill queue admitting again", || async {
        w.worker.repair_pass().await.unwrap();
        let queue = queues.get(&kueue::backfill_queue_name(pool)).await.unwrap();
        queue.data["spec"]["stopPolicy"] == "None"
    })
    .await;
    assert_eq!(suspended(&backfill_jobs, "backfill").await, Some(true), "nothing is lent now");

    // The pool stops lending: its backfill queues go, no finalizer stuck.
    let stop = json!({ "backfill_namespace": "", "kinds": [{ "kind": MIG, "capacity": 4, "replicas_per_unit": 2,
        "cpu_millis_per_unit": 4000, "memory_mib_per_unit": 8192, "storage_gib_per_unit": 10 }] });
    let (status, body) = w.f.call(Method::PATCH, &format!("/api/v1/pools/{pool}"), Some(&w.f.admin), Some(stop)).await;
    assert_eq!(status, 200, "{body}");
    until("the backfill queues gone, no finalizer stuck", || async {
        w.worker.repair_pass().await.unwrap();
        queues.get_opt(&kueue::backfill_queue_name(pool)).await.unwrap().is_none()
    })
    .await;
    let local: Api<DynamicObject> =
        Api::namespaced_with(w.admin.clone(), "batch-backfill", &resource(KUEUE_API, "LocalQueue"));
    assert!(local.get_opt(BACKFILL_QUEUE).await.unwrap().is_none());
    let unmarked = namespaces.get("batch-backfill").await.unwrap().metadata;
    assert!(!unmarked.labels.unwrap_or_default().contains_key(kueue::BACKFILL_LABEL), "Berth's marks are gone");
    assert!(!unmarked.annotations.unwrap_or_default().keys().any(|k| k.starts_with("berth.io/")));
    backfill_jobs.delete("backfill", &Default::default()).await.unwrap();
}
