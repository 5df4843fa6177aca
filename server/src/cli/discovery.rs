//! Which cluster the worker talks to.

use crate::provisioner::simulated::SimulatedCluster;
use app::model::ClusterMode;

/// The cluster the kubeconfig (or in-cluster config) names, or else the
/// in-memory simulated one, where the whole lifecycle can still be watched.
pub(super) async fn cluster_client() -> (kube::Client, ClusterMode) {
    match real_cluster().await {
        Ok(client) => (client, ClusterMode { simulated: false, kueue: false }),
        Err(err) => {
            tracing::warn!(error = %err, "no Kubernetes cluster found: the worker uses a simulated, in-memory one");
            let cluster = SimulatedCluster::start(true).await;
            // Homes and model caches are kept there too, as `make run` shows.
            cluster.storage.store(true, std::sync::atomic::Ordering::SeqCst);
            (cluster.client(), ClusterMode { simulated: true, kueue: false })
        }
    }
}

/// The kubeconfig's (or in-cluster) cluster, its requests counted in the metrics.
pub(super) async fn real_cluster() -> anyhow::Result<kube::Client> {
    let config = kube::Config::infer().await?;
    Ok(kube::client::ClientBuilder::try_from(config)?.with_layer(&crate::kube_metrics::CountRequests).build())
}
