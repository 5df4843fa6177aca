//! Work outlives the window (issue 46), on a real API server (v1.36) with
//! deploy/ applied and the worker as deploy/'s berth-worker: a person's
//! second session binds the very volume of their first (the controller
//! manager's PersistentVolume controller does the binding; the test plays
//! the provisioner), `/etc/berth/window-end` follows an extension, a home
//! past its retention goes back to the provisioner, and so do the model
//! cache's, after its own retention; nobody else's session can bind either,
//! tried as the worker and as a session's user.

use crate::common;
use crate::policy::attack;
use crate::policy::session;

use axum::http::Method;
use common::kube_stack::{run_pods, As};
use common::world::{lab_node_labels, world, World};
use common::MIG;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use server::provisioner::manifests::{self, Cluster};
use std::time::{Duration, Instant};
use uuid::Uuid;

const CLASS: &str = "berth-homes";

/// The provisioner's part: a PersistentVolume for every pending claim of
/// `CLASS` in `namespace`, made for that claim (claimRef with its uid) as a
/// CSI provisioner makes them; the controller manager binds the two.
async fn provision(admin: &kube::Client, namespace: &str) {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(admin.clone(), namespace);
    let volumes: Api<PersistentVolume> = Api::all(admin.clone());
    for claim in claims.list(&ListParams::default()).await.unwrap() {
        let spec = claim.spec.clone().unwrap_or_default();
        if spec.volume_name.is_some() || spec.storage_class_name.as_deref() != Some(CLASS) {
            continue;
        }
        let uid = claim.metadata.uid.clone().unwrap();
        let size = spec.resources.and_then(|r| r.requests).and_then(|r| r.get("storage").cloned()).unwrap();
        let pv = json!({ "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": { "name": format!("pvc-{uid}"),
                          "annotations": { "pv.kubernetes.io/provisioned-by": "test.berth.io" } },
            "spec": { "capacity": { "storage": size }, "accessModes": ["ReadWriteOnce"],
                      "persistentVolumeReclaimPolicy": "Delete", "storageClassName": CLASS,
                      "hostPath": { "path": format!("/tmp/{uid}") },
                      "claimRef": { "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace,
                                    "name": claim.metadata.name, "uid": uid } } });
        let _ = volumes.create(&PostParams::default(), &serde_json::from_value(pv).unwrap()).await;
    }
}

/// Passes, with the provisioner's and the kubelet's parts played between
/// them, until the booking is active.
async fn until_active(w: &World, id: Uuid) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.state(id).await != "active" {
        let report = w.worker.pass().await.expect("a pass");
        assert!(report.errors.is_empty(), "the real server refused: {:?}", report.errors);
        provision(&w.admin, &World::namespace(id)).await;
        run_pods(&w.admin, "gpu-node-1", &lab_node_labels(), &World::namespace(id)).await;
        assert!(Instant::now() < deadline, "{id} not active within 60 s: {:?}", w.steps(id).await);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The volume the claim `name` in `namespace` is bound to, once bound.
async fn bound_volume(w: &World, namespace: &str, name: &str) -> String {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(w.admin.clone(), namespace);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let claim = claims.get(name).await.unwrap();
        let phase = claim.status.and_then(|s| s.phase).unwrap_or_default();
        if let (Some(volume), "Bound") = (claim.spec.and_then(|s| s.volume_name), phase.as_str()) {
            return volume;
        }
        assert!(Instant::now() < deadline, "{namespace}/{name} not bound within 30 s ({phase})");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn window_end(w: &World, id: Uuid) -> String {
    let maps: Api<ConfigMap> = Api::namespaced(w.admin.clone(), &World::namespace(id));
    maps.get("berth-session").await.unwrap().data.unwrap()["window-end"].clone()
}

async fn ada(w: &World) -> Uuid {
    sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(&w.f.db).await.unwrap()
}

/// Bob's session (team-b, owner `owner`), set up as the worker would, and
/// clients as the worker and as bob.
async fn bobs_session(w: &World, booking: &str, owner: &str) -> (manifests::Session, kube::Client, kube::Client) {
    let mut theirs = session::session("team-b", booking, MIG, &[("berth.io/pool", "a")]);
    theirs.user = "bob@example.test".into();
    theirs.window.owner_id = owner.parse().unwrap();
    let worker = w.stack.client(As::Worker).await;
    attack::set_up(&worker, &theirs, &attack::cluster()).await;
    attack::settled(&w.admin, &theirs.namespace()).await;
    let bob = w.stack.client(As::User("bob@example.test")).await;
    (theirs, worker, bob)
}

/// A claim `name` of storage class `class` and access mode `mode`, naming `volume` if given.
fn claim_of(name: &str, (class, mode): (&str, &str), volume: Option<&str>) -> serde_json::Value {
    let mut claim = json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": { "name": name },
        "spec": { "accessModes": [mode], "storageClassName": class,
                  "resources": { "requests": { "storage": "1Gi" } } } });
    if let Some(volume) = volume {
        claim["spec"]["volumeName"] = json!(volume);
    }
    claim
}

