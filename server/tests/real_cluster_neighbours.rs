//! A hostile neighbour gets nothing, round 2, on a real API server (v1.36)
//! with deploy/ applied: each attack made as the account that would make
//! it — a user with `edit` in a namespace of their own, the session's user,
//! deploy/'s berth-worker — refused with a clear message, beside the
//! legitimate form of the same action, admitted. Writes are dry runs unless
//! a later step needs the object.

#[path = "policy/attack.rs"]
mod attack;
mod common;
#[path = "policy/session.rs"]
mod session;

use attack::*;
use common::kube_stack::{stack, As};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::json;
use server::worker::manifests::{self, Cluster};
use server::worker::snapshot::resource;

const MIG: &str = "nvidia.com/mig-1g.24gb";
/// Someone with `edit` in a namespace of their own, outside every session.
const MALLORY: &str = "mallory@example.test";

/// The workspace domain deploy/'s berth-config sets (the hosts policy's parameter).
async fn configured_domain(admin: &kube::Client) -> String {
    let maps: Api<DynamicObject> = Api::namespaced_with(admin.clone(), "berth", &resource("v1", "ConfigMap"));
    let config = maps.get("berth-config").await.unwrap();
    config.data["data"]["BERTH_WORKSPACE_DOMAIN"].as_str().unwrap().to_string()
}

/// A namespace that is no session, where `user` has the built-in `edit` role.
async fn own_namespace(admin: &kube::Client, name: &str, user: &str) {
    let objects = [
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } }),
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "edit", "namespace": name },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit" },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }] }),
        // OpenShift aggregates Routes into `edit`; a plain API server needs it said.
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": { "name": "routes", "namespace": name },
            "rules": [{ "apiGroups": ["route.openshift.io"], "resources": ["routes", "routes/custom-host"],
                        "verbs": ["create", "update", "patch"] }] }),
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "routes", "namespace": name },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "routes" },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }] }),
    ];
    for object in objects {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        let typed: DynamicObject = serde_json::from_value(object.clone()).unwrap();
        match api(admin, &object, &namespace).create(&PostParams::default(), &typed).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(other) => panic!("{other}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_under_the_workspace_domain_are_published_by_the_session_that_owns_them_only() {
    let Some(stack) = stack() else { return };
    let (admin, worker) = (stack.client(As::Admin).await, stack.client(As::Worker).await);
    let domain = configured_domain(&admin).await;
    let real = Cluster { domain: domain.clone(), ..cluster() };
    let mine = session::session("team-h", "2f0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    set_up(&worker, &mine, &real).await;
    settled(&admin, &mine.namespace()).await;
    let host = manifests::host(&mine, &real);
    own_namespace(&admin, "team-own", MALLORY).await;
    let mallory = stack.client(As::User(MALLORY)).await;
    let open_path = json!({ "spec": { "rules": [{ "host": host, "http": { "paths": [{ "path": "/.berth/open",
        "pathType": "Prefix", "backend": { "service": { "name": "catch", "port": { "number": 80 } } } }] } }] } });

    let refused = [
        ("the session's exact host, on the gate's open path", ingress("i", Some(&host), open_path)),
        ("a name under the session's host", ingress("i", Some(&format!("x.{host}")), json!({}))),
        ("any other name under the domain", ingress("i", Some(&format!("unclaimed.{domain}")), json!({}))),
        ("a wildcard over every workspace", ingress("i", Some(&format!("*.{domain}")), json!({}))),
        (
            "the session's host in TLS only (its certificate)",
            ingress("i", Some("models.team.example.net"), json!({ "spec": { "tls": [{ "hosts": [host] }] } })),
        ),
        ("a Route for the session's host", route(Some(&host), "None")),
    ];
    for (case, object) in refused {
        match create(&mallory, "team-own", object).await {
            Ok(()) => panic!("should be refused outside the session: {case}"),
            Err(message) => assert!(message.contains("belong to Berth sessions"), "{case}: {message}"),
        }
    }
    // The same user's own names stay theirs, and the session its own host.
    let admitted = [
        ("a host outside the domain", ingress("i", Some("models.team.example.net"), json!({}))),
        ("a Route outside the domain", route(Some("models.team.example.net"), "None")),
        ("the domain itself (the portal's host)", ingress("i", Some(&domain), json!({}))),
    ];
    for (case, object) in admitted {
        assert_eq!(create(&mallory, "team-own", object).await, Ok(()), "should be admitted: {case}");
    }
    let user = stack.client(As::User(session::USER)).await;
    let ns = mine.namespace();
    assert_eq!(create(&user, &ns, ingress("i", Some(&format!("api.{host}")), json!({}))).await, Ok(()));
    assert_eq!(create(&user, &ns, route(Some(&host), "None")).await, Ok(()));
    // A cluster admin is no exception: no one outside the session takes its host.
    let said = create(&admin, "default", ingress("i", Some(&host), json!({}))).await.unwrap_err();
    assert!(said.contains("belong to Berth sessions"), "{said}");
}
