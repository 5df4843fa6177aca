//! On the simulated cluster, "Open workspace" leads to a page that says
//! plainly that no workspace runs and shows what would have been opened,
//! not to a host that does not exist.

mod common;

use axum::body::Body;
use axum::http::{header, Request};
use common::Fixture;
use server::worker::manifests::Cluster;
use server::worker::reconcile::Reconciler;
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

    let response = open(&app, &id, &f.ada).await;
    assert_eq!(response.status(), 200, "a page, not a redirect to a host that does not exist");
    assert!(response.headers().get(header::LOCATION).is_none());
    let html =
        String::from_utf8(http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes().to_vec())
            .unwrap();
    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    assert!(html.contains("No workspace runs: this is a simulated cluster"), "{html}");
    assert!(html.contains(&format!("https://{ns}.berth.local")), "what would have been opened: {html}");
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
