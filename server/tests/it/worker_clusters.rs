//! One Berth, several clusters (issue 49), each an in-memory API server
//! (`SimulatedCluster`) with bookings in a real PostgreSQL: each cluster's
//! worker leads behind that cluster's lease, a cluster that goes down fails
//! alone, and a cluster's lease moves between workers without a double start.
//! The same claims on real API servers are the real-server suite's.

use crate::common;

use common::{Fixture, MIG};
use serde_json::json;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::{ClusterRef, Policy, Reconciler};
use server::provisioner::simulated::SimulatedCluster;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

fn quick() -> Policy {
    Policy { retry_delay: Duration::from_millis(1), ..Policy::default() }
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A worker for `cluster` (by name) talking to `api`.
async fn worker_for(f: &Fixture, cluster: &str, api: &Arc<SimulatedCluster>) -> Reconciler {
    let id: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = $1").bind(cluster).fetch_one(&f.db).await.unwrap();
    let mut worker = Reconciler::new(f.db.clone(), api.client(), Cluster::default());
    worker.policy = quick();
    worker.drives = Some(ClusterRef { id, name: cluster.into() });
    worker
}

/// A second cluster, `east`, with a pool of four MIG slices on it.
async fn east(f: &Fixture) -> Uuid {
    f.pool_on_new_cluster("east", "simulated", json!({"name": "east-mig", "kinds": [{"kind": MIG, "capacity": 4}]}))
        .await
}

async fn book_on(f: &Fixture, pool: Uuid) -> Uuid {
    common::world::book_now(f, MIG, 1, "interactive", pool).await
}

async fn unreachable_since(f: &Fixture, cluster: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    sqlx::query_scalar(
        "SELECT s.unreachable_since FROM cluster_status s JOIN cluster c ON c.id = s.cluster_id WHERE c.name = $1",
    )
    .bind(cluster)
    .fetch_optional(&f.db)
    .await
    .unwrap()
    .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clusters_converge_together_and_one_that_goes_down_fails_alone() {
    let f = Fixture::new().await;
    let east_pool = east(&f).await;
    let (west_api, east_api) = (SimulatedCluster::start(true).await, SimulatedCluster::start(true).await);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let west = tokio::spawn(server::provisioner::run::run(worker_for(&f, "default", &west_api).await, stopped.clone()));
    let east = tokio::spawn(server::provisioner::run::run(worker_for(&f, "east", &east_api).await, stopped));

    // A session on each cluster, each on its own API server only.
    let (on_west, on_east) = (book_on(&f, f.lab).await, book_on(&f, east_pool).await);
    eventually(
        "both sessions are active",
        async || f.booking_state(on_west).await == "active" && f.booking_state(on_east).await == "active",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!((west_api.namespace_names().len(), east_api.namespace_names().len()), (1, 1));

    // East's API server goes down mid-window: west keeps starting sessions,
    // and east is marked unreachable within a pass; its session waits.
    east_api.down.store(true, Ordering::SeqCst);
    let (second_west, second_east) = (book_on(&f, f.lab).await, book_on(&f, east_pool).await);
    eventually("east is unreachable", async || unreachable_since(&f, "east").await.is_some(), Duration::from_secs(10))
        .await;
    eventually(
        "west starts its second session",
        async || f.booking_state(second_west).await == "active",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(unreachable_since(&f, "default").await, None, "west is fine");
    assert_eq!(f.booking_state(second_east).await, "approved", "east's new session waits for east");
    let error: Option<String> = sqlx::query_scalar(
        "SELECT s.error FROM cluster_status s JOIN cluster c ON c.id = s.cluster_id WHERE c.name = 'east'",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!(error.as_deref().is_some_and(|e| e.contains("the cluster")), "{error:?}");
    // Its cards say so, in the reader's zone; west's do not.
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let cards = app::backend::bookings::mine::load(&f.db, &ada, "Europe/Berlin").await.unwrap();
    let note = |id: Uuid| cards.live.iter().find(|c| c.booking.id == id).and_then(|c| c.cluster_down.clone());
    assert!(
        note(second_east).is_some_and(|n| n.starts_with("Cluster east unreachable since ")),
        "{:?}",
        note(second_east)
    );
    assert!(note(on_east).is_some(), "the running session's card too");
    assert_eq!((note(on_west), note(second_west)), (None, None));
    // East's calendar warns whoever is about to book there; west's does not.
    let calendar = |pool: Uuid| app::backend::calendar::CalendarQuery {
        pool: Some(pool),
        date: None,
        days: 1,
        tz: "Europe/Berlin".into(),
    };
    let east_calendar = app::backend::calendar::load(&f.db, &ada, &calendar(east_pool)).await.unwrap();
    assert!(east_calendar.cluster_down.is_some_and(|n| n.contains("bookings here are still taken")));
    let west_calendar = app::backend::calendar::load(&f.db, &ada, &calendar(f.lab)).await.unwrap();
    assert_eq!(west_calendar.cluster_down, None);
    // So does the API's answer to a booking there (the CLI prints it); not west's.
    let later = |pool: Uuid| {
        json!({"pool_id": pool, "kind": MIG, "quantity": 1, "start": common::slot(8),
        "end": common::slot(9), "mode": "interactive"})
    };
    let (status, there) =
        f.call(axum::http::Method::POST, "/api/v1/bookings", Some(&f.ada), Some(later(east_pool))).await;
    assert_eq!(status, 201, "{there}");
    let warning = there["warning"].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("cluster east unreachable since 20") && warning.contains("session starts only once"),
        "{there}"
    );
    let (status, here) = f.call(axum::http::Method::POST, "/api/v1/bookings", Some(&f.ada), Some(later(f.lab))).await;
    assert_eq!((status.as_u16(), here.get("warning")), (201, None), "{here}");
    // The worker page lists each cluster: east unreachable, west fine.
    let admin = app::backend::accounts::tokens::authenticate(&f.db, &f.admin).await.unwrap().unwrap();
    let status = app::backend::sessions::status::status(&f.db, &admin).await.unwrap();
    let health: Vec<(&str, bool, bool)> = status
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.unreachable_since.is_some(), c.last_success_at.is_some()))
        .collect();
    assert_eq!(health, [("default", false, true), ("east", true, true)]);

    // Back up: east's session converges, once, and east is reachable again.
    east_api.down.store(false, Ordering::SeqCst);
    eventually(
        "east converges again",
        async || f.booking_state(second_east).await == "active",
        Duration::from_secs(40),
    )
    .await;
    eventually("east is reachable", async || unreachable_since(&f, "east").await.is_none(), Duration::from_secs(40))
        .await;
    assert_eq!((west_api.namespace_names().len(), east_api.namespace_names().len()), (2, 2), "no duplicates");
    stop.send(true).unwrap();
    west.await.unwrap().unwrap();
    east.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_lease_moves_between_workers_without_a_double_start() {
    let f = Fixture::new().await;
    let api = SimulatedCluster::start(true).await;
    // The hub drives the cluster; a worker inside it (the member shape) waits
    // on the same cluster's lease.
    let (stop_hub, hub_stopped) = tokio::sync::watch::channel(false);
    let hub = tokio::spawn(server::provisioner::run::run(worker_for(&f, "default", &api).await, hub_stopped));
    let first = book_on(&f, f.lab).await;
    eventually(
        "the hub starts the session",
        async || f.booking_state(first).await == "active",
        Duration::from_secs(20),
    )
    .await;
    let (stop_member, member_stopped) = tokio::sync::watch::channel(false);
    let member = tokio::spawn(server::provisioner::run::run(worker_for(&f, "default", &api).await, member_stopped));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let writes_for_one = api.writes();

    // The hub lets go; the member takes the lease and starts the next one.
    stop_hub.send(true).unwrap();
    hub.await.unwrap().unwrap();
    let second = book_on(&f, f.lab).await;
    eventually(
        "the member starts the next session",
        async || f.booking_state(second).await == "active",
        Duration::from_secs(20),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(api.namespace_names().len(), 2);
    assert_eq!(api.writes(), 2 * writes_for_one, "each session's objects applied once: no double start");
    stop_member.send(true).unwrap();
    member.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_drives_its_own_cluster_and_each_simulated_one_each_behind_its_lease() {
    let f = Fixture::new().await;
    let east_pool = east(&f).await;
    let own = SimulatedCluster::start(true).await;
    let db = f.db.clone();
    let build: server::provisioner::clusters::Build = Arc::new(move |client, _row, _own| {
        let mut worker = Reconciler::new(db.clone(), client, Cluster::default());
        worker.policy = quick();
        worker
    });
    // `make run`'s shape: its own cluster, and every simulated one.
    let reach =
        Arc::new(server::provisioner::cluster_clients::ClusterClients::new("default", own.client()).simulating());
    let fleet = server::provisioner::clusters::Fleet { db: f.db.clone(), reach: reach.clone(), hub: false, build };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(fleet.run(stopped));
    let (on_own, on_east) = (book_on(&f, f.lab).await, book_on(&f, east_pool).await);
    eventually(
        "both sessions are active",
        async || f.booking_state(on_own).await == "active" && f.booking_state(on_east).await == "active",
        Duration::from_secs(20),
    )
    .await;
    // East's session is on east's own in-memory API server, not this one.
    assert_eq!(own.namespace_names().len(), 1);
    let led: Vec<(String, bool)> = sqlx::query_as(
        "SELECT c.name, s.last_success_at IS NOT NULL FROM cluster c JOIN cluster_status s ON s.cluster_id = c.id
         ORDER BY c.name",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    assert_eq!(led, [("default".to_string(), true), ("east".to_string(), true)]);
    // The portal of the same process opens each workspace on its own
    // cluster (east's in-memory one is the fleet's), at the address the
    // worker driving it recorded.
    let mode = app::model::ClusterMode { simulated: true, kueue: false };
    let portal = server::router(common::test_state(f.db.clone()).with_cluster(Cluster::default(), mode, reach));
    for id in [on_own, on_east] {
        let request = axum::http::Request::get(format!("/bookings/{id}/open"))
            .header("authorization", format!("Bearer {}", f.ada))
            .body(axum::body::Body::empty())
            .unwrap();
        let response = tower::ServiceExt::oneshot(portal.clone(), request).await.unwrap();
        assert_eq!(response.status(), 303);
        let location = response.headers()["location"].to_str().unwrap();
        let recorded: String = sqlx::query_scalar("SELECT workspace_url FROM session_status WHERE booking_id = $1")
            .bind(id)
            .fetch_one(&f.db)
            .await
            .unwrap();
        assert!(location.starts_with(&recorded) && location.contains("code="), "{location}");
    }
    stop.send(true).unwrap();
    running.await.unwrap().unwrap();
}
