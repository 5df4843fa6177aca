//! One worker process, one or several clusters. Which it drives: its own
//! (`--cluster NAME`, reached with the process's own credentials), and as
//! the hub (`--hub`) every cluster reached through a kubeconfig Secret, and
//! under `make run` every simulated one. Each gets a lead of its own
//! (`run::run`) behind that cluster's lease, with its own loops, retries and
//! pace: a cluster that fails fails alone, and a cluster's lease moving to
//! a worker of the other shape is never a double start.

use super::reconcile::{ClusterRef, Reconciler};
use super::simulated::SimulatedCluster;
use app::model::{Cluster as ClusterRecord, ClusterAccess};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// How often the fleet re-reads the clusters (an admin's change takes this long).
pub const REREAD: Duration = Duration::from_secs(30);

/// Builds the worker of one cluster: its client, its row; `own` says
/// whether it is the process's own cluster (which carries the site's
/// duties: notifications and GPU use).
pub type Build = Arc<dyn Fn(kube::Client, &ClusterRecord, bool) -> Reconciler + Send + Sync>;

pub struct Fleet {
    pub db: PgPool,
    /// The cluster the process's own credentials reach.
    pub own: String,
    pub own_client: kube::Client,
    /// Also drive every cluster reached through a kubeconfig Secret.
    pub hub: bool,
    /// Where kubeconfig Secrets are read (`--kubeconfig-namespace`).
    pub namespace: String,
    /// Drive simulated clusters (`make run`), each its own in-memory one.
    pub simulated: bool,
    pub build: Build,
}

/// A running lead and what it was built from (a change restarts it).
struct Lead {
    built_from: ClusterRecord,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Lead {
    fn drop(&mut self) {
        // Its lock connection goes with it, and the lease with the connection.
        self.task.abort();
    }
}

/// Whether a lead built from `before` still drives `now` as it is set up.
fn driven_alike(now: &ClusterRecord, before: &ClusterRecord) -> bool {
    now.access == before.access && now.kubeconfig_secret == before.kubeconfig_secret && now.switches == before.switches
}

impl Fleet {
    /// Leads (or waits to lead) each cluster this process drives, until `shutdown`.
    pub async fn run(self, mut shutdown: tokio::sync::watch::Receiver<bool>) -> crate::worker::error::WorkerResult<()> {
        let mut leads: HashMap<Uuid, Lead> = HashMap::new();
        let mut simulated: HashMap<Uuid, Arc<SimulatedCluster>> = HashMap::new();
        loop {
            match app::backend::clusters::for_worker(&self.db).await {
                Ok(clusters) => self.steer(&clusters, &mut leads, &mut simulated, &shutdown).await,
                Err(err) => tracing::warn!(error = %err.public_message(), "cannot read the clusters; trying again"),
            }
            tokio::select! {
                _ = tokio::time::sleep(REREAD) => {}
                _ = shutdown.changed() => break,
            }
        }
        // Each lead stops on the same signal; give them a moment to let go.
        for (_, mut lead) in leads.drain() {
            let _ = tokio::time::timeout(Duration::from_secs(2), &mut lead.task).await;
        }
        Ok(())
    }

    /// Starts a lead for each cluster wanted and not led yet (or changed
    /// since), and stops the ones no longer wanted.
    async fn steer(
        &self,
        clusters: &[ClusterRecord],
        leads: &mut HashMap<Uuid, Lead>,
        simulated: &mut HashMap<Uuid, Arc<SimulatedCluster>>,
        shutdown: &tokio::sync::watch::Receiver<bool>,
    ) {
        if !clusters.iter().any(|c| c.name == self.own) {
            tracing::warn!(cluster = %self.own, "no cluster has this worker's --cluster name: add it on the Clusters page");
        }
        let wanted: Vec<&ClusterRecord> = clusters.iter().filter(|c| self.drives(c)).collect();
        // A lead stays while its cluster is wanted and set up as when it
        // started (its pools may change: each pass reads them).
        leads.retain(|id, lead| {
            wanted.iter().any(|c| c.id == *id && driven_alike(c, &lead.built_from)) && !lead.task.is_finished()
        });
        simulated.retain(|id, _| wanted.iter().any(|c| c.id == *id));
        for cluster in wanted {
            if leads.contains_key(&cluster.id) {
                continue;
            }
            let own = cluster.name == self.own;
            let client = match self.client_for(cluster, own, simulated).await {
                Ok(client) => client,
                Err(why) => {
                    tracing::warn!(cluster = %cluster.name, %why, "cannot reach the cluster; trying again");
                    continue;
                }
            };
            let mut worker = (self.build)(client, cluster, own);
            worker.drives = Some(ClusterRef { id: cluster.id, name: cluster.name.clone() });
            let stop = shutdown.clone();
            let name = cluster.name.clone();
            let task = tokio::spawn(async move {
                if let Err(err) = super::run::run(worker, stop).await {
                    tracing::error!(cluster = %name, error = %err, "the cluster's worker stopped");
                }
            });
            leads.insert(cluster.id, Lead { built_from: cluster.clone(), task });
        }
    }

    /// Whether this process drives `cluster`.
    fn drives(&self, cluster: &ClusterRecord) -> bool {
        cluster.name == self.own
            || (self.hub && cluster.access == ClusterAccess::Kubeconfig)
            || (self.simulated && cluster.access == ClusterAccess::Simulated)
    }

    async fn client_for(
        &self,
        cluster: &ClusterRecord,
        own: bool,
        simulated: &mut HashMap<Uuid, Arc<SimulatedCluster>>,
    ) -> Result<kube::Client, String> {
        if own {
            return Ok(self.own_client.clone());
        }
        match (cluster.access, &cluster.kubeconfig_secret) {
            (ClusterAccess::Kubeconfig, Some(secret)) => self.kubeconfig_client(secret).await,
            (ClusterAccess::Simulated, _) => {
                let sim = match simulated.get(&cluster.id) {
                    Some(sim) => sim.clone(),
                    None => {
                        let sim = SimulatedCluster::start(true).await;
                        sim.storage.store(true, std::sync::atomic::Ordering::SeqCst);
                        simulated.insert(cluster.id, sim.clone());
                        sim
                    }
                };
                Ok(sim.client())
            }
            _ => Err("no way to reach it from this worker".into()),
        }
    }

    /// A client from the kubeconfig in the Secret `name` (key `kubeconfig`)
    /// of the kubeconfigs' namespace, read with the process's own credentials.
    async fn kubeconfig_client(&self, name: &str) -> Result<kube::Client, String> {
        let secrets: Api<Secret> = Api::namespaced(self.own_client.clone(), &self.namespace);
        let secret = secrets.get(name).await.map_err(|e| format!("reading Secret {name}: {e}"))?;
        let bytes = secret
            .data
            .and_then(|data| data.get("kubeconfig").cloned())
            .ok_or_else(|| format!("Secret {name} has no key kubeconfig"))?;
        let text = String::from_utf8(bytes.0).map_err(|_| format!("Secret {name}: the kubeconfig is not text"))?;
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&text).map_err(|e| format!("Secret {name}: not a kubeconfig: {e}"))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| format!("Secret {name}: {e}"))?;
        Ok(kube::client::ClientBuilder::try_from(config)
            .map_err(|e| format!("Secret {name}: {e}"))?
            .with_layer(&crate::kube_metrics::CountRequests)
            .build())
    }
}
