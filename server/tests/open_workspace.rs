//! `GET /bookings/{id}/open`: the owner of an active booking is redirected to
//! the workspace with the token from the session's Secret; nobody else is,
//! and the token is nowhere in the database.

mod common;

use axum::body::Body;
use axum::http::{header, Request};
use common::{slot, test_state, Fixture, MIG};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use server::worker::manifests::Cluster;
use server::worker::reconcile::Reconciler;
use server::worker::simulated::SimulatedCluster;
use tower::ServiceExt;

async fn open(app: &axum::Router, id: &str, token: Option<&str>) -> (u16, Option<String>, Option<String>) {
    let mut request = Request::get(format!("/bookings/{id}/open"));
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let response = app.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let header = |name| response.headers().get(name).map(|v: &header::HeaderValue| v.to_str().unwrap().to_string());
    (response.status().as_u16(), header(header::LOCATION), header(header::CACHE_CONTROL))
}

/// Everything logged, at every level, while the test runs.
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn only_the_owner_of_an_active_booking_is_sent_to_the_workspace_with_its_token() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber =
        tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_writer(move || writer.clone()).finish();
    // The test runs on one thread, so this subscriber sees the worker, the
    // kube client and the handler.
    let _logging = tracing::subscriber::set_default(subscriber);
    let f = Fixture::new().await;
    let cluster = SimulatedCluster::start(true).await;
    let mode = app::model::ClusterMode { simulated: true };
    let app = server::router(test_state(f.db.clone()).with_cluster(Cluster::default(), mode, cluster.client()));
    let (status, body) = f.book(&f.ada, MIG, 1, slot(-1), slot(4)).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().unwrap().to_string();

    assert_eq!(open(&app, &id, Some(&f.ada)).await.0, 409, "not yet provisioned");
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);

    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    let secrets: Api<Secret> = Api::namespaced(cluster.client(), &ns);
    let secret = secrets.get("berth-workspace-access").await.unwrap();
    let token = secret.string_data.unwrap()["token"].clone();
    assert_eq!(token.len(), 48, "24 random bytes, hex");

    let (status, location, cache) = open(&app, &id, Some(&f.ada)).await;
    assert_eq!(status, 303);
    assert_eq!(location.unwrap(), format!("https://{ns}.berth.local/?token={token}"));
    assert_eq!(cache.as_deref(), Some("no-store"));
    assert_eq!(open(&app, &id, Some(&f.carol)).await.0, 403, "a teammate may see the booking, not open it");
    assert_eq!(open(&app, &id, Some(&f.admin)).await.0, 403, "nor may an admin");
    assert_eq!(open(&app, &id, Some(&f.bob)).await.0, 404, "another tenant does not see it");
    assert_eq!(open(&app, &id, None).await.0, 401);
    assert_eq!(open(&app, "not-a-uuid", Some(&f.ada)).await.0, 404, "names nothing, as in the REST API");

    // The token lives in the cluster only: no row of any table holds it.
    let tables: Vec<String> = sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'")
        .fetch_all(&f.db)
        .await
        .unwrap();
    for table in tables {
        let hits: i64 =
            sqlx::query_scalar(&format!("SELECT count(*) FROM \"{table}\" t WHERE to_jsonb(t)::text LIKE $1"))
                .bind(format!("%{token}%"))
                .fetch_one(&f.db)
                .await
                .unwrap();
        assert_eq!(hits, 0, "table {table} holds the workspace token");
    }

    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(logged.contains("berth-workspace-access"), "the subscriber saw the secret being read");
    assert!(!logged.contains(&token), "the workspace token was logged");

    // Without a cluster connection the portal says so instead of failing.
    let detached = server::router(test_state(f.db.clone()));
    assert_eq!(open(&detached, &id, Some(&f.ada)).await.0, 503);
}
