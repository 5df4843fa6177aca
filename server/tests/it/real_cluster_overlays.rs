//! Every overlay deploy/ ships, applied as shipped on a real API server
//! (v1.36): Berth's objects go in, and the cluster's own ordinary workloads
//! beside Berth are still admitted. A member cluster once shipped no
//! berth-config, the parameter of its policies (`parameterNotFoundAction:
//! Deny`): every Deployment and Ingress in the cluster was refused, a
//! cluster admin's in an ordinary namespace included, and a session's
//! workspace with them.

use crate::common;
use crate::policy::attack::*;
use crate::policy::session;

use common::kube_stack::{second_stack, stack, As, Stack};
use serde_json::{json, Value};

const MIG: &str = "nvidia.com/mig-1g.24gb";

/// An ordinary team's workloads, none of them Berth's.
fn ordinary() -> Vec<(&'static str, Value)> {
    let template = json!({ "metadata": { "labels": { "app": "shop" } },
        "spec": { "containers": [{ "name": "web", "image": "nginx:1.27" }] } });
    vec![
        (
            "a Deployment",
            json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "shop" },
                "spec": { "selector": { "matchLabels": { "app": "shop" } }, "template": template } }),
        ),
        (
            "a Pod",
            json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "shop" }, "spec": template["spec"] }),
        ),
        ("an Ingress", ingress("shop", Some("shop.example.com"), json!({}))),
        ("a Route", route(Some("shop.example.com"), "None")),
        ("a Service", service(json!({ "selector": { "app": "shop" } }))),
        (
            "a claim naming a volume",
            json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": { "name": "shop" },
                "spec": { "accessModes": ["ReadWriteOnce"], "volumeName": "shop-data", "storageClassName": "",
                          "resources": { "requests": { "storage": "1Gi" } } } }),
        ),
    ]
}

/// `kubectl apply --server-side -k deploy/overlays/<overlay>` as the admin.
fn apply(stack: &Stack, overlay: &str) {
    let path = format!("deploy/overlays/{overlay}");
    let output = stack.kubectl(&["apply", "--server-side", "--force-conflicts", "-k", &path]);
    assert!(output.status.success(), "{overlay} as shipped: {}", String::from_utf8_lossy(&output.stderr));
}

async fn ordinary_work_is_admitted(stack: &Stack, overlay: &str) {
    let admin = stack.client(As::Admin).await;
    // A Pod needs its namespace's default ServiceAccount, which the
    // controller manager makes a few seconds after a fresh API server starts.
    let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
        kube::Api::namespaced(admin.clone(), "default");
    for _ in 0..60 {
        if accounts.get_opt("default").await.ok().flatten().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    for (what, object) in ordinary() {
        assert_eq!(create(&admin, "default", object).await, Ok(()), "{overlay}: {what} of the cluster's own");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_overlay_as_shipped_admits_berth_and_the_clusters_own_work() {
    let (Some(single), Some(member)) = (stack(), second_stack()) else { return };
    // Started with deploy/overlays/kubernetes and deploy/overlays/member.
    ordinary_work_is_admitted(single, "kubernetes").await;
    ordinary_work_is_admitted(member, "member").await;

    // A session on the member: its workspace is admitted, its host guarded.
    let (admin, worker) = (member.client(As::Admin).await, member.client(As::Worker).await);
    let mine = session::session("team-m", "af0e0d0c-0b0a-4908-8706-050403020100", MIG, &[("berth.io/pool", "a")]);
    let domain = {
        let maps: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
            admin.clone(),
            "berth",
            &server::provisioner::snapshot::resource("v1", "ConfigMap"),
        );
        let config = maps.get("berth-config").await.expect("the member ships its berth-config");
        config.data["data"]["BERTH_WORKSPACE_DOMAIN"].as_str().unwrap().to_string()
    };
    let on_member = server::provisioner::manifests::Cluster { domain: domain.clone(), ..cluster() };
    set_up(&worker, &mine, &on_member).await;
    settled(&admin, &mine.namespace()).await;
    let host = server::provisioner::manifests::host(&mine, &on_member);
    // The member's policies were applied as its API server started; one
    // may take a moment more to be enforced (CI once got in first).
    let taken = || create(&admin, "default", ingress("i", Some(&host), json!({})));
    in_force("berth-workspace-hosts", taken).await;
    let said = taken().await;
    refused_with("the session's host taken outside it", said, "belong to Berth sessions");

    // The other two overlays, applied over the single cluster in turn.
    for overlay in ["hub", "openshift"] {
        apply(single, overlay);
        ordinary_work_is_admitted(single, overlay).await;
    }
}
