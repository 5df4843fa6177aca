//! Shared bookings: the owner adds co-owners from the same tenant; they see
//! the booking in full, are bound to the session's role and open the
//! workspace; only the owner changes the booking (cancels, moves, extends,
//! ends it); every change is audited; the feed and "mine" list them.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request};
use common::{slot, Fixture, MIG};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::Api;
use serde_json::{json, Value};
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use tower::ServiceExt;

async fn share(f: &Fixture, token: &str, id: &str, email: &str) -> (u16, Value) {
    let path = format!("/api/v1/bookings/{id}/co-owners");
    let (status, body) = f.call(Method::POST, &path, Some(token), Some(json!({ "email": email }))).await;
    (status.as_u16(), body)
}

async fn unshare(f: &Fixture, token: &str, id: &str, email: &str) -> u16 {
    let path = format!("/api/v1/bookings/{id}/co-owners/{email}");
    f.call(Method::DELETE, &path, Some(token), None).await.0.as_u16()
}

async fn get(f: &Fixture, token: &str, path: &str) -> (u16, Value) {
    let (status, body) = f.call(Method::GET, path, Some(token), None).await;
    (status.as_u16(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn co_owners_see_a_shared_booking_and_only_the_owner_changes_it() {
    let f = Fixture::new().await;
    let (status, live) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(4)).await;
    assert_eq!(status, 201, "{live}");
    let live = live["id"].as_str().unwrap().to_string();
    let (status, later) = f.book(&f.ada, MIG, 1, slot(20), slot(22)).await;
    assert_eq!(status, 201, "{later}");
    let later = later["id"].as_str().unwrap().to_string();

    // Refusals name the field and the reason; another tenant's member is
    // refused exactly as an unknown address is (no one learns who exists).
    for (email, reason) in [
        ("bob@b.test", "names no active member of tenant team-a"),
        ("nobody@a.test", "names no active member of tenant team-a"),
        ("ada@a.test", "is the booking owner's own"),
        ("  ", "must not be empty"),
    ] {
        let (status, err) = share(&f, &f.ada, &live, email).await;
        let expected = (422, Some("email"), Some(format!("email: {reason}")));
        assert_eq!(
            (status, err["field"].as_str(), err["message"].as_str().map(String::from)),
            expected,
            "{email}: {err}"
        );
    }
    assert_eq!(share(&f, &f.mia, &live, "carol@a.test").await.0, 403, "a teammate may not share ada's booking");
    assert_eq!(share(&f, &f.bob, &live, "carol@a.test").await.0, 404, "another tenant does not see it");

    let (status, shared) = share(&f, &f.ada, &live, "Carol@A.test").await;
    assert_eq!(status, 200, "{shared}");
    assert_eq!(shared["co_owners"], json!([{ "email": "carol@a.test", "name": "carol" }]));
    assert_eq!(share(&f, &f.ada, &live, "carol@a.test").await.0, 200, "sharing twice changes nothing");
    assert_eq!(share(&f, &f.ada, &later, "carol@a.test").await.0, 200);

    // Carol sees both in full, as hers to act on, and in her own list.
    let (status, seen) = get(&f, &f.carol, &format!("/api/v1/bookings/{live}")).await;
    assert_eq!(status, 200);
    assert_eq!((seen["mine"].as_bool(), seen["co_owned"].as_bool()), (Some(true), Some(true)), "{seen}");
    assert_eq!(seen["user_email"], "ada@a.test");
    let (_, mine) = get(&f, &f.carol, "/api/v1/bookings?mine=true").await;
    let ids: Vec<&str> = mine.as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [live.as_str(), later.as_str()]);
    let (_, feed) = get(&f, &f.carol, "/api/v1/me/calendar-feed").await;
    let path = feed["url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:3000").to_string();
    let (status, ics) = f.call(Method::GET, &path, None, None).await;
    let ics = ics.as_str().unwrap_or_default().to_string();
    assert_eq!(status, 200, "{ics}");
    assert!(
        ics.contains(&format!("UID:{live}@")) && ics.contains(&format!("UID:{later}@")),
        "co-owned ones too:\n{ics}"
    );
    let (_, as_mia) = get(&f, &f.mia, &format!("/api/v1/bookings/{live}")).await;
    assert!(as_mia.get("co_owners").is_none() && as_mia.get("user_email").is_none(), "occupancy only: {as_mia}");

    // Carol shares the session, not the window: one rule for every change
    // to it. She can neither cancel, move, shrink, extend nor end it; ada can.
    let cancel = format!("/api/v1/bookings/{later}/cancel");
    let extend = format!("/api/v1/bookings/{live}/extend");
    let end = format!("/api/v1/bookings/{live}/end");
    let moved = json!({ "start": slot(24), "end": slot(26) });
    let shrunk = json!({ "start": slot(20), "end": slot(21) });
    let attempts = [
        (cancel.clone(), json!({})),
        (format!("/api/v1/bookings/{later}/move"), moved.clone()),
        (format!("/api/v1/bookings/{later}/move"), shrunk),
        (extend.clone(), json!({ "end": slot(5) })),
        (end.clone(), json!({})),
    ];
    for (path, body) in attempts {
        let (status, err) = f.call(Method::POST, &path, Some(&f.carol), Some(body)).await;
        let said = (status.as_u16(), err["message"].as_str());
        assert_eq!(said, (403, Some("only the booking's owner or an admin may do this")), "{path}");
    }
    let (status, extended) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({ "end": slot(5) }))).await;
    assert_eq!(status, 200, "{extended}");
    let (status, ended) = f.call(Method::POST, &end, Some(&f.ada), None).await;
    assert_eq!((status.as_u16(), ended["state"].as_str()), (200, Some("completed")), "{ended}");
    let path = format!("/api/v1/bookings/{later}/move");
    let (status, moved) = f.call(Method::POST, &path, Some(&f.ada), Some(moved)).await;
    assert_eq!(status, 200, "the owner moves it: {moved}");
    let (status, _) = f.call(Method::POST, &cancel, Some(&f.ada), Some(json!({}))).await;
    assert_eq!(status, 200);
    assert_eq!(share(&f, &f.ada, &later, "mia@a.test").await.0, 409, "a canceled booking is no longer shared");

    // Removing: a teammate may not, carol may leave, the owner may remove.
    assert_eq!(unshare(&f, &f.mia, &later, "carol@a.test").await, 403);
    assert_eq!(unshare(&f, &f.carol, &later, "carol@a.test").await, 204, "a co-owner leaves");
    assert_eq!(unshare(&f, &f.ada, &later, "carol@a.test").await, 404, "gone already");
    assert_eq!(unshare(&f, &f.ada, &live, "carol%40a.test").await, 204, "the owner removes");
    let (_, seen) = get(&f, &f.carol, &format!("/api/v1/bookings/{live}")).await;
    assert!(seen.get("user_email").is_none() && seen["mine"] == false, "carol is back to occupancy: {seen}");

    // Who extended and ended is in the booking's trail; every sharing change in the audit log.
    let actors: Vec<(String, String)> = sqlx::query_as(
        "SELECT u.email, e.reason FROM booking_event e JOIN app_user u ON u.id = e.actor_id
         WHERE e.booking_id = $1::uuid AND e.from_state IS NOT NULL ORDER BY e.at, e.id",
    )
    .bind(&live)
    .fetch_all(&f.db)
    .await
    .unwrap();
    assert_eq!(actors.len(), 2, "{actors:?}");
    assert!(actors.iter().all(|(email, _)| email == "ada@a.test"), "{actors:?}");
    let audit: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT u.email, a.action, a.detail FROM audit_event a JOIN app_user u ON u.id = a.actor_id
         WHERE a.action LIKE 'booking.co_owner%' ORDER BY a.at, a.id",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    let expected = [
        ("ada@a.test", "booking.co_owner_add", "Carol@A.test"),
        ("ada@a.test", "booking.co_owner_add", "carol@a.test"),
        ("carol@a.test", "booking.co_owner_remove", "carol@a.test"),
        ("ada@a.test", "booking.co_owner_remove", "carol@a.test"),
    ];
    let audit: Vec<(&str, &str, &str)> = audit.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    assert_eq!(audit, expected);
}

