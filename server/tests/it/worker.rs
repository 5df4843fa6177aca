//! The worker's pass through a real `kube::Client` against an in-memory API
//! server (kube-fake-client behind the namespace harness in
//! `server/src/provisioner/simulated.rs`), with bookings in a real PostgreSQL.

use crate::common;

use axum::http::Method;
use common::{slot, Fixture, MIG};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ResourceQuota;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::{Policy, Reconciler};
use server::provisioner::simulated::SimulatedCluster as FakeCluster;
use std::sync::Arc;

struct World {
    f: Fixture,
    fake: Arc<FakeCluster>,
    worker: Reconciler,
}

/// The default policy, with retries that do not slow the tests down.
fn quick() -> Policy {
    Policy { retry_delay: std::time::Duration::from_millis(1), ..Policy::default() }
}

async fn world() -> World {
    let f = Fixture::new().await;
    let fake = FakeCluster::start(false).await;
    let client = fake.client();
    let worker = Reconciler {
        db: f.db.clone(),
        client,
        drives: None,
        cluster: Cluster::default(),
        policy: quick(),
        simulated: false,
        usage: None,
        notifier: None,
        verify_domain: false,
        site_duties: true,
    };
    World { f, fake, worker }
}

impl World {
    /// Ada books two MIG slices for a window that is open now.
    async fn open_booking(&self) -> uuid::Uuid {
        let (status, body) = self.f.book(&self.f.ada, MIG, 2, common::current_slot(), slot(4)).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().parse().unwrap()
    }

    /// The steps as the booking page shows them: (step, state, detail).
    async fn steps(&self, id: uuid::Uuid) -> Vec<(String, String, String)> {
        let stored = app::backend::sessions::session_status::load(&self.f.db, &[id]).await.unwrap();
        let status = stored.get(&id).expect("the worker reported on the session").status.clone();
        status.steps.into_iter().map(|s| (s.step, s.state.as_str().to_string(), s.detail)).collect()
    }

    async fn status_written_at(&self, id: uuid::Uuid) -> chrono::DateTime<chrono::Utc> {
        sqlx::query_scalar("SELECT updated_at FROM session_status WHERE booking_id = $1")
            .bind(id)
            .fetch_one(&self.f.db)
            .await
            .unwrap()
    }

    async fn requests_of_a_pass(&self) -> usize {
        let before = self.fake.requests();
        self.worker.pass().await.unwrap();
        self.fake.requests() - before
    }

    async fn state(&self, id: uuid::Uuid) -> String {
        sqlx::query_scalar("SELECT state FROM booking WHERE id = $1").bind(id).fetch_one(&self.f.db).await.unwrap()
    }

    fn namespace(id: uuid::Uuid) -> String {
        format!("berth-team-a-{}", &id.simple().to_string()[..8])
    }