/// Each claim of `attempts` (what, the claim, what bob is told, what the
/// worker is told), made in `namespace` as bob and as the worker, is refused.
async fn claims_refused<const N: usize>(
    bob: &kube::Client,
    worker: &kube::Client,
    namespace: &str,
    attempts: [(&str, serde_json::Value, &str, &str); N],
) {
    for (case, object, said_to_bob, said_to_the_worker) in attempts {
        refused_with(&format!("bob: {case}"), attack::create(bob, namespace, object.clone()).await, said_to_bob);
        let outcome = attack::create(worker, namespace, object).await;
        refused_with(&format!("the worker: {case}"), outcome, said_to_the_worker);
    }
}

fn refused_with(case: &str, outcome: Result<(), String>, said: &str) {
    match outcome {
        Ok(()) => panic!("should be refused: {case}"),
        Err(message) => assert!(message.contains(said), "{case}: expected `{said}` in {message}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_home_follows_them_from_session_to_session_and_goes_after_its_retention() {
    let cluster = Cluster { storage_class: Some(CLASS.into()), ..Cluster::default() };
    let Some((w, _turn)) = world(cluster).await else { return };
    let ada = ada(&w).await;
    let (home, cache) = (format!("home-{ada}"), format!("cache-{ada}"));
    let volumes: Api<PersistentVolume> = Api::all(w.admin.clone());

    // Monday: her first session gets a new volume, which the worker keeps.
    let first = w.book(MIG, 1, "interactive", w.f.lab).await;
    until_active(&w, first).await;
    let volume = bound_volume(&w, &World::namespace(first), &home).await;
    let cached = bound_volume(&w, &World::namespace(first), &cache).await;
    w.worker.repair_pass().await.unwrap();
    for (purpose, volume) in [("home", &volume), ("cache", &cached)] {
        let kept = volumes.get(volume).await.unwrap();
        assert_eq!(kept.spec.as_ref().unwrap().persistent_volume_reclaim_policy.as_deref(), Some("Retain"));
        assert_eq!(kept.metadata.labels.unwrap()[manifests::window::HOME_OWNER_LABEL], ada.to_string());
        let recorded: String =
            sqlx::query_scalar("SELECT volume FROM home WHERE user_id = $1 AND storage_class = $2 AND purpose = $3")
                .bind(ada)
                .bind(CLASS)
                .bind(purpose)
                .fetch_one(&w.f.db)
                .await
                .unwrap();
        assert_eq!(&recorded, volume, "her {purpose}");
    }
    let again = w.worker.repair_pass().await.unwrap();
    assert_eq!(again.applied, 0, "a converged pass writes nothing");

    // /etc/berth/window-end follows an extension.
    let ends: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT ends_at FROM booking WHERE id = $1").bind(first).fetch_one(&w.f.db).await.unwrap();
    assert_eq!(window_end(&w, first).await, ends.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let later = ends + chrono::Duration::hours(1);
    let path = format!("/api/v1/bookings/{first}/extend");
    let (status, body) = w.f.call(Method::POST, &path, Some(&w.f.ada), Some(json!({ "end": later }))).await;
    assert_eq!(status, 200, "{body}");
    w.worker.repair_pass().await.unwrap();
    assert_eq!(window_end(&w, first).await, later.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));

    // She ends it; the namespace goes, her home stays (Released, Retain).
    let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{first}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200, "{body}");
    w.until_gone(first, "completed").await;
    assert!(volumes.get_opt(&volume).await.unwrap().is_some(), "her home outlives the window");
    assert!(volumes.get_opt(&cached).await.unwrap().is_some(), "and so does her model cache");

    // Tuesday: her next session binds the same volume.
    let second = w.book(MIG, 1, "interactive", w.f.lab).await;
    until_active(&w, second).await;
    assert_eq!(bound_volume(&w, &World::namespace(second), &home).await, volume, "the same home");
    assert_eq!(bound_volume(&w, &World::namespace(second), &cache).await, cached, "the same model cache");
    let reserved = volumes.get(&volume).await.unwrap().spec.unwrap().claim_ref.unwrap();
    assert_eq!(reserved.namespace.as_deref(), Some(World::namespace(second).as_str()));

    // Her tenant now sizes homes larger: where the class allows expansion,
    // her home grows (the worker asks; a CSI resizer would do the rest).
    let classes: Api<StorageClass> = Api::all(w.admin.clone());
    let class = json!({ "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": { "name": CLASS },
        "provisioner": "test.berth.io", "allowVolumeExpansion": false });
    classes.create(&PostParams::default(), &serde_json::from_value(class).unwrap()).await.unwrap();
    sqlx::query("UPDATE tenant SET home_gib = 80 WHERE slug = 'team-a'").execute(&w.f.db).await.unwrap();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(w.admin.clone(), &World::namespace(second));
    let requested = || async {
        let claim = claims.get(&home).await.unwrap();
        claim.spec.unwrap().resources.unwrap().requests.unwrap()["storage"].0.clone()
    };
    for _ in 0..2 {
        let report = w.worker.repair_pass().await.unwrap();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
    }
    assert_eq!(requested().await, "50Gi", "a class without expansion: the home keeps its size");
    let expands = json!({ "allowVolumeExpansion": true });
    classes.patch(CLASS, &PatchParams::default(), &Patch::Merge(&expands)).await.unwrap();
    // The pass that grows it raises the quota at once; the claim asks for
    // more on a later pass, once the controller manager counted the quota.
    let report = w.worker.repair_pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(requested().await, "50Gi", "not in the same pass as the quota");
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> =
        Api::namespaced(w.admin.clone(), &World::namespace(second));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let counted = quotas.get("berth-session").await.unwrap().status.and_then(|s| s.hard);
        if counted.and_then(|hard| hard.get("requests.storage").cloned()).is_some_and(|q| q.0 == "280Gi") {
            break;
        }
        assert!(Instant::now() < deadline, "the raised quota was not counted within 30 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let report = w.worker.repair_pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(requested().await, "80Gi", "grown where the class allows");
    let recorded: i32 = sqlx::query_scalar("SELECT size_gib FROM home WHERE volume = $1")
        .bind(&volume)
        .fetch_one(&w.f.db)
        .await
        .unwrap();
    assert_eq!(recorded, 80, "her later sessions ask for 80 GiB");
    assert_eq!(w.worker.repair_pass().await.unwrap().applied, 0, "converged again");

    // Nobody else's session binds it: someone else's session (bob's, set up
    // as the worker would), attacked as its user and as the worker.
    let (theirs, worker, bob) =
        bobs_session(&w, "b0b0b0b0-0b0a-4908-8706-050403020100", "00000000-0000-4000-8000-0000000000b0").await;
    let bobs = theirs.namespace();
    let claim = |name: &str, volume: Option<&str>| claim_of(name, (CLASS, "ReadWriteOnce"), volume);
    // (bob's first attempt also meets the guard rails: either refusal says Berth's.)
    let attempts = [
        ("a claim named for ada's home", claim(&home, None), "Berth", "would be someone's home"),
        ("a claim named for ada's model cache", claim(&cache, None), "Berth", "would be someone's home or model cache"),
        (
            "a claim naming ada's model cache",
            claim("models", Some(&cached)),
            "may not name a volume",
            "may not name a volume",
        ),
        (
            "a claim naming ada's volume",
            claim("scratch", Some(&volume)),
            "may not name a volume",
            "may not name a volume",
        ),
    ];
    claims_refused(&bob, &worker, &bobs, attempts).await;
    let worker_volumes: Api<PersistentVolume> = Api::all(worker.clone());
    let bob_volumes: Api<PersistentVolume> = Api::all(bob.clone());
    let dry = PatchParams { dry_run: true, ..PatchParams::default() };
    let reserve_for = |name: &str, namespace: &str| json!({ "spec": { "claimRef": { "namespace": namespace, "name": name, "uid": null, "resourceVersion": null } } });
    let bobs_home = format!("home-{}", theirs.window.owner_id);
    let patches = [
        ("reserve ada's home for bob's home claim", reserve_for(&bobs_home, &bobs), "always reserved for its owner"),
        (
            "hand ada's home to bob",
            json!({ "metadata": { "labels": { manifests::window::HOME_OWNER_LABEL: theirs.window.owner_id.to_string() } } }),
            "changes only volumes it keeps as homes",
        ),
        (
            "free ada's home for any claim of its class (no claimRef)",
            json!({ "spec": { "claimRef": null } }),
            "always reserved for its owner",
        ),
        (
            "drop the home label",
            json!({ "metadata": { "labels": { manifests::window::HOME_OWNER_LABEL: null } } }),
            "changes only volumes it keeps as homes",
        ),
    ];
    for (case, patch, said) in patches {
        for target in [&volume, &cached] {
            let outcome = attack::outcome(worker_volumes.patch(target, &dry, &Patch::Merge(&patch)).await);
            refused_with(&format!("the worker: {case} ({target})"), outcome, said);
            let outcome = attack::outcome(bob_volumes.patch(target, &dry, &Patch::Merge(&patch)).await);
            refused_with(&format!("bob: {case} ({target})"), outcome, "forbidden");
        }
    }
    let bobs_cache = format!("cache-{}", theirs.window.owner_id);
    let outcome =
        attack::outcome(worker_volumes.patch(&cached, &dry, &Patch::Merge(&reserve_for(&bobs_cache, &bobs))).await);
    refused_with("the worker: reserve ada's cache for bob's cache claim", outcome, "always reserved for its owner");
    // A volume that is nobody's home (made for another claim) does not become bob's.
    let stray = json!({ "apiVersion": "v1", "kind": "PersistentVolume", "metadata": { "name": "stray-data" },
        "spec": { "capacity": { "storage": "1Gi" }, "accessModes": ["ReadWriteOnce"], "storageClassName": CLASS,
                  "hostPath": { "path": "/tmp/stray" },
                  "claimRef": { "namespace": "research", "name": "data" } } });
    let _ = volumes.create(&PostParams::default(), &serde_json::from_value(stray).unwrap()).await;
    let label = json!({ "metadata": { "labels": { manifests::window::HOME_OWNER_LABEL: theirs.window.owner_id.to_string() } } });
    let outcome = attack::outcome(worker_volumes.patch("stray-data", &dry, &Patch::Merge(&label)).await);
    refused_with(
        "the worker: take a stranger's volume as bob's home",
        outcome,
        "changes only volumes it keeps as homes",
    );
    let outcome = attack::outcome(worker_volumes.delete(&volume, &Default::default()).await.map(|_| ()));
    refused_with("the worker: delete ada's home", outcome, "forbidden");
    // The legitimate form: bob's own home claim, made by the worker, was admitted.
    let bob_claims: Api<PersistentVolumeClaim> = Api::namespaced(w.admin.clone(), &bobs);
    assert!(bob_claims.get_opt(&bobs_home).await.unwrap().is_some(), "bob's own home claim");
    assert!(bob_claims.get_opt(&bobs_cache).await.unwrap().is_some(), "and his own cache claim");

    // Each goes when its own retention is past: her home 1 day after her
    // last session, her cache (30 days) not yet; then the cache's 1 day too.
    let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{second}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200, "{body}");
    w.until_gone(second, "completed").await;
    assert!(w.worker.sweep().await.unwrap().homes_let_go.is_empty(), "kept 30 days by default");
    sqlx::query("UPDATE tenant SET home_retention_days = 1 WHERE slug = 'team-a'").execute(&w.f.db).await.unwrap();
    sqlx::query("UPDATE booking SET starts_at = starts_at - interval '3 days', ends_at = ends_at - interval '3 days' WHERE user_id = $1")
        .bind(ada)
        .execute(&w.f.db)
        .await
        .unwrap();
    assert_eq!(w.worker.sweep().await.unwrap().homes_let_go, std::slice::from_ref(&volume));
    sqlx::query("UPDATE tenant SET cache_retention_days = 1 WHERE slug = 'team-a'").execute(&w.f.db).await.unwrap();
    assert_eq!(w.worker.sweep().await.unwrap().homes_let_go, std::slice::from_ref(&cached));
    for gone in [&volume, &cached] {
        let released = volumes.get(gone).await.unwrap();
        assert_eq!(
            released.spec.unwrap().persistent_volume_reclaim_policy.as_deref(),
            Some("Delete"),
            "the provisioner's to delete"
        );
    }
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM home WHERE user_id = $1 AND gone_at IS NULL")
        .bind(ada)
        .fetch_one(&w.f.db)
        .await
        .unwrap();
    assert_eq!(left, 0, "gone (kept as history for the reports)");
    for name in [volume.as_str(), cached.as_str(), "stray-data"] {
        let _ = volumes.delete(name, &Default::default()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_back_to_back_booking_continues_the_session_in_the_same_namespace_and_pod() {
    let cluster = Cluster { storage_class: Some(CLASS.into()), ..Cluster::default() };
    let Some((w, _turn)) = world(cluster).await else { return };
    let first = w.book(MIG, 1, "interactive", w.f.lab).await;
    let (status, body) = w.f.book(&w.f.ada, MIG, 1, common::slot(4), common::slot(6)).await;
    assert_eq!(status, 201, "{body}");
    let second: Uuid = body["id"].as_str().unwrap().parse().unwrap();
    until_active(&w, first).await;
    let namespace = World::namespace(first);
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(w.admin.clone(), &namespace);
    let uids = || async {
        let listed = pods.list(&ListParams::default().labels("app.kubernetes.io/name=workspace")).await.unwrap();
        listed.items.into_iter().filter_map(|p| p.metadata.uid).collect::<Vec<_>>()
    };
    let before = uids().await;
    assert_eq!(before.len(), 1);
    // The workspace reads the end of the booking its session continues into.
    let chain_end = common::slot(6).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(window_end(&w, first).await, chain_end);

    // The first window closes as the second opens.
    let boundary = chrono::Utc::now() - chrono::Duration::seconds(1);
    sqlx::query("UPDATE booking SET ends_at = $2 WHERE id = $1")
        .bind(first)
        .bind(boundary)
        .execute(&w.f.db)
        .await
        .unwrap();
    sqlx::query("UPDATE booking SET starts_at = $2 WHERE id = $1")
        .bind(second)
        .bind(boundary)
        .execute(&w.f.db)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.state(second).await != "active" {
        let report = w.worker.pass().await.unwrap();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        run_pods(&w.admin, "gpu-node-1", &lab_node_labels(), &namespace).await;
        assert!(
            Instant::now() < deadline,
            "the second booking did not take the session over: {:?}",
            w.steps(second).await
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(w.state(first).await, "completed");
    assert_eq!(uids().await, before, "the same pod runs on: processes and all");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(w.admin.clone());
    let ns = namespaces.get(&namespace).await.unwrap();
    assert_eq!(manifests::owned_by(&ns, None), Some(second), "the namespace is the second booking's now");
    // Its session is the first's: nothing of it was started anew beside it
    // (a start pass that read the second's facts before the hand-over did).
    assert!(namespaces.get_opt(&World::namespace(second)).await.unwrap().is_none(), "no second namespace");
    assert_eq!(window_end(&w, first).await, chain_end, "read in the session's one namespace");
    let again = w.worker.pass().await.unwrap();
    assert_eq!(again.applied, 0, "a converged pass writes nothing");

    // Ending the second ends the session.
    let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{second}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200, "{body}");
    w.until_gone(first, "completed").await;
    assert_eq!(w.state(second).await, "completed");
}

/// Books a MIG slice on the demo pool from now for `token`'s holder.
async fn book_as(w: &World, token: &str) -> Uuid {
    let body = json!({ "pool_id": w.f.lab, "kind": MIG, "quantity": 1,
        "start": common::current_slot(), "end": common::slot(4), "mode": "interactive" });
    let (status, body) = w.f.call(Method::POST, "/api/v1/bookings", Some(token), Some(body)).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teams_sessions_share_its_model_cache_and_no_other_team_can_bind_it() {
    const TEAM_CLASS: &str = "team-rwx";
    const CLAIM: &str = "team-cache-team-a";
    let cluster = Cluster { storage_class: Some(CLASS.into()), ..Cluster::default() };
    let Some((w, _turn)) = world(cluster).await else { return };
    let path = format!("/api/v1/pools/{}", w.f.lab);
    let body = json!({ "team_cache_class": TEAM_CLASS });
    let (status, pool) = w.f.call(Method::PATCH, &path, Some(&w.f.admin), Some(body)).await;
    assert_eq!((status, pool["team_cache_class"].as_str()), (axum::http::StatusCode::OK, Some(TEAM_CLASS)), "{pool}");

    // The cluster admin's part: two volumes on team-a's one export,
    // reserved for no session (a claim in `berth` that never exists).
    let volumes: Api<PersistentVolume> = Api::all(w.admin.clone());
    let made = ["team-a-models-1", "team-a-models-2"];
    for name in made {
        let pv = json!({ "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": { "name": name, "labels": { manifests::window::TEAM_CACHE_LABEL: "team-a" } },
            "spec": { "capacity": { "storage": "500Gi" }, "accessModes": ["ReadWriteMany"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": TEAM_CLASS,
                      "nfs": { "server": "nfs.lab.test", "path": "/exports/team-a/models" },
                      "claimRef": { "namespace": "berth", "name": CLAIM } } });
        volumes.create(&PostParams::default(), &serde_json::from_value(pv).unwrap()).await.unwrap();
    }

    // Ada and Carol, both of team-a, at once: each session binds one of
    // the team's volumes at /models, and says so in /etc/berth.
    let adas = w.book(MIG, 1, "interactive", w.f.lab).await;
    let carols = book_as(&w, &w.f.carol).await;
    until_active(&w, adas).await;
    until_active(&w, carols).await;
    let (hers, theirs) = (
        bound_volume(&w, &World::namespace(adas), CLAIM).await,
        bound_volume(&w, &World::namespace(carols), CLAIM).await,
    );
    assert_ne!(hers, theirs, "one volume binds one claim");
    assert!(made.contains(&hers.as_str()) && made.contains(&theirs.as_str()), "{hers}, {theirs}");
    for id in [adas, carols] {
        let maps: Api<ConfigMap> = Api::namespaced(w.admin.clone(), &World::namespace(id));
        let data = maps.get("berth-session").await.unwrap().data.unwrap();
        assert_eq!(data.get("model-cache").map(String::as_str), Some("team"), "{data:?}");
        assert!(!data.contains_key("model-cache-kept-until"), "the team's, not kept for her: {data:?}");
        let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
            Api::namespaced(w.admin.clone(), &World::namespace(id));
        let pod = deployments.get("workspace").await.unwrap().spec.unwrap().template.spec.unwrap();
        let claims: Vec<_> = pod.volumes.unwrap().into_iter().filter_map(|v| v.persistent_volume_claim).collect();
        assert!(claims.iter().any(|c| c.claim_name == CLAIM), "mounted: {claims:?}");
    }
    let again = w.worker.repair_pass().await.unwrap();
    assert_eq!(again.applied, 0, "a converged pass writes nothing");
    let carol = app::backend::accounts::tokens::authenticate(&w.f.db, &w.f.carol).await.unwrap().unwrap();
    let page = app::backend::bookings::mine::load(&w.f.db, &carol, "Europe/Berlin").await.unwrap();
    let card = page.live.into_iter().find(|c| c.booking.id == carols).unwrap().persistence.unwrap_or_default();
    assert!(card.contains("and the team's shared model cache (/models) stays;"), "{card}");

    // Carol ends hers: the volume is released, not deleted, and the team's
    // next session takes it.
    let (status, body) =
        w.f.call(Method::POST, &format!("/api/v1/bookings/{carols}/end"), Some(&w.f.carol), None).await;
    assert_eq!(status, 200, "{body}");
    w.until_gone(carols, "completed").await;
    assert!(volumes.get_opt(&theirs).await.unwrap().is_some(), "the team's volume outlives her session");
    let next = w.book(MIG, 1, "interactive", w.f.lab).await;
    until_active(&w, next).await;
    assert_eq!(bound_volume(&w, &World::namespace(next), CLAIM).await, theirs, "the one she let go");

    // Nobody else's session binds it: bob's (team-b, set up as the worker
    // would), attacked as its user and as the worker.
    let (bobs_session, worker, bob) =
        bobs_session(&w, "b0b0b0b0-0b0a-4908-8706-050403020101", "00000000-0000-4000-8000-0000000000b1").await;
    let bobs = bobs_session.namespace();
    let claim = |name: &str, volume: Option<&str>| claim_of(name, (TEAM_CLASS, "ReadWriteMany"), volume);
    let attempts = [
        ("a claim named for team-a's cache", claim(CLAIM, None), "Berth", "would be a team's model cache"),
        (
            "a claim naming team-a's volume",
            claim("models", Some(&hers)),
            "may not name a volume",
            "may not name a volume",
        ),
    ];
    claims_refused(&bob, &worker, &bobs, attempts).await;
    // Outside Berth nobody may make a claim a reservation could meet.
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(w.admin.clone());
    let research = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "research-b" } });
    let _ = namespaces.create(&PostParams::default(), &serde_json::from_value(research).unwrap()).await;
    for name in [CLAIM.to_string(), format!("home-{}", ada(&w).await)] {
        let outcome = attack::create(&w.admin, "research-b", claim(&name, None)).await;
        refused_with(
            &format!("a cluster admin: {name} in a namespace of their own"),
            outcome,
            "exist only in Berth sessions",
        );
    }
    let worker_volumes: Api<PersistentVolume> = Api::all(worker.clone());
    let bob_volumes: Api<PersistentVolume> = Api::all(bob.clone());
    let dry = PatchParams { dry_run: true, ..PatchParams::default() };
    let label = manifests::window::TEAM_CACHE_LABEL;
    let reserve = json!({ "spec": { "claimRef": { "namespace": bobs, "name": "team-cache-team-b", "uid": null, "resourceVersion": null } } });
    let patches = [
        ("reserve team-a's volume for team-b's claim", reserve, "only ever reserved for that team's claim"),
        (
            "hand team-a's volume to team-b",
            json!({ "metadata": { "labels": { label: "team-b" } } }),
            "never labels or unlabels",
        ),
        ("drop the team label", json!({ "metadata": { "labels": { label: null } } }), "never labels or unlabels"),
        ("free it for any claim (no claimRef)", json!({ "spec": { "claimRef": null } }), "only ever reserved"),
        (
            "have it deleted once released",
            json!({ "spec": { "persistentVolumeReclaimPolicy": "Delete" } }),
            "nothing else of it changes",
        ),
        (
            "keep it as someone's home",
            json!({ "metadata": { "labels": { manifests::window::HOME_OWNER_LABEL: bobs_session.window.owner_id.to_string() } } }),
            "nothing else of it changes",
        ),
    ];
    for (case, patch, said) in patches {
        let outcome = attack::outcome(worker_volumes.patch(&hers, &dry, &Patch::Merge(&patch)).await);
        refused_with(&format!("the worker: {case}"), outcome, said);
        let outcome = attack::outcome(bob_volumes.patch(&hers, &dry, &Patch::Merge(&patch)).await);
        refused_with(&format!("bob: {case}"), outcome, "forbidden");
    }
    // A stranger's volume does not become a team's cache.
    let stray = json!({ "apiVersion": "v1", "kind": "PersistentVolume", "metadata": { "name": "stray-team-data" },
        "spec": { "capacity": { "storage": "1Gi" }, "accessModes": ["ReadWriteMany"], "storageClassName": TEAM_CLASS,
                  "nfs": { "server": "nfs.lab.test", "path": "/exports/other" },
                  "claimRef": { "namespace": "research-b", "name": "data" } } });
    let _ = volumes.create(&PostParams::default(), &serde_json::from_value(stray).unwrap()).await;
    let as_team_b = json!({ "metadata": { "labels": { label: "team-b" } } });
    let outcome = attack::outcome(worker_volumes.patch("stray-team-data", &dry, &Patch::Merge(&as_team_b)).await);
    refused_with("the worker: take a stranger's volume as team-b's cache", outcome, "never labels or unlabels");

    for id in [adas, next] {
        let (status, body) = w.f.call(Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
        assert_eq!(status, 200, "{body}");
        w.until_gone(id, "completed").await;
    }
    for name in made.iter().chain(&["stray-team-data"]) {
        let _ = volumes.delete(name, &Default::default()).await;
    }
    let _ = namespaces.delete("research-b", &Default::default()).await;
}
