//! People who leave lose everything at once: an owner removed from the
//! booking's tenant gets no workspace code and can no longer extend, end or
//! cancel the booking, or see it as theirs (the rule the worker already
//! applies to the session's users); back in the tenant, it is theirs again.
//! (What a co-owner left behind is removed by the worker: real_cluster.rs.)

use crate::common;

use axum::http::{header, Method};
use common::{call, slot, test_state, Fixture};
use serde_json::json;
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;

#[tokio::test]
async fn an_owner_removed_from_the_bookings_tenant_can_no_longer_open_extend_end_or_cancel_it() {
    let f = Fixture::new().await;
    let (cluster, app, id) = common::portal_on_memory_cluster(&f, false).await;
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let open = format!("/bookings/{id}/open");
    assert_eq!(call(&app, Method::GET, &open, Some(&f.ada), None).await.0, 303, "while she is in team-a");

    // An admin removes ada from team-a (the console's "remove from tenant"),
    // on the portal that has just read ada's token: it forgets the token's
    // tenants at once, not within the cache's few seconds.
    let ada: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = 'ada@a.test'").fetch_one(&f.db).await.unwrap();
    let remove = axum::http::Request::post("/rpc/users/remove_tenant")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.admin))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(axum::body::Body::from(format!("user_id={ada}&tenant=team-a")))
        .unwrap();
    let (status, removed) = common::raw(&app, remove).await;
    assert_eq!(status, 200, "{removed}");
    let after = app.clone();
    assert_eq!(call(&after, Method::GET, &open, Some(&f.ada), None).await.0, 404, "no code for who left");
    let booking = format!("/api/v1/bookings/{id}");
    for (method, path, body) in [
        (Method::GET, booking.clone(), None),
        (Method::POST, format!("{booking}/extend"), Some(json!({ "end": slot(6) }))),
        (Method::POST, format!("{booking}/end"), None),
        (Method::POST, format!("{booking}/cancel"), None),
    ] {
        let (status, body) = call(&after, method.clone(), &path, Some(&f.ada), body).await;
        assert_eq!(status, 404, "{method} {path}: {body}");
    }
    let (_, mine) = call(&after, Method::GET, "/api/v1/bookings?mine=true", Some(&f.ada), None).await;
    assert_eq!(mine, json!([]), "nor is it in her list");
    let (_, seen) = call(&after, Method::GET, &booking, Some(&f.admin), None).await;
    assert_eq!(seen["state"], "active", "nothing she tried changed it");

    // Back in the tenant, it is hers again.
    sqlx::query("INSERT INTO membership (user_id, tenant_id) SELECT $1, id FROM tenant WHERE slug = 'team-a'")
        .bind(ada)
        .execute(&f.db)
        .await
        .unwrap();
    // A fresh portal: a tenant given is seen within the cache's few seconds.
    let mode = app::model::ClusterMode { simulated: false, kueue: false };
    let portal = server::router(test_state(f.db.clone()).with_cluster(
        Cluster::default(),
        mode,
        server::provisioner::cluster_clients::ClusterClients::single(cluster.client()),
    ));
    assert_eq!(call(&portal, Method::GET, &open, Some(&f.ada), None).await.0, 303);
}