    /// What the kubelet would do: the workspace reports one ready replica.
    async fn workspace_becomes_ready(&self, id: uuid::Uuid) {
        let deployments: Api<Deployment> = Api::namespaced(self.worker.client.clone(), &Self::namespace(id));
        let status = serde_json::json!({ "status": { "replicas": 1, "readyReplicas": 1 } });
        deployments.patch_status("workspace", &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_window_gets_every_object_with_the_right_quota_and_becomes_active_when_ready() {
    let w = world().await;
    let id = w.open_booking().await;
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 16, "namespace and 15 objects in it");
    assert_eq!(w.fake.namespace_names(), [World::namespace(id)]);
    let quotas: Api<ResourceQuota> = Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    let hard = quotas.get("berth-session").await.unwrap().spec.unwrap().hard.unwrap();
    assert_eq!(hard["requests.nvidia.com/mig-1g.24gb"].0, "4", "2 slices × 2 replicas");
    assert_eq!(hard["requests.nvidia.com/gpu"].0, "0");
    assert_eq!(w.state(id).await, "approved", "not active before the workspace is ready");
    let steps = w.steps(id).await;
    let names: Vec<&str> = steps.iter().map(|(step, _, _)| step.as_str()).collect();
    assert_eq!(
        names,
        ["Namespace", "Quota and defaults", "Network isolation", "Access", "Storage", "Workspace", "Ready"]
    );
    assert!(steps[..6].iter().all(|(_, state, _)| state == "done"), "{steps:?}");
    // The simulated cluster has no nodes, and says so.
    let why = "waiting for the workspace to report ready: the cluster has no node with the pool's labels \
               (nvidia.com/gpu.product=NVIDIA-H100-NVL)";
    assert_eq!(steps[6], ("Ready".into(), "working".into(), why.into()));

    w.workspace_becomes_ready(id).await;
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.started, [id]);
    assert_eq!(w.state(id).await, "active");
    assert!(w.steps(id).await.iter().all(|(_, state, _)| state == "done"));
    let url: Option<String> = sqlx::query_scalar("SELECT workspace_url FROM session_status WHERE booking_id = $1")
        .bind(id)
        .fetch_one(&w.f.db)
        .await
        .unwrap();
    assert_eq!(url, Some(format!("https://{}.berth.local/", World::namespace(id))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_pass_writes_nothing_and_a_deleted_policy_comes_back() {
    let w = world().await;
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    let (before, written) = (w.fake.writes(), w.status_written_at(id).await);
    let report = w.worker.pass().await.unwrap();
    assert_eq!((report.applied, w.fake.writes() - before), (0, 0), "a converged pass issues zero writes");
    assert_eq!(w.status_written_at(id).await, written, "nor rewrites the session's status");
    let policies: Api<NetworkPolicy> = Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    policies.delete("berth-egress", &DeleteParams::default()).await.unwrap();
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 1);
    assert!(policies.get_opt("berth-egress").await.unwrap().is_some(), "the hand-deleted policy is back");

    // Active sessions are checked against one list per kind: the start pass
    // lists namespaces, the repair pass namespaces and 11 kinds (every
    // session kind but Secrets, which the worker may not list).
    w.workspace_becomes_ready(id).await;
    assert_eq!(w.worker.pass().await.unwrap().started, [id]);
    let one = w.requests_of_a_pass().await;
    assert_eq!(one, 13);
    let second = w.open_booking().await;
    let (status, body) = w.f.book(&w.f.carol, common::GPU, 1, common::current_slot(), slot(4)).await;
    assert_eq!(status, 201, "{body}");
    let third = body["id"].as_str().unwrap().parse().unwrap();
    w.worker.pass().await.unwrap();
    for id in [second, third] {
        w.workspace_becomes_ready(id).await;
    }
    assert_eq!(w.worker.pass().await.unwrap().started.len(), 2);
    assert_eq!(w.requests_of_a_pass().await, one, "the same requests for three sessions as for one");
    let policies: Api<NetworkPolicy> = Api::namespaced(w.worker.client.clone(), &World::namespace(third));
    policies.delete("berth-egress", &DeleteParams::default()).await.unwrap();
    assert_eq!(w.worker.pass().await.unwrap().applied, 1, "the snapshot sees what an active session lacks");
    // An object as an earlier version applied it (no digest, or another):
    // written once more, then left alone.
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(w.worker.client.clone(), &World::namespace(third));
    let unstamped = serde_json::json!({ "metadata": { "annotations": { "berth.io/applied": null } } });
    config_maps.patch("berth-proxy", &Default::default(), &kube::api::Patch::Merge(&unstamped)).await.unwrap();
    assert_eq!(w.worker.pass().await.unwrap().applied, 1, "an object without the worker's digest is rewritten");
    assert_eq!(w.worker.pass().await.unwrap().applied, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_canceling_and_orphans_delete_the_namespace() {
    let w = world().await;
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    // The window ends (moved into the past directly, as time would).
    sqlx::query("UPDATE booking SET starts_at = starts_at - interval '1 day', ends_at = now() - interval '1 minute' WHERE id = $1")
        .bind(id)
        .execute(&w.f.db)
        .await
        .unwrap();
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.completed, [id]);
    assert!(w.fake.namespace_names().is_empty());
    assert_eq!(w.state(id).await, "completed");
    let quotas: Api<ResourceQuota> = Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    assert!(quotas.get_opt("berth-session").await.unwrap().is_none(), "the namespace's objects went with it");

    // Ended early by its owner: the next pass collects the namespace.
    let other = w.open_booking().await;
    w.worker.pass().await.unwrap();
    let (status, _) =
        w.f.call(axum::http::Method::POST, &format!("/api/v1/bookings/{other}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.collected, [World::namespace(other)]);
    assert!(w.fake.namespace_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_namespace_with_the_same_name_is_never_adopted_or_deleted() {
    let w = world().await;
    let id = w.open_booking().await;
    w.fake.add_foreign_namespace(&World::namespace(id));
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.failed, [id]);
    assert_eq!(report.applied, 0);
    assert_eq!(w.state(id).await, "failed");
    assert_eq!(w.fake.namespace_names(), [World::namespace(id)], "left alone");
    let steps = w.steps(id).await;
    assert_eq!(steps[0].1, "failed");
    assert!(steps[0].2.contains("is not Berth's"), "{steps:?}");
    w.worker.pass().await.unwrap();
    assert_eq!(w.fake.namespace_names(), [World::namespace(id)], "not collected either: it has no Berth label");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_api_errors_are_retried_within_the_pass_which_still_converges() {
    let w = world().await;
    let id = w.open_booking().await;
    w.fake.fail_next.lock().unwrap().extend([409u16, 429, 500]);
    let report = w.worker.pass().await.unwrap();
    assert_eq!((report.applied, report.errors.len()), (16, 0), "every object applied despite 409, 429 and 500");
    assert!(w.fake.fail_next.lock().unwrap().is_empty(), "all three errors were met");
    let before = w.fake.writes();
    w.worker.pass().await.unwrap();
    assert_eq!(w.fake.writes(), before, "converged after the errors");
    assert_eq!(w.fake.namespace_names(), [World::namespace(id)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_does_not_go_away_fails_the_booking_with_a_reason_the_user_can_read() {
    let w = world().await;
    let id = w.open_booking().await;
    *w.fake.refuse.lock().unwrap() = Some(("/networkpolicies/".into(), 403));
    for attempt in 1..5 {
        let report = w.worker.pass().await.unwrap();
        assert_eq!(report.errors.len(), 1, "attempt {attempt}");
        assert_eq!(w.state(id).await, "approved", "attempt {attempt}: not given up yet");
    }
    let steps = w.steps(id).await;
    let states: Vec<&str> = steps.iter().map(|(_, state, _)| state.as_str()).collect();
    // Isolation fails before the user is bound: Access never started.
    assert_eq!(states, ["done", "done", "failed", "pending", "pending", "pending", "pending"]);
    assert_eq!(steps[2].2, "NetworkPolicy berth-ingress: refused by the test harness");

    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.failed, [id], "the fifth failed pass in a row gives up");
    assert_eq!(w.state(id).await, "failed");
    let request = axum::http::Request::post("/rpc/my_bookings")
        .header("authorization", format!("Bearer {}", w.f.ada))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from("tz=UTC"))
        .unwrap();
    let (status, body) = common::raw(&w.f.app, request).await;
    assert_eq!(status, 200, "{body}");
    let card = body["past"].as_array().unwrap().iter().find(|c| c["booking"]["id"] == id.to_string()).unwrap().clone();
    assert_eq!(
        card["failure"],
        "Berth could not set up the workspace (5 attempts): NetworkPolicy berth-ingress: refused by the test harness. Ask your Berth admin."
    );
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.collected, [World::namespace(id)], "a failed booking's namespace is collected");
}

async fn eventually(what: &str, check: impl Fn() -> bool, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    while !check() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_wakes_on_a_booking_change_and_only_the_leader_works() {
    let World { f, fake, worker } = world().await;
    // Another worker is active: this one waits.
    let mut leader = f.db.acquire().await.unwrap().detach();
    assert!(app::backend::sessions::lease::try_lead(&mut leader, None).await.unwrap());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(server::provisioner::run::run(worker, stopped));
    let (status, body) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(4)).await;
    assert_eq!(status, 201, "{body}");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert!(fake.namespace_names().is_empty(), "a standby worker does nothing");
    let admin = app::backend::accounts::tokens::authenticate(&f.db, &f.admin).await.unwrap().unwrap();
    let waiting = app::backend::sessions::status::status(&f.db, &admin).await.unwrap();
    assert_eq!((waiting.leader, waiting.processes.len()), (None, 1), "registered, not leading");

    // The active worker goes away: this one takes over and converges.
    sqlx::Connection::close(leader).await.unwrap();
    eventually("the standby takes over", || !fake.namespace_names().is_empty(), std::time::Duration::from_secs(10))
        .await;
    // The worker page names the leader and its last start pass.
    let name = app::backend::sessions::status::process_name();
    let mut status = app::backend::sessions::status::status(&f.db, &admin).await.unwrap();
    for _ in 0..50 {
        if status.processes[0].start_pass_at.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        status = app::backend::sessions::status::status(&f.db, &admin).await.unwrap();
    }
    assert_eq!(status.leader.as_deref(), Some(name.as_str()));
    let process = &status.processes[0];
    assert!(process.start_pass_at.is_some() && process.start_pass_ms.is_some() && process.next_wake_at.is_some());
    assert_eq!(process.start_pass_error, None);
    assert!(status.sessions.iter().map(|(_, n)| n).sum::<i64>() >= 1, "{:?}", status.sessions);
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    assert_eq!(app::backend::sessions::status::status(&f.db, &ada).await.unwrap_err().status(), 403);

    // A new booking is picked up at once (NOTIFY), not at the 30 s resync.
    let (status, _) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(2)).await;
    assert_eq!(status, 201);
    eventually(
        "the notification wakes the loop",
        || fake.namespace_names().len() == 2,
        std::time::Duration::from_secs(3),
    )
    .await;
    stop.send(true).unwrap();
    task.await.unwrap().unwrap();
}

/// PostgreSQL serializes the commits of notifying transactions, so only
/// what the worker must act on within a minute notifies: a window opening
/// soon or open now, a live session's change. A booking days ahead (and its
/// cancellation) is found by the worker's regular pass instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_open_or_imminent_windows_and_live_sessions_notify_the_worker() {
    let f = Fixture::new().await;
    let mut listener = sqlx::postgres::PgListener::connect_with(&f.db).await.unwrap();
    listener.listen("berth_bookings").await.unwrap();
    let (status, far) = f.book(&f.ada, MIG, 1, slot(8), slot(10)).await;
    assert_eq!(status, 201, "{far}");
    let (status, _) = f
        .call(
            Method::POST,
            &format!("/api/v1/bookings/{}/cancel", far["id"].as_str().unwrap()),
            Some(&f.ada),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, open) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(2)).await;
    assert_eq!(status, 201, "{open}");
    let note = tokio::time::timeout(std::time::Duration::from_secs(5), listener.recv()).await.unwrap().unwrap();
    let payload: serde_json::Value = serde_json::from_str(note.payload()).unwrap();
    assert_eq!(payload["id"], open["id"], "the far booking and its cancellation did not notify");
    assert_eq!((payload["state"].as_str(), payload["was"].as_str()), (Some("approved"), None));
    assert_eq!(
        server::provisioner::wake::wake_for(note.payload(), chrono::Utc::now()),
        server::provisioner::wake::Wake::Now
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_after_any_single_step_converges_on_restart_with_no_duplicates() {
    let steps = 16; // namespace + 15 objects
    for stop_after in 0..steps {
        let w = world().await;
        let id = w.open_booking().await;
        *w.fake.stop_after.lock().unwrap() = Some(stop_after);
        let stopped = w.worker.pass().await.unwrap();
        assert_eq!((stopped.applied, stopped.errors.len()), (stop_after, 1), "stopped after step {stop_after}");
        *w.fake.stop_after.lock().unwrap() = None;
        // A new worker process: nothing carried over but the cluster and the database.
        let restarted = Reconciler {
            db: w.f.db.clone(),
            client: w.fake.client(),
            drives: None,
            cluster: Cluster::default(),
            policy: quick(),
            simulated: false,
            usage: None,
            notifier: None,
            verify_domain: false,
            site_duties: true,
        };
        let report = restarted.pass().await.unwrap();
        assert_eq!(report.applied, steps - stop_after, "stopped after {stop_after}: the rest is applied");
        assert_eq!(w.fake.namespace_names(), [World::namespace(id)]);
        let ns = World::namespace(id);
        let policies: Api<NetworkPolicy> = Api::namespaced(restarted.client.clone(), &ns);
        assert_eq!(policies.list(&Default::default()).await.unwrap().items.len(), 2);
        let before = w.fake.writes();
        restarted.pass().await.unwrap();
        assert_eq!(w.fake.writes(), before, "stopped after {stop_after}: converged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulated_cluster_a_session_goes_live_in_one_pass() {
    let f = Fixture::new().await;
    let simulated = FakeCluster::start(true).await;
    let worker = Reconciler::new(f.db.clone(), simulated.client(), Cluster::default());
    let (status, body) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(2)).await;
    assert_eq!(status, 201, "{body}");
    let id: uuid::Uuid = body["id"].as_str().unwrap().parse().unwrap();
    let report = worker.pass().await.unwrap();
    assert_eq!(report.started, [id], "the simulated kubelet reports the workspace ready");
    let state: String =
        sqlx::query_scalar("SELECT state FROM booking WHERE id = $1").bind(id).fetch_one(&f.db).await.unwrap();
    assert_eq!(state, "active");
    let events: Vec<(Option<uuid::Uuid>, String)> =
        sqlx::query_as("SELECT actor_id, to_state FROM booking_event WHERE booking_id = $1 ORDER BY id")
            .bind(id)
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert_eq!(events.last().unwrap(), &(None, "active".to_string()), "the system's change is audited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminating_namespace_is_waited_for_never_deleted_twice_and_reported_when_stuck() {
    let w = world().await;
    w.fake.slow_termination.store(true, std::sync::atomic::Ordering::SeqCst);
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    let ns = World::namespace(id);

    // Deleted by hand while the session runs: the pass waits for it to go.
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(w.worker.client.clone());
    namespaces.delete(&ns, &DeleteParams::default()).await.unwrap();
    let before = w.fake.writes();
    let report = w.worker.pass().await.unwrap();
    assert_eq!((report.applied, report.errors.len(), w.fake.writes() - before), (0, 0, 0));
    assert_eq!(
        w.steps(id).await[0],
        ("Namespace".into(), "working".into(), "the previous namespace of this booking is still being deleted".into())
    );
    w.fake.remove_namespace(&ns).await;
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 16, "recreated once the old one is gone");

    // Ended early: deleted once, then left to terminate.
    let (status, _) =
        w.f.call(axum::http::Method::POST, &format!("/api/v1/bookings/{id}/end"), Some(&w.f.ada), None).await;
    assert_eq!(status, 200);
    assert_eq!(w.worker.pass().await.unwrap().collected, std::slice::from_ref(&ns));
    let before = w.fake.writes();
    let report = w.worker.pass().await.unwrap();
    assert!(report.collected.is_empty());
    assert_eq!(w.fake.writes(), before, "a terminating namespace is not deleted again");

    let sweep = w.worker.sweep().await.unwrap();
    assert!(sweep.stuck.is_empty(), "terminating for a moment is normal");
    w.fake.terminating_since(&ns, 600);
    let sweep = w.worker.sweep().await.unwrap();
    assert_eq!(sweep.stuck, std::slice::from_ref(&ns), "terminating for 10 minutes is reported");
    assert_eq!(w.fake.namespace_names(), [ns], "and still not deleted again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_collects_namespaces_of_bookings_that_no_longer_exist_and_tidies_the_database() {
    let w = world().await;
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    // The booking vanished (a restored database, say): its namespace is an orphan.
    sqlx::query("DELETE FROM booking WHERE id = $1").bind(id).execute(&w.f.db).await.unwrap();
    w.fake.add_foreign_namespace("team-x-scratch");
    let db = &w.f.db;
    let ada: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(db).await.unwrap();
    for (name, expires, revoked) in
        [("long expired", 8, None), ("just expired", 1, None), ("revoked long ago", -30, Some(9))]
    {
        sqlx::query(
            "INSERT INTO api_token (user_id, name, token_hash, expires_at, revoked_at)
             VALUES ($1, $2, sha256($2::bytea), now() - make_interval(days => $3), now() - make_interval(days => $4))",
        )
        .bind(ada)
        .bind(name)
        .bind(expires)
        .bind(revoked)
        .execute(db)
        .await
        .unwrap();
    }
    sqlx::query("INSERT INTO web_session (id, data, expiry_date) VALUES ('gone', '\\x00', now() - interval '1 minute'), ('live', '\\x00', now() + interval '1 hour')")
        .execute(db)
        .await
        .unwrap();
    let other = w.open_booking().await;
    sqlx::query("UPDATE booking_event SET at = now() - interval '401 days' WHERE booking_id = $1")
        .bind(other)
        .execute(db)
        .await
        .unwrap();

    let sweep = w.worker.sweep().await.unwrap();
    assert_eq!(sweep.collected, [World::namespace(id)]);
    assert_eq!(w.fake.namespace_names(), ["team-x-scratch"], "a namespace without Berth's label is never touched");
    assert_eq!((sweep.swept.tokens, sweep.swept.sessions, sweep.swept.events), (2, 1, 1));
    let tokens: Vec<String> =
        sqlx::query_scalar("SELECT name FROM api_token WHERE user_id = $1 AND name <> 'test' ORDER BY name")
            .bind(ada)
            .fetch_all(db)
            .await
            .unwrap();
    assert_eq!(tokens, ["just expired"], "expired tokens stay listed for a week");
    let sessions: Vec<String> = sqlx::query_scalar("SELECT id FROM web_session").fetch_all(db).await.unwrap();
    assert_eq!(sessions, ["live"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_deleted_namespace_is_back_at_once_through_the_watch() {
    let World { f, fake, mut worker } = world().await;
    let (status, body) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(4)).await;
    assert_eq!(status, 201, "{body}");
    let ns = World::namespace(body["id"].as_str().unwrap().parse().unwrap());
    worker.client = fake.client();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(server::provisioner::run::run(worker, stopped));
    eventually(
        "the session is provisioned",
        || fake.namespace_names() == [ns.clone()],
        std::time::Duration::from_secs(5),
    )
    .await;
    // Let the first passes settle; nothing else will wake the loop for 30 s.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    fake.remove_namespace(&ns).await;
    assert!(fake.namespace_names().is_empty());
    eventually(
        "the watch event wakes a pass",
        || fake.namespace_names() == [ns.clone()],
        std::time::Duration::from_secs(3),
    )
    .await;
    stop.send(true).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_cache_daemon_set_follows_the_pools_images_and_the_configured_ones() {
    let mut w = world().await;
    let vllm = format!("vllm/vllm-openai@sha256:{}", "0a".repeat(32));
    let notebook = format!("quay.io/jupyter/pytorch-notebook@sha256:{}", "0b".repeat(32));
    sqlx::query("UPDATE pool SET images = images || $1").bind(vec![notebook.clone()]).execute(&w.f.db).await.unwrap();
    w.worker.cluster.image_cache = Some(server::provisioner::manifests::ImageCache {
        images: vec![vllm.clone()],
        registries: vec!["docker.io/vllm".into(), "docker.io/ollama".into(), "quay.io/jupyter".into()],
        node_selector: [("nvidia.com/gpu.present".to_string(), "true".to_string())].into(),
        pause_image: "registry.k8s.io/pause:3.10".into(),
    });
    let report = w.worker.pass().await.unwrap();
    assert_eq!(report.applied, 1, "no session yet, only the cache");
    let daemon_sets: Api<k8s_openapi::api::apps::v1::DaemonSet> = Api::namespaced(w.worker.client.clone(), "berth");
    let pulled = |ds: k8s_openapi::api::apps::v1::DaemonSet| -> Vec<String> {
        ds.spec.unwrap().template.spec.unwrap().init_containers.unwrap().into_iter().filter_map(|c| c.image).collect()
    };
    // The demo pool's tagged images are not pulled: only digests from approved registries.
    let mut expected = vec![vllm, notebook];
    expected.sort();
    assert_eq!(pulled(daemon_sets.get("berth-image-cache").await.unwrap()), expected);

    let before = w.fake.writes();
    assert_eq!(w.worker.pass().await.unwrap().applied, 0);
    assert_eq!(w.fake.writes(), before, "unchanged images: no write");

    let ollama = format!("ollama/ollama@sha256:{}", "0c".repeat(32));
    sqlx::query("UPDATE pool SET images = images || $1").bind(vec![ollama.clone()]).execute(&w.f.db).await.unwrap();
    assert_eq!(w.worker.pass().await.unwrap().applied, 1, "a new pool image is pulled too");
    assert!(pulled(daemon_sets.get("berth-image-cache").await.unwrap()).contains(&ollama));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_openshift_the_workspace_gets_a_route() {
    let mut w = world().await;
    w.worker.cluster.expose = server::provisioner::manifests::Expose::Route;
    let id = w.open_booking().await;
    let report = w.worker.pass().await.unwrap();
    assert_eq!((report.applied, report.errors.len()), (16, 0), "{report:?}");
    let resource =
        kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk("route.openshift.io", "v1", "Route"));
    let routes: Api<kube::api::DynamicObject> =
        Api::namespaced_with(w.worker.client.clone(), &World::namespace(id), &resource);
    let route = routes.get("workspace").await.unwrap();
    assert_eq!(route.data["spec"]["host"], format!("{}.berth.local", World::namespace(id)));
    let ingresses: Api<k8s_openapi::api::networking::v1::Ingress> =
        Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    assert!(ingresses.get_opt("workspace").await.unwrap().is_none());
    let before = w.fake.writes();
    w.worker.pass().await.unwrap();
    assert_eq!(w.fake.writes(), before, "converged with a Route too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_snapshot_lists_no_secret_and_keeps_only_the_sessions_namespaces() {
    let w = world().await;
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    // A decoy carrying Berth's label in a namespace that is no session's.
    let decoys: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(w.worker.client.clone(), "default");
    let decoy = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "decoy", "labels": { "app.kubernetes.io/managed-by": "berth" } },
        "data": { "payload": "x".repeat(10_000) },
    }))
    .unwrap();
    decoys.create(&Default::default(), &decoy).await.unwrap();
    let namespaces = [World::namespace(id)].into_iter().collect();
    let snapshot =
        server::provisioner::snapshot::Snapshot::read(&w.worker.client, &namespaces, 0, std::time::Duration::ZERO)
            .await
            .unwrap();
    assert_eq!(snapshot.len(), 14, "the session's 15 objects but its access Secret, which is never read");
    let secret = serde_json::json!({
        "kind": "Secret", "metadata": { "name": "berth-workspace-access", "namespace": World::namespace(id) },
    });
    assert_eq!(snapshot.get(&secret), Some(&serde_json::Value::Null), "no token in the worker's memory");
    let quota = serde_json::json!({
        "kind": "ResourceQuota", "metadata": { "name": "berth-session", "namespace": World::namespace(id) },
    });
    let quota = snapshot.get(&quota).unwrap();
    assert!(quota["spec"].is_null(), "other kinds are read as metadata: {quota}");
    assert!(quota["metadata"]["managedFields"].is_null(), "without who wrote which field");
    let applied = &quota["metadata"]["annotations"][server::provisioner::manifests::APPLIED_ANNOTATION];
    assert_eq!(applied.as_str().map(str::len), Some(16), "stamped with the digest it was applied with: {quota}");
    let workspace = serde_json::json!({
        "kind": "Deployment", "metadata": { "name": "workspace", "namespace": World::namespace(id) },
    });
    let workspace = snapshot.get(&workspace).unwrap();
    assert!(workspace["spec"]["template"].is_object(), "the workspace is read whole, for its status: {workspace}");
    let decoy = serde_json::json!({ "kind": "ConfigMap", "metadata": { "name": "decoy", "namespace": "default" } });
    assert!(snapshot.get(&decoy).is_none(), "Berth's label outside its sessions proves nothing");

    // More objects of a kind than a page holds (500): all of them, whether
    // the server pages (the real one: real_cluster.rs) or, like the
    // simulated one and an API server's watch cache, sends the whole list.
    let inside: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    for i in 0..600 {
        let extra = serde_json::json!({ "metadata": { "name": format!("extra-{i}"),
            "labels": { "app.kubernetes.io/managed-by": "berth" } } });
        inside.create(&Default::default(), &serde_json::from_value(extra).unwrap()).await.unwrap();
    }
    let snapshot =
        server::provisioner::snapshot::Snapshot::read(&w.worker.client, &namespaces, 0, std::time::Duration::ZERO)
            .await
            .unwrap();
    assert_eq!(snapshot.len(), 14 + 600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_the_image_cache_off_deletes_berths_daemon_set_and_nothing_else() {
    let mut w = world().await;
    w.worker.cluster.image_cache = Some(server::provisioner::manifests::ImageCache {
        images: vec![],
        registries: vec![],
        node_selector: Default::default(),
        pause_image: "registry.k8s.io/pause:3.10".into(),
    });
    w.worker.pass().await.unwrap();
    let daemon_sets: Api<k8s_openapi::api::apps::v1::DaemonSet> = Api::namespaced(w.worker.client.clone(), "berth");
    assert!(daemon_sets.get_opt("berth-image-cache").await.unwrap().is_some());
    assert!(!w.worker.remove_disabled_image_cache().await.unwrap(), "still switched on: kept");

    w.worker.cluster.image_cache = None;
    assert!(w.worker.remove_disabled_image_cache().await.unwrap());
    assert!(daemon_sets.get_opt("berth-image-cache").await.unwrap().is_none());

    // Someone else's DaemonSet of that name is not Berth's to delete.
    let foreign = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": { "name": "berth-image-cache", "namespace": "berth", "labels": { "team": "other" } },
        "spec": {
            "selector": { "matchLabels": { "app": "x" } },
            "template": { "metadata": { "labels": { "app": "x" } }, "spec": { "containers": [{ "name": "x", "image": "x" }] } },
        },
    });
    daemon_sets.create(&Default::default(), &serde_json::from_value(foreign).unwrap()).await.unwrap();
    assert!(!w.worker.remove_disabled_image_cache().await.unwrap());
    assert!(daemon_sets.get_opt("berth-image-cache").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_gets_none_of_another_pools_kinds_and_runs_only_on_its_own_pools_nodes() {
    let w = world().await;
    // Pool B: bigger MIG slices on other nodes, open to every tenant.
    let pool_b = serde_json::json!({
        "name": "lab-b", "kinds": [{ "kind": "nvidia.com/mig-3g.48gb", "capacity": 2 }],
        "node_selector": { "berth.io/pool": "b" },
        "tolerations": [{ "key": "dedicated", "operator": "Equal", "value": "b", "effect": "NoSchedule" }],
    });
    let (status, pool_b) = w.f.call(axum::http::Method::POST, "/api/v1/pools", Some(&w.f.admin), Some(pool_b)).await;
    assert_eq!(status, 201, "{pool_b}");
    let in_a = w.open_booking().await;
    let body = serde_json::json!({
        "pool_id": pool_b["id"], "kind": "nvidia.com/mig-3g.48gb", "quantity": 1,
        "start": common::current_slot(), "end": slot(4), "mode": "interactive",
    });
    let (status, booked) = w.f.call(axum::http::Method::POST, "/api/v1/bookings", Some(&w.f.bob), Some(body)).await;
    assert_eq!(status, 201, "{booked}");
    let in_b: uuid::Uuid = booked["id"].as_str().unwrap().parse().unwrap();
    let report = w.worker.pass().await.unwrap();
    assert!(report.errors.is_empty(), "{report:?}");

    let ns_b = format!("berth-team-b-{}", &in_b.simple().to_string()[..8]);
    for (ns, booked, zero, selector) in [
        (
            World::namespace(in_a),
            MIG,
            ["nvidia.com/mig-3g.48gb", "nvidia.com/gpu"],
            ("nvidia.com/gpu.product", "NVIDIA-H100-NVL"),
        ),
        (ns_b.clone(), "nvidia.com/mig-3g.48gb", [MIG, "nvidia.com/gpu"], ("berth.io/pool", "b")),
    ] {
        let quotas: Api<ResourceQuota> = Api::namespaced(w.worker.client.clone(), &ns);
        let hard = quotas.get("berth-session").await.unwrap().spec.unwrap().hard.unwrap();
        assert_ne!(hard[&format!("requests.{booked}")].0, "0", "{ns} has its booked kind");
        for kind in zero.iter().chain(&["amd.com/gpu", "nvidia.com/gpu.shared"]) {
            assert_eq!(hard[&format!("requests.{kind}")].0, "0", "{ns}: no {kind}");
        }
        let deployments: Api<Deployment> = Api::namespaced(w.worker.client.clone(), &ns);
        let pod = deployments.get("workspace").await.unwrap().spec.unwrap().template.spec.unwrap();
        let wanted = [(selector.0.to_string(), selector.1.to_string())].into();
        assert_eq!(pod.node_selector, Some(wanted), "{ns} runs on its own pool's nodes");
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(w.worker.client.clone());
        let annotations = namespaces.get(&ns).await.unwrap().metadata.annotations.unwrap();
        let pair = format!("{}={}", selector.0, selector.1);
        assert_eq!(annotations["berth.io/node-selector.0"], pair);
        assert_eq!(annotations["scheduler.alpha.kubernetes.io/node-selector"], pair);
        assert_eq!(annotations["openshift.io/node-selector"], pair);
        assert_eq!(annotations["berth.io/gpu-kind"], booked);
    }
    let deployments: Api<Deployment> = Api::namespaced(w.worker.client.clone(), &ns_b);
    let pod = deployments.get("workspace").await.unwrap().spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.tolerations.unwrap()[0].key.as_deref(), Some("dedicated"), "pool B's tolerations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_binding_of_an_earlier_version_is_deleted_by_the_next_repair() {
    let w = world().await;
    let id = w.open_booking().await;
    w.worker.pass().await.unwrap();
    w.workspace_becomes_ready(id).await;
    w.worker.pass().await.unwrap();
    assert_eq!(w.state(id).await, "active");
    let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> =
        Api::namespaced(w.worker.client.clone(), &World::namespace(id));
    let old = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": { "name": "berth-session-admin", "labels": { "app.kubernetes.io/managed-by": "berth" } },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin" },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ada@a.test" }],
    });
    bindings.create(&Default::default(), &serde_json::from_value(old).unwrap()).await.unwrap();
    w.worker.repair_pass().await.unwrap();
    assert!(bindings.get_opt("berth-session-admin").await.unwrap().is_none(), "the admin binding is gone");
    assert!(bindings.get_opt("berth-session-user").await.unwrap().is_some());
    let before = w.fake.writes();
    w.worker.repair_pass().await.unwrap();
    assert_eq!(w.fake.writes(), before, "converged again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_the_worker_completes_withdraws_its_open_extension_request() {
    let w = world().await;
    let path = format!("/api/v1/pools/{}", w.f.lab);
    w.f.call(axum::http::Method::PATCH, &path, Some(&w.f.admin), Some(serde_json::json!({"requires_approval": true})))
        .await;
    let id = w.open_booking().await;
    let approve = format!("/api/v1/bookings/{id}/approve");
    w.f.call(axum::http::Method::POST, &approve, Some(&w.f.admin), None).await;
    let extend = format!("/api/v1/bookings/{id}/extend");
    let (status, request) =
        w.f.call(axum::http::Method::POST, &extend, Some(&w.f.ada), Some(serde_json::json!({"end": slot(8)}))).await;
    assert_eq!(status, 202, "{request}");
    // The window closes before any admin decided.
    sqlx::query(
        "UPDATE booking SET ends_at = now() - interval '1 second', starts_at = now() - interval '1 hour' WHERE id = $1",
    )
    .bind(id)
    .execute(&w.f.db)
    .await
    .unwrap();
    w.worker.pass().await.unwrap();
    assert_eq!(w.state(id).await, "completed");
    let request_id: uuid::Uuid = request["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(w.state(request_id).await, "canceled", "the held time is free again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_boundary_is_the_nearest_approved_start_or_running_end() {
    let w = world().await;
    let next = || app::backend::sessions::due::next_boundary(&w.f.db, None);
    assert_eq!(next().await.unwrap(), None, "nothing booked, no timer");
    let open = w.open_booking().await;
    assert_eq!(next().await.unwrap(), Some(slot(4)), "the open window's end");
    let (_, soon) = w.f.book(&w.f.bob, MIG, 1, slot(2), slot(6)).await;
    assert_eq!(next().await.unwrap(), Some(slot(2)), "an approved start before it");
    let cancel = format!("/api/v1/bookings/{}/cancel", soon["id"].as_str().unwrap());
    w.f.call(axum::http::Method::POST, &cancel, Some(&w.f.bob), Some(serde_json::json!({}))).await;
    assert_eq!(next().await.unwrap(), Some(slot(4)), "canceled windows are no boundary");
    let cancel = format!("/api/v1/bookings/{open}/cancel");
    w.f.call(axum::http::Method::POST, &cancel, Some(&w.f.ada), Some(serde_json::json!({}))).await;
    assert_eq!(next().await.unwrap(), None);
}
