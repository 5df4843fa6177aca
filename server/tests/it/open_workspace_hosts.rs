//! "Open workspace" sends a one-time code only to the session's own host
//! under its cluster's workspace domain. An area of its own: the logging
//! test of open_workspace.rs watches its thread's log, and another test
//! reading the same Secret beside it would settle the log's interest first.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request};
use common::Fixture;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use tower::ServiceExt;

async fn open(app: &axum::Router, id: &str, token: &str) -> (u16, Option<String>) {
    let request = Request::get(format!("/bookings/{id}/open")).header(header::AUTHORIZATION, format!("Bearer {token}"));
    let response = app.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let location = response.headers().get(header::LOCATION).map(|v| v.to_str().unwrap().to_string());
    (response.status().as_u16(), location)
}

/// A code goes only to the session's own host under its cluster's domain:
/// the address is written by a worker (a member's own, in the
/// worker-in-each-cluster shape), which may not send another cluster's
/// sessions' codes elsewhere.
#[tokio::test]
async fn a_code_goes_only_to_the_sessions_own_host_under_its_clusters_domain() {
    let f = Fixture::new().await;
    let (cluster, app, id) = common::portal_on_memory_cluster(&f, false).await;
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    let (status, location) = open(&app, &id, &f.ada).await;
    assert_eq!(status, 303);
    assert!(location.unwrap().starts_with(&format!("https://{ns}.berth.local/.berth/open?code=")));
    for elsewhere in [
        "https://collector.example.net/".to_string(),
        format!("https://{ns}.berth.local.example.net/"),
        format!("https://other.{ns}.berth.local/"),
        format!("http://{ns}.berth.local/"),
        format!("https://{ns}.berth.local:8443/"),
        "https://berth-team-a-00000000.berth.local/".to_string(),
    ] {
        sqlx::query("UPDATE session_status SET workspace_url = $2 WHERE booking_id = $1::uuid")
            .bind(&id)
            .bind(&elsewhere)
            .execute(&f.db)
            .await
            .unwrap();
        let (status, location) = open(&app, &id, &f.ada).await;
        assert_eq!((status, location), (503, None), "no code sent to {elsewhere}");
    }
}
