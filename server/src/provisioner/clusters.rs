//! One worker process, one or several clusters. Which it drives: its own
//! (`--cluster NAME`, reached with the process's own credentials), and as
//! the hub (`--hub`) every cluster reached through a kubeconfig Secret, and
//! under `make run` every simulated one. Each gets a lead of its own
//! (`run::run`) behind that cluster's lease, with its own loops, retries and
//! pace: a cluster that fails fails alone, and a cluster's lease moving to
//! a worker of the other shape is never a double start.

use super::cluster_clients::ClusterClients;
use super::context::{ClusterRef, Reconciler};
use app::model::{Cluster as ClusterRecord, ClusterAccess};
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
    /// Its own cluster, kubeconfigs, and simulated clusters if it drives them
    /// (`make run`): shared with the portal of the same process.
    pub reach: Arc<ClusterClients>,
    /// Also drive every cluster reached through a kubeconfig Secret.
    pub hub: bool,
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
    pub async fn run(
        self,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> crate::provisioner::error::WorkerResult<()> {
        let mut leads: HashMap<Uuid, Lead> = HashMap::new();
        loop {
            match app::backend::clusters::for_worker(&self.db).await {
                Ok(clusters) => self.steer(&clusters, &mut leads, &shutdown).await,
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
        shutdown: &tokio::sync::watch::Receiver<bool>,
    ) {
        if !clusters.iter().any(|c| c.name == self.reach.own) {
            tracing::warn!(cluster = %self.reach.own, "no cluster has this worker's --cluster name: add it on the Clusters page");
        }
        let wanted: Vec<&ClusterRecord> = clusters.iter().filter(|c| self.drives(c)).collect();
        // A lead stays while its cluster is wanted and set up as when it
        // started (its pools may change: each pass reads them).
        leads.retain(|id, lead| {
            wanted.iter().any(|c| c.id == *id && driven_alike(c, &lead.built_from)) && !lead.task.is_finished()
        });
        self.reach.keep_simulated(|id| wanted.iter().any(|c| c.id == *id)).await;
        for cluster in wanted {
            if leads.contains_key(&cluster.id) {
                continue;
            }
            let own = cluster.name == self.reach.own;
            let client = match self.reach.for_worker(cluster).await {
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
        cluster.name == self.reach.own
            || (self.hub && cluster.access == ClusterAccess::Kubeconfig)
            || (self.reach.simulates() && cluster.access == ClusterAccess::Simulated)
    }
}
