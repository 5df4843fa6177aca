//! One workspace domain per cluster, the one its policies guard, on a real
//! API server (v1.36) with deploy/ applied: a worker whose domain (a
//! Clusters-page setting or its flag) differs from the cluster's
//! berth/berth-config starts no workspace and says why; under the guarded
//! domain the same booking starts.

use crate::common;

use common::world::{lab_node_labels, world, World};
use common::MIG;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Api;
use server::provisioner::manifests::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_publishes_workspaces_only_under_the_domain_its_clusters_policies_guard() {
    let elsewhere = Cluster { domain: "gpu.elsewhere.example.net".into(), ..Cluster::default() };
    let Some((mut w, _turn)) = world(elsewhere).await else { return };
    w.worker.verify_domain = true;
    let maps: Api<ConfigMap> = Api::namespaced(w.admin.clone(), "berth");
    let guarded = maps.get("berth-config").await.unwrap().data.unwrap()["BERTH_WORKSPACE_DOMAIN"].clone();
    let id = w.book(MIG, 1, "interactive", w.f.lab).await;

    let said = w.worker.pass().await.expect_err("a domain the policies do not guard").to_string();
    assert!(said.contains("gpu.elsewhere.example.net") && said.contains(&guarded), "{said}");
    assert!(said.contains("no workspace starts"), "{said}");
    assert_eq!(w.state(id).await, "approved", "nothing published, nothing started");
    let namespaces: Api<Namespace> = Api::all(w.admin.clone());
    assert!(namespaces.get_opt(&World::namespace(id)).await.unwrap().is_none());

    // The cluster's berth-config missing altogether: refused as well.
    w.worker.cluster.domain = guarded.clone();
    w.worker.cluster.berth_namespace = "no-berth-here".into();
    let said = w.worker.pass().await.expect_err("no berth-config").to_string();
    assert!(said.contains("no no-berth-here/berth-config"), "{said}");

    // Under the domain the policies guard, the same booking starts.
    w.worker.cluster.berth_namespace = "berth".into();
    w.until_active(id, &lab_node_labels()).await;
}