async fn open(app: &axum::Router, id: &str, token: &str) -> u16 {
    let request = Request::get(format!("/bookings/{id}/open")).header(header::AUTHORIZATION, format!("Bearer {token}"));
    app.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap().status().as_u16()
}

/// The workspace's access token and the restart stamp of its pods.
async fn access(client: &kube::Client, ns: &str) -> (String, Option<String>) {
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), ns);
    let secret = serde_json::to_value(secrets.get("berth-workspace-access").await.unwrap()).unwrap();
    let token = match secret["stringData"]["token"].as_str() {
        Some(token) => token.to_string(),
        None => secret["data"]["token"].as_str().unwrap().to_string(),
    };
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client.clone(), ns);
    let template = deployments.get("workspace").await.unwrap().spec.unwrap().template.metadata.unwrap();
    (token, template.annotations.unwrap_or_default().get(server::provisioner::rotate::ROTATED_ANNOTATION).cloned())
}

fn subjects(binding: &RoleBinding) -> Vec<String> {
    binding.subjects.iter().flatten().map(|s| format!("{}:{}", s.kind, s.name)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn co_owners_are_bound_to_the_session_role_and_open_the_workspace_until_removed() {
    let f = Fixture::new().await;
    // The in-memory API server stands in for a real cluster: opening redirects
    // to the gate (simulated mode answers with a page; simulated_workspace.rs).
    let (cluster, app, id) = common::portal_on_memory_cluster(&f, false).await;
    assert_eq!(share(&f, &f.ada, &id, "carol@a.test").await.0, 200);

    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let ns = format!("berth-team-a-{}", &id.replace('-', "")[..8]);
    let bindings: Api<RoleBinding> = Api::namespaced(cluster.client(), &ns);
    let binding = bindings.get("berth-session-user").await.unwrap();
    assert_eq!(subjects(&binding), ["User:ada@a.test", "User:carol@a.test"]);
    assert_eq!(open(&app, &id, &f.carol).await, 303, "the co-owner is sent to the workspace");
    assert_eq!(open(&app, &id, &f.mia).await, 403, "a teammate is not");

    let client = cluster.client();
    let (first, restarted) = access(&client, &ns).await;
    assert_eq!(restarted, None);

    // Removed, carol loses the binding at the next repair, and the link; the
    // token she may have copied opens nothing (a new one, the workspace restarted).
    assert_eq!(unshare(&f, &f.ada, &id, "carol@a.test").await, 204);
    worker.repair_pass().await.unwrap();
    assert_eq!(subjects(&bindings.get("berth-session-user").await.unwrap()), ["User:ada@a.test"]);
    assert_eq!(open(&app, &id, &f.carol).await, 403);
    let (second, restarted) = access(&client, &ns).await;
    assert!(second != first && restarted.is_some(), "rotated and restarted");
    // Added while it runs, mia gains it at the next repair; no one lost it, so no rotation.
    assert_eq!(share(&f, &f.ada, &id, "mia@a.test").await.0, 200);
    worker.repair_pass().await.unwrap();
    assert_eq!(subjects(&bindings.get("berth-session-user").await.unwrap()), ["User:ada@a.test", "User:mia@a.test"]);
    assert_eq!(access(&client, &ns).await, (second.clone(), restarted));
    worker.repair_pass().await.unwrap();
    assert_eq!(access(&client, &ns).await.0, second, "a converged pass rotates nothing");
    // Leaving the tenant ends holding its bookings: the binding, the link, the booking itself.
    sqlx::query("DELETE FROM membership WHERE user_id = (SELECT id FROM app_user WHERE email = 'mia@a.test')")
        .execute(&f.db)
        .await
        .unwrap();
    worker.repair_pass().await.unwrap();
    assert_eq!(subjects(&bindings.get("berth-session-user").await.unwrap()), ["User:ada@a.test"]);
    // 403 while the token cache still knows her as a member, 404 after: never the workspace.
    assert!([403, 404].contains(&open(&app, &id, &f.mia).await));
    let (third, _) = access(&client, &ns).await;
    assert_ne!(third, second);
    // So does the owner: checked like a co-owner, unbound, the token rotated.
    sqlx::query("DELETE FROM membership WHERE user_id = (SELECT id FROM app_user WHERE email = 'ada@a.test')")
        .execute(&f.db)
        .await
        .unwrap();
    worker.repair_pass().await.unwrap();
    assert!(subjects(&bindings.get("berth-session-user").await.unwrap()).is_empty());
    assert_ne!(access(&client, &ns).await.0, third);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_request_of_a_shared_booking_is_shared_too() {
    let f = Fixture::new().await;
    sqlx::query("UPDATE pool SET requires_approval = true WHERE id = $1").bind(f.lab).execute(&f.db).await.unwrap();
    let (status, body) = f.book(&f.ada, MIG, 1, slot(4), slot(6)).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().unwrap().to_string();
    let approve = format!("/api/v1/bookings/{id}/approve");
    assert_eq!(f.call(Method::POST, &approve, Some(&f.admin), Some(json!({}))).await.0, 200);
    assert_eq!(share(&f, &f.ada, &id, "carol@a.test").await.0, 200);
    let extend = format!("/api/v1/bookings/{id}/extend");
    let (status, _) = f.call(Method::POST, &extend, Some(&f.carol), Some(json!({ "end": slot(7) }))).await;
    assert_eq!(status, 403, "only the owner asks for more");
    let (status, request) = f.call(Method::POST, &extend, Some(&f.ada), Some(json!({ "end": slot(7) }))).await;
    assert_eq!(status, 202, "the owner asks, an admin decides: {request}");
    let (_, seen) = get(&f, &f.carol, &format!("/api/v1/bookings/{}", request["id"].as_str().unwrap())).await;
    assert_eq!((seen["co_owned"].as_bool(), seen["extends"].as_str()), (Some(true), Some(id.as_str())), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn co_owners_get_the_bookings_notifications_and_a_pending_one_still_goes_to_admins_only() {
    let f = Fixture::new().await;
    let (status, body) = f.book(&f.ada, MIG, 1, slot(8), slot(10)).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().unwrap().to_string();
    assert_eq!(share(&f, &f.ada, &id, "carol@a.test").await.0, 200);
    for event in ["booking.starting", "booking.pending"] {
        sqlx::query("INSERT INTO notification (event, booking_id, dedupe) VALUES ($1, $2::uuid, $1 || $2)")
            .bind(event)
            .bind(&id)
            .execute(&f.db)
            .await
            .unwrap();
    }
    server::notify::outbox::fan_out(&f.db, true).await.unwrap();
    let deliveries: Vec<(String, String)> = sqlx::query_as(
        "SELECT n.event, u.email FROM notification_delivery d JOIN notification n ON n.id = d.notification_id
         JOIN app_user u ON u.id = d.user_id WHERE d.channel = 'email' ORDER BY n.event, u.email",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    let deliveries: Vec<(&str, &str)> = deliveries.iter().map(|(e, u)| (e.as_str(), u.as_str())).collect();
    assert_eq!(
        deliveries,
        [
            ("booking.pending", "admin@berth.local"),
            ("booking.pending", "root@ops.test"),
            ("booking.starting", "ada@a.test"),
            ("booking.starting", "carol@a.test")
        ]
    );
}

/// Nobody writes where the owner's later sessions read: a shared session
/// works in a folder of its own, never in the owner's kept home or model
/// cache, and a session already working in them is not shared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_never_mounts_the_owners_kept_home_and_a_kept_one_is_not_shared() {
    let f = Fixture::new().await;
    let (cluster, _app, shared) = common::portal_on_memory_cluster(&f, false).await;
    assert_eq!(share(&f, &f.ada, &shared, "carol@a.test").await.0, 200);
    let worker = Reconciler::new(f.db.clone(), cluster.client(), Cluster::default());
    assert_eq!(worker.pass().await.unwrap().started.len(), 1);
    let kept = |id: String| {
        let db = f.db.clone();
        async move {
            let rows: Vec<(String, bool)> =
                sqlx::query_as("SELECT purpose, kept FROM session_home WHERE booking_id = $1::uuid ORDER BY purpose")
                    .bind(id)
                    .fetch_all(&db)
                    .await
                    .unwrap();
            rows
        }
    };
    let decided = kept(shared.clone()).await;
    assert!(!decided.is_empty() && decided.iter().all(|(_, kept)| !kept), "a folder of the session's: {decided:?}");
    let ns = format!("berth-team-a-{}", &shared.replace('-', "")[..8]);
    let claims: Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> = Api::namespaced(cluster.client(), &ns);
    let names: Vec<String> =
        claims.list(&Default::default()).await.unwrap().items.into_iter().filter_map(|c| c.metadata.name).collect();
    assert!(names.iter().all(|n| !n.starts_with("home-") && !n.starts_with("cache-")), "{names:?}");

    // Ada's own session, unshared, works in her kept home; sharing it now is refused.
    let (status, own) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(3)).await;
    assert_eq!(status, 201, "{own}");
    let own = own["id"].as_str().unwrap().to_string();
    worker.pass().await.unwrap();
    let decided = kept(own.clone()).await;
    assert!(decided.iter().any(|(purpose, kept)| purpose == "home" && *kept), "{decided:?}");
    let (status, refused) = share(&f, &f.ada, &own, "carol@a.test").await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("home_in_use")), "{refused}");
    let (_, seen) = f.call(Method::GET, &format!("/api/v1/bookings/{own}"), Some(&f.ada), None).await;
    assert!(seen["co_owners"].as_array().is_none_or(|c| c.is_empty()), "nothing half-written: {seen}");

    // Nor does a shared booking take that session over when her window ends.
    let (status, next) = f.book(&f.ada, MIG, 1, slot(3), slot(5)).await;
    assert_eq!(status, 201, "{next}");
    let (own, next): (uuid::Uuid, uuid::Uuid) = (own.parse().unwrap(), next["id"].as_str().unwrap().parse().unwrap());
    let successors =
        |db: sqlx::PgPool| async move { app::backend::sessions::continuation::successors(&db, &[own]).await.unwrap() };
    assert_eq!(successors(f.db.clone()).await.get(&own).map(|s| s.0), Some(next), "back to back, unshared");
    assert_eq!(share(&f, &f.ada, &next.to_string(), "carol@a.test").await.0, 200);
    assert!(successors(f.db.clone()).await.is_empty(), "a shared booking starts a session of its own");
}
