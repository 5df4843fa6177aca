//! On the simulated cluster, "Open workspace" leads to the booking's own
//! page, which says plainly that no workspace runs and shows what would
//! have been opened, not to a host that does not exist.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request};
use common::Fixture;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use tower::ServiceExt;

/// As a browser asks (a page, `Accept: text/html`).
async fn open(app: &axum::Router, id: &str, token: &str) -> axum::response::Response {
    let request = Request::get(format!("/bookings/{id}/open"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8")
        .body(Body::empty())
        .unwrap();
    app.clone().oneshot(request).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulated_cluster_open_workspace_says_plainly_that_none_runs() {
    let f = Fixture::new().await;
    let (cluster, app, id) = common::portal_on_memory_cluster(&f, true).await;
    assert_eq!(open(&app, &id, &f.ada).await.status(), 409, "not yet provisioned");
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);

    // The booking's own page, in the site's frame with its navigation, says so.
    let response = open(&app, &id, &f.ada).await;
    assert_eq!(response.status(), 303, "to the booking's page, not to a host that does not exist");
    let location = response.headers().get(header::LOCATION).unwrap().to_str().unwrap().to_string();
    assert_eq!(location, format!("/bookings/{id}?opened=simulated"));
    assert_eq!(response.headers().get(header::CACHE_CONTROL).unwrap(), "no-store");
    let request = Request::get(&location)
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .header(header::ACCEPT, "text/html")
        .body(Body::empty())
        .unwrap();
    let page = app.clone().oneshot(request).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = String::from_utf8(http_body_util::BodyExt::collect(page.into_body()).await.unwrap().to_bytes().to_vec())
        .unwrap();
    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    assert!(html.contains("No workspace runs: this is a simulated cluster"), "{html}");
    assert!(html.contains(&format!("https://{ns}.berth.local")), "what would have been opened: {html}");
    assert!(html.contains(r#"id="who-name""#), "the site's navigation: {html}");
    assert!(!html.contains("code="), "no one-time code is minted for nothing");
    let opened: i64 = sqlx::query_scalar("SELECT count(*) FROM workspace_open WHERE booking_id = $1::uuid")
        .bind(&id)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(opened, 1, "the open still counts (it makes the simulated GPUs busy)");

    // A script or the CLI (no `text/html`) gets the link, as on a real cluster.
    let request = Request::get(format!("/bookings/{id}/open"))
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 303);
    let location = response.headers().get(header::LOCATION).unwrap().to_str().unwrap();
    assert!(location.starts_with(&format!("https://{ns}.berth.local/.berth/open?code=")), "{location}");
}

/// `make run`'s simulated cluster keeps homes and model caches as a real
/// one does: a person's next session binds the very volumes of the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulated_cluster_a_persons_next_session_binds_their_kept_home_and_cache() {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    let f = Fixture::new().await;
    let (cluster, _app, first) = common::portal_on_memory_cluster(&f, true).await;
    cluster.storage.store(true, std::sync::atomic::Ordering::SeqCst);
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let report = worker.repair_pass().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let kept: Vec<(String, String)> =
        sqlx::query_as("SELECT purpose, volume FROM home WHERE gone_at IS NULL ORDER BY purpose DESC")
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert_eq!(kept.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["home", "cache"], "{kept:?}");
    let volumes: kube::Api<PersistentVolume> = kube::Api::all(cluster.client());
    for (_, volume) in &kept {
        let pv = volumes.get(volume).await.unwrap().spec.unwrap();
        assert_eq!(pv.persistent_volume_reclaim_policy.as_deref(), Some("Retain"));
    }

    // She ends it; the volumes stay, released; her next session binds them.
    let (status, body) =
        f.call(axum::http::Method::POST, &format!("/api/v1/bookings/{first}/end"), Some(&f.ada), None).await;
    assert_eq!(status, 200, "{body}");
    worker.pass().await.unwrap();
    for (_, volume) in &kept {
        let pv = volumes.get(volume).await.unwrap();
        assert_eq!(pv.status.and_then(|s| s.phase).as_deref(), Some("Released"), "kept past the window");
    }
    let (status, body) = f.book(&f.ada, common::MIG, 1, common::current_slot(), common::slot(4)).await;
    assert_eq!(status, 201, "{body}");
    let second = body["id"].as_str().unwrap().to_string();
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let ns = format!("berth-team-a-{}", &second.replace('-', "")[..8]);
    let claims: kube::Api<PersistentVolumeClaim> = kube::Api::namespaced(cluster.client(), &ns);
    let ada: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(&f.db).await.unwrap();
    for ((_, volume), claim) in kept.iter().zip([format!("home-{ada}"), format!("cache-{ada}")]) {
        let bound = claims.get(&claim).await.unwrap();
        assert_eq!(bound.spec.unwrap().volume_name.as_ref(), Some(volume), "{claim}: the same volume");
        assert_eq!(bound.status.unwrap().phase.as_deref(), Some("Bound"));
    }
}

/// `make run`'s simulated cluster plays the cluster admin who made each
/// tenant's team cache volumes: on a pool naming their class, a session
/// mounts one of them, and its card says the cache is the team's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulated_cluster_a_pool_with_a_team_cache_mounts_one_of_the_teams_volumes() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use server::provisioner::simulated::storage::SIMULATED_TEAM_CACHE_CLASS;
    let f = Fixture::new().await;
    let lab = format!("/api/v1/pools/{}", f.lab);
    let body = serde_json::json!({ "team_cache_class": SIMULATED_TEAM_CACHE_CLASS });
    let (status, body) = f.call(axum::http::Method::PATCH, &lab, Some(&f.admin), Some(body)).await;
    assert_eq!(status, 200, "{body}");
    let (cluster, _app, first) = common::portal_on_memory_cluster(&f, true).await;
    cluster.storage.store(true, std::sync::atomic::Ordering::SeqCst);
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let first: uuid::Uuid = first.parse().unwrap();
    let ns = format!("berth-team-a-{}", &first.simple().to_string()[..8]);
    let claims: kube::Api<PersistentVolumeClaim> = kube::Api::namespaced(cluster.client(), &ns);
    let bound = claims.get("team-cache-team-a").await.unwrap();
    assert_eq!(bound.spec.unwrap().volume_name.as_deref(), Some("team-a-models-1"));
    assert_eq!(bound.status.unwrap().phase.as_deref(), Some("Bound"));
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let page = app::backend::bookings::mine::load(&f.db, &ada, "Europe/Berlin").await.unwrap();
    let card = page.live.into_iter().find(|c| c.booking.id == first).unwrap();
    let sentence = card.persistence.unwrap_or_default();
    assert!(sentence.contains("and the team's shared model cache (/models) stays;"), "{sentence}");
    let ending = card.home_note.unwrap_or_default();
    assert!(ending.ends_with("the workspace and everything else in its namespace are deleted now."), "{ending}");
}
