//! Bookings driving the cluster's own schedulers, on a real API server with
//! Kueue's and the cluster autoscaler's CRDs, the worker as deploy/'s
//! `berth-worker` and the session user impersonated.
//!
//! `--kueue`: each session gets a ClusterQueue of its own holding exactly
//! its quota, only its namespace may use it, the user can read but not
//! change it, and nothing outlives the window or a canceled booking.
//! `--scale-ahead`: room for the booked units is held in Berth's namespace
//! before a window opens, and let go when the session runs or the booking
//! is canceled.

use crate::common;

use axum::http::Method;
use common::kube_stack::As;
use common::world::{lab_node_labels, world, World};
use common::{slot, GPU, MIG};
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use server::provisioner::manifests::ahead::{AheadMode, ScaleAhead};
use server::provisioner::manifests::kueue::{self, KUEUE_API, LOCAL_QUEUE};
use server::provisioner::manifests::{self, Cluster};
use server::provisioner::reconcile::{Policy, Reconciler};
use server::provisioner::snapshot::resource;
use uuid::Uuid;

fn queues(client: &kube::Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &resource(KUEUE_API, "ClusterQueue"))
}

fn local_queues(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &resource(KUEUE_API, "LocalQueue"))
}

/// Berth's ClusterQueues by the booking they belong to.
async fn berths_queues(admin: &kube::Client) -> Vec<(String, String)> {
    let params = ListParams::default().labels(&manifests::managed_selector());
    let listed = queues(admin).list(&params).await.unwrap().items;
    listed
        .into_iter()
        .map(|q| {
            let booking = q.metadata.labels.as_ref().and_then(|l| l.get(manifests::BOOKING_LABEL)).cloned();
            (q.metadata.name.unwrap_or_default(), booking.unwrap_or_default())
        })
        .collect()
}

/// The status code of a refusal.
fn refused<T: std::fmt::Debug>(outcome: Result<T, kube::Error>) -> u16 {
    refusal(outcome).0
}

/// The status code and message of a refusal.
fn refusal<T: std::fmt::Debug>(outcome: Result<T, kube::Error>) -> (u16, String) {
    match outcome {
        Err(kube::Error::Api(status)) => (status.code, status.message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_is_a_cluster_queue_of_its_own_that_the_user_reads_and_that_ends_with_it() {
    let Some((w, _turn)) = world(Cluster { kueue: true, ..Cluster::default() }).await else { return };
    let mig = w.book(MIG, 1, "interactive", w.f.lab).await;
    w.until_active(mig, &lab_node_labels()).await;
    let ns = World::namespace(mig);

    // The queue holds what the quota holds, for this namespace alone.
    let quota: ResourceQuota = Api::namespaced(w.admin.clone(), &ns).get("berth-session").await.unwrap();
    let units = quota.spec.unwrap().hard.unwrap()[&format!("requests.{MIG}")].0.clone();
    let queue = serde_json::to_value(queues(&w.admin).get(&ns).await.unwrap()).unwrap();
    let resources = &queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"];
    assert_eq!(
        (resources[0]["name"].as_str(), resources[0]["nominalQuota"].as_str()),
        (Some(MIG), Some(units.as_str()))
    );
    assert_eq!(queue["spec"]["namespaceSelector"]["matchLabels"], json!({ "kubernetes.io/metadata.name": ns }));
    let namespace: Namespace = Api::all(w.admin.clone()).get(&ns).await.unwrap();
    assert_eq!(namespace.metadata.labels.unwrap()["kubernetes.io/metadata.name"], ns, "the API server's own label");
    let local = serde_json::to_value(local_queues(&w.admin, &ns).get(LOCAL_QUEUE).await.unwrap()).unwrap();
    assert_eq!(local["spec"]["clusterQueue"], ns);
    let flavor = queue["spec"]["resourceGroups"][0]["flavors"][0]["name"].as_str().unwrap().to_string();
    let flavors: Api<DynamicObject> = Api::all_with(w.admin.clone(), &resource(KUEUE_API, "ResourceFlavor"));
    let flavor_object = serde_json::to_value(flavors.get(&flavor).await.unwrap()).unwrap();
    assert_eq!(flavor_object["spec"]["nodeLabels"], json!(lab_node_labels()));

    // The session's card tells how to submit batch Jobs to it.
    let mode = app::model::ClusterMode { simulated: false, kueue: true };
    let portal = server::router(common::test_state(w.f.db.clone()).with_cluster(
        Cluster::default(),
        mode,
        server::provisioner::cluster_clients::ClusterClients::single(w.admin.clone()),
    ));
    let request = axum::http::Request::get("/bookings?tz=UTC")
        .header(axum::http::header::AUTHORIZATION, format!("Bearer {}", w.f.ada))
        .body(axum::body::Body::empty())
        .unwrap();
    let (status, page) = common::raw(&portal, request).await;
    assert_eq!(status, 200);
    let page = page.as_str().unwrap();
    let card = &page[page.find(&format!("booking-{mig}")).expect("the live card")..];
    let told = card.find(r#"class="batch-queue""#).map(|at| &card[at..]).unwrap_or_default();
    assert!(told.contains("label them <code>kueue.x-k8s.io/queue-name: session"), "{card}");

    // A converged pass writes nothing, Kueue's objects included.
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 0, "{report:?}");

    // A second session of the same pool gets its own pair.
    let whole = w.book(GPU, 1, "interactive", w.f.lab).await;
    w.until_active(whole, &lab_node_labels()).await;
    let mut named: Vec<String> = berths_queues(&w.admin).await.into_iter().map(|(name, _)| name).collect();
    named.sort();
    let mut expected = vec![ns.clone(), World::namespace(whole)];
    expected.sort();
    assert_eq!(named, expected);

    // The session user reads their queues but can change none of it, and
    // no one else reads them.
    let user = w.stack.client(As::User("ada@a.test")).await;
    local_queues(&user, &ns).get(LOCAL_QUEUE).await.expect("the user reads the session's LocalQueue");
    let read = queues(&user).get(&ns).await.expect("the user reads the session's ClusterQueue");
    assert_eq!(read.data["spec"]["cohortName"], queue["spec"]["cohortName"]);
    let colleague = w.stack.client(As::User("carol@a.test")).await;
    assert_eq!(refused(queues(&colleague).get(&ns).await), 403, "someone else's session's queue");
    assert_eq!(refused(queues(&user).list(&ListParams::default()).await), 403, "every queue of the cluster");
    // Nor widen the reader Berth made for them.
    let own_reader: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(user.clone());
    let widen = Patch::Merge(json!({ "rules": [{ "apiGroups": ["*"], "resources": ["*"], "verbs": ["*"] }] }));
    let reader = format!("{}{ns}", kueue::QUEUE_READER_PREFIX);
    assert_eq!(refused(own_reader.patch(&reader, &PatchParams::default(), &widen).await), 403, "their reader");
    // Nor can the worker's account use the readers' ClusterRoles to grant more.
    let worker = w.stack.client(As::Worker).await;
    let labels = json!({ "app.kubernetes.io/managed-by": "berth", manifests::BOOKING_LABEL: mig.to_string() });
    let wider: k8s_openapi::api::rbac::v1::ClusterRole = serde_json::from_value(json!({
        "metadata": { "name": format!("{}wider", kueue::QUEUE_READER_PREFIX), "labels": labels },
        "rules": [{ "apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get", "list"] }] }))
    .unwrap();
    let (code, message) = refusal(Api::all(worker.clone()).create(&PostParams::default(), &wider).await);
    assert_eq!(code, 422, "every queue, not one by name: {message}");
    let admin_binding: k8s_openapi::api::rbac::v1::ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": { "name": format!("{}{ns}x", kueue::QUEUE_READER_PREFIX), "labels": labels },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "berth-session-user" },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ada@a.test" }] }))
    .unwrap();
    let (code, message) = refusal(Api::all(worker.clone()).create(&PostParams::default(), &admin_binding).await);
    assert_eq!(code, 422, "a reader's name bound to another role: {message}");
    let raise = Patch::Merge(json!({ "spec": { "resourceGroups": [{ "coveredResources": [MIG], "flavors": [{
        "name": flavor, "resources": [{ "name": MIG, "nominalQuota": "64" }] }] }] } }));
    assert_eq!(refused(queues(&user).patch(&ns, &PatchParams::default(), &raise).await), 403);
    let mut own: DynamicObject = serde_json::from_value(kueue::cluster_queue(&manifests::Session {
        booking_id: Uuid::new_v4(),
        ..manifests::Session::of(app::backend::sessions::facts::facts(&w.f.db, mig).await.unwrap())
    }))
    .unwrap();
    own.metadata.labels = None;
    assert_eq!(refused(queues(&user).create(&PostParams::default(), &own).await), 403, "no queue of their own");
    let elsewhere: DynamicObject = serde_json::from_value(json!({ "apiVersion": KUEUE_API, "kind": "LocalQueue",
        "metadata": { "name": "borrowed", "namespace": ns },
        "spec": { "clusterQueue": World::namespace(whole) } }))
    .unwrap();
    let made = local_queues(&user, &ns).create(&PostParams::default(), &elsewhere).await;
    assert_eq!(refused(made), 403, "no LocalQueue pointing at another session's ClusterQueue");
    // Nor may Berth's worker touch a ClusterQueue that is not Berth's.
    let theirs: DynamicObject = serde_json::from_value(json!({ "apiVersion": KUEUE_API, "kind": "ClusterQueue",
        "metadata": { "name": "team-research" }, "spec": { "namespaceSelector": {} } }))
    .unwrap();
    queues(&w.admin).create(&PostParams::default(), &theirs).await.unwrap();
    let drain = Patch::Merge(json!({ "spec": { "stopPolicy": "HoldAndDrain" } }));
    // (berth-worker-scope refuses: an admission policy's answer is 422.)
    for (code, message) in [
        refusal(queues(&worker).patch("team-research", &PatchParams::default(), &drain).await),
        refusal(queues(&worker).delete("team-research", &Default::default()).await),
    ] {
        assert_eq!(code, 422, "{message}");
        assert!(message.contains("only Berth's own Kueue queues and flavors"), "{message}");
    }

    // Ended and canceled: nothing of either is left, the other team's queue is.
    for id in [mig, whole] {
        let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
        assert_eq!(status, 200, "{body}");
        w.until_gone(id, "completed").await;
    }
    assert_eq!(berths_queues(&w.admin).await, Vec::<(String, String)>::new());
    assert!(local_queues(&w.admin, &ns).get_opt(LOCAL_QUEUE).await.unwrap().is_none());
    let readers: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(w.admin.clone());
    let reader = format!("{}{ns}", kueue::QUEUE_READER_PREFIX);
    assert!(readers.get_opt(&reader).await.unwrap().is_none(), "the reader of the queue goes with it");
    let body = json!({ "pool_id": w.f.lab, "kind": MIG, "quantity": 1, "start": slot(8), "end": slot(12), "mode": "interactive" });
    let (status, later) = w.f.call(Method::POST, "/api/v1/bookings", Some(&w.f.ada), Some(body)).await;
    assert_eq!(status, 201, "{later}");
    let later = later["id"].as_str().unwrap();
    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{later}/cancel"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.worker.pass().await.unwrap();
    assert_eq!(berths_queues(&w.admin).await, Vec::<(String, String)>::new(), "a canceled booking leaves nothing");
    assert!(queues(&w.admin).get_opt("team-research").await.unwrap().is_some());
    queues(&w.admin).delete("team-research", &Default::default()).await.unwrap();
}

/// A booked window's room in Berth's namespace: `kind` named `name`.
async fn held(admin: &kube::Client, api_version: &str, kind: &str, name: &str) -> Option<serde_json::Value> {
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), "berth", &resource(api_version, kind));
    api.get_opt(name).await.unwrap().map(|found| serde_json::to_value(found).unwrap())
}

fn ahead_of(mode: AheadMode) -> ScaleAhead {
    ScaleAhead { lead: chrono::Duration::minutes(30), mode, pause_image: "registry.k8s.io/pause:3.10".into() }
}

async fn book_at(w: &World, quantity: i32, start: i64, end: i64) -> String {
    let body = json!({ "pool_id": w.f.lab, "kind": MIG, "quantity": quantity, "start": slot(start), "end": slot(end),
        "mode": "interactive" });
    let (status, booked) = w.f.call(Method::POST, "/api/v1/bookings", Some(&w.f.ada), Some(body)).await;
    assert_eq!(status, 201, "{booked}");
    booked["id"].as_str().unwrap().to_string()
}

async fn cancel(w: &World, id: &str) {
    let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/cancel"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200, "{body}");
}

fn room(id: &str) -> String {
    format!("berth-ahead-{}", &id.replace('-', "")[..8])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_is_held_ahead_of_a_window_until_its_session_runs_and_never_for_a_canceled_booking() {
    let cluster = Cluster { scale_ahead: Some(ahead_of(AheadMode::CapacityBuffer)), ..Cluster::default() };
    let Some((w, _turn)) = world(cluster).await else { return };
    const BUFFERS: &str = "autoscaling.x-k8s.io/v1beta1";

    // Opening within the lead time (30 min): two units' room, before it opens.
    let later = book_at(&w, 2, 1, 4).await;
    w.worker.pass().await.unwrap();
    let buffer = held(&w.admin, BUFFERS, "CapacityBuffer", &room(&later)).await.expect("a CapacityBuffer");
    assert_eq!(
        buffer["spec"],
        json!({ "podTemplateRef": { "name": room(&later) }, "replicas": 2,
                "provisioningStrategy": "buffer.x-k8s.io/active-capacity" })
    );
    assert_eq!(buffer["metadata"]["labels"][manifests::BOOKING_LABEL], later.as_str());
    let template = held(&w.admin, "v1", "PodTemplate", &room(&later)).await.expect("its PodTemplate");
    let pod = &template["template"]["spec"];
    assert_eq!(pod["nodeSelector"], json!(lab_node_labels()));
    // One physical unit of the kind: its time-slice replicas (2 on the demo pool).
    assert_eq!(pod["containers"][0]["resources"]["requests"][MIG], "2");
    // A converged pass writes nothing more.
    assert_eq!(w.worker.pass().await.unwrap().applied, 0);
    // Canceled: its room goes at the next pass.
    cancel(&w, &later).await;
    w.worker.pass().await.unwrap();
    assert!(held(&w.admin, BUFFERS, "CapacityBuffer", &room(&later)).await.is_none());
    assert!(held(&w.admin, "v1", "PodTemplate", &room(&later)).await.is_none());

    // The pool's own lead time: 75 minutes reaches a window opening in 45 to
    // 60, beyond the site's 30; 0 holds none for the pool.
    let far = book_at(&w, 1, 3, 5).await;
    let (world, far_room) = (&w, room(&far));
    let far_room = &far_room;
    let lead = |minutes: i32| async move {
        let body = json!({ "scale_ahead_minutes": minutes });
        let pool = format!("/api/v1/pools/{}", world.f.lab);
        let (status, answer) = world.f.call(Method::PATCH, &pool, Some(&world.f.admin), Some(body)).await;
        assert_eq!(status, 200, "{answer}");
        world.worker.pass().await.unwrap();
        held(&world.admin, BUFFERS, "CapacityBuffer", far_room).await.is_some()
    };
    w.worker.pass().await.unwrap();
    assert!(held(&w.admin, BUFFERS, "CapacityBuffer", far_room).await.is_none(), "beyond the site's lead time");
    assert!(lead(75).await, "within the pool's own");
    assert!(!lead(0).await, "none for the pool");
    assert!(!lead(-1).await, "the site's again");
    cancel(&w, &far).await;

    // Opened a minute ago (placed by hand: the API's windows start on the
    // slot grid, up to 15 minutes back, past the 5 minutes' grace): held while
    // its workspace is not up, let go once its pods are bound and ready.
    let minute_ago = chrono::Utc::now() - chrono::Duration::minutes(1);
    let now = w.f.place(MIG, 1, (minute_ago, minute_ago + chrono::Duration::hours(1)), "approved").await;
    w.worker.pass().await.unwrap();
    assert_eq!(w.state(now).await, "approved", "no kubelet has made its workspace ready yet");
    assert!(held(&w.admin, BUFFERS, "CapacityBuffer", &room(&now.to_string())).await.is_some());
    w.until_active(now, &lab_node_labels()).await;
    w.worker.pass().await.unwrap();
    assert!(held(&w.admin, BUFFERS, "CapacityBuffer", &room(&now.to_string())).await.is_none());

    // Placeholder mode: balloon pods at Berth's PriorityClass, written by the worker's account.
    let balloons = Reconciler {
        policy: Policy { retry_delay: std::time::Duration::from_millis(50), ..Policy::default() },
        ..Reconciler::new(
            w.f.db.clone(),
            w.stack.client(As::Worker).await,
            Cluster { scale_ahead: Some(ahead_of(AheadMode::Placeholder)), ..Cluster::default() },
        )
    };
    let soon = book_at(&w, 1, 1, 3).await;
    let report = balloons.pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let deployment = held(&w.admin, "apps/v1", "Deployment", &room(&soon)).await.expect("a placeholder Deployment");
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(deployment["spec"]["template"]["spec"]["priorityClassName"], "berth-scale-ahead");
    // The worker's account cannot use such a Deployment to run as the portal.
    let mut disguised: DynamicObject = serde_json::from_value(deployment.clone()).unwrap();
    disguised.metadata.name = Some("berth-ahead-disguised".into());
    disguised.metadata.resource_version = None;
    disguised.metadata.uid = None;
    disguised.data["spec"]["template"]["spec"]["serviceAccountName"] = "berth-portal".into();
    disguised.data["spec"]["template"]["spec"]["automountServiceAccountToken"] = true.into();
    let as_worker: Api<DynamicObject> =
        Api::namespaced_with(w.stack.client(As::Worker).await, "berth", &resource("apps/v1", "Deployment"));
    let (code, message) = refusal(as_worker.create(&PostParams::default(), &disguised).await);
    assert_eq!(code, 422, "{message}");
    cancel(&w, &soon).await;
    balloons.pass().await.unwrap();
    assert!(held(&w.admin, "apps/v1", "Deployment", &room(&soon)).await.is_none());

    let (status, _) = w.f.call(Method::POST, &format!("/api/v1/bookings/{now}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    w.until_gone(now, "completed").await;
}
