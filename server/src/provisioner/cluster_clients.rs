//! How this process reaches each cluster, for the worker that drives it and
//! for the portal that opens its workspaces:
//! - its own cluster (`--cluster NAME`) with the process's own credentials;
//! - another through a kubeconfig kept in a Secret of the own cluster — the
//!   worker's (its member's `berth-worker`) in `--kubeconfig-namespace`,
//!   named on the Clusters page, and the portal's (its member's
//!   `berth-portal`, which may read only access Secrets) in
//!   `--portal-kubeconfig-namespace`, named after the cluster; separate
//!   namespaces, so neither identity can read the other's credentials;
//! - a simulated one (`make run`) in memory: one per cluster row, the same
//!   for the worker that provisions on it and the portal that opens it.

use super::simulated::SimulatedCluster;
use app::model::{Cluster as ClusterRecord, ClusterAccess};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

pub const WORKER_KUBECONFIGS: &str = "berth-clusters";
pub const PORTAL_KUBECONFIGS: &str = "berth-portal-clusters";

pub struct ClusterClients {
    /// The cluster the process's own credentials reach.
    pub own: String,
    own_client: kube::Client,
    worker_kubeconfigs: String,
    portal_kubeconfigs: String,
    /// `None`: this process simulates no cluster (a simulated row is then
    /// someone else's, or a leftover, and is not reached).
    simulated: Option<tokio::sync::Mutex<HashMap<Uuid, Arc<SimulatedCluster>>>>,
}

impl ClusterClients {
    pub fn new(own: impl Into<String>, own_client: kube::Client) -> Self {
        ClusterClients {
            own: own.into(),
            own_client,
            worker_kubeconfigs: WORKER_KUBECONFIGS.into(),
            portal_kubeconfigs: PORTAL_KUBECONFIGS.into(),
            simulated: None,
        }
    }

    /// A process that reaches one cluster, the one named `default`.
    pub fn single(client: kube::Client) -> Arc<Self> {
        Arc::new(ClusterClients::new(app::model::DEFAULT_CLUSTER, client))
    }

    /// Where the worker's and the portal's kubeconfigs of other clusters are.
    pub fn kubeconfigs(mut self, worker: &str, portal: &str) -> Self {
        (self.worker_kubeconfigs, self.portal_kubeconfigs) = (worker.into(), portal.into());
        self
    }

    /// ClusterClients simulated clusters too, each kept in memory while wanted.
    pub fn simulating(mut self) -> Self {
        self.simulated = Some(Default::default());
        self
    }

    pub fn own_client(&self) -> kube::Client {
        self.own_client.clone()
    }

    pub fn simulates(&self) -> bool {
        self.simulated.is_some()
    }

    /// A client for the worker that drives `cluster`.
    pub async fn for_worker(&self, cluster: &ClusterRecord) -> Result<kube::Client, String> {
        if cluster.name == self.own {
            return Ok(self.own_client.clone());
        }
        match (cluster.access, &cluster.kubeconfig_secret) {
            (ClusterAccess::Kubeconfig, Some(secret)) => self.through_secret(&self.worker_kubeconfigs, secret).await,
            (ClusterAccess::Simulated, _) => self.simulated(cluster.id).await,
            _ => Err("no way to reach it from this worker".into()),
        }
    }

    /// A client for the portal, which reads a session's access Secret there
    /// and nothing else: on a cluster not its own, through the kubeconfig
    /// named after the cluster (however its worker reaches it: a member with
    /// a worker inside is still another cluster to the portal).
    pub async fn for_portal(&self, cluster: &ClusterRecord) -> Result<kube::Client, String> {
        if cluster.name == self.own {
            return Ok(self.own_client.clone());
        }
        match cluster.access {
            ClusterAccess::Simulated => self.simulated(cluster.id).await,
            _ => self.through_secret(&self.portal_kubeconfigs, &cluster.name).await,
        }
    }

    /// Lets go of the simulated clusters no longer wanted (a removed row).
    pub async fn keep_simulated(&self, wanted: impl Fn(&Uuid) -> bool) {
        if let Some(simulated) = &self.simulated {
            simulated.lock().await.retain(|id, _| wanted(id));
        }
    }

    async fn simulated(&self, id: Uuid) -> Result<kube::Client, String> {
        let Some(simulated) = &self.simulated else {
            return Err("it is simulated, and this process simulates no cluster".into());
        };
        let mut simulated = simulated.lock().await;
        if let Some(sim) = simulated.get(&id) {
            return Ok(sim.client());
        }
        let sim = SimulatedCluster::start(true).await;
        sim.storage.store(true, std::sync::atomic::Ordering::SeqCst);
        simulated.insert(id, sim.clone());
        Ok(sim.client())
    }

    /// A client from the kubeconfig in the Secret `name` (key `kubeconfig`)
    /// of `namespace` on the own cluster, read with the own credentials.
    async fn through_secret(&self, namespace: &str, name: &str) -> Result<kube::Client, String> {
        let secrets: Api<Secret> = Api::namespaced(self.own_client.clone(), namespace);
        let secret = secrets.get(name).await.map_err(|e| format!("reading Secret {namespace}/{name}: {e}"))?;
        let bytes = secret
            .data
            .and_then(|data| data.get("kubeconfig").cloned())
            .ok_or_else(|| format!("Secret {namespace}/{name} has no key kubeconfig"))?;
        let text = String::from_utf8(bytes.0).map_err(|_| format!("Secret {name}: the kubeconfig is not text"))?;
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&text).map_err(|e| format!("Secret {name}: not a kubeconfig: {e}"))?;
        inline_only(&kubeconfig).map_err(|e| format!("Secret {name}: {e}"))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| format!("Secret {name}: {e}"))?;
        Ok(kube::client::ClientBuilder::try_from(config)
            .map_err(|e| format!("Secret {name}: {e}"))?
            .with_layer(&crate::kube_metrics::CountRequests)
            .build())
    }
}

/// A member's kubeconfig may carry its credentials inline only. One that
/// runs a command (an `exec` plugin, an `auth-provider`'s `cmd-path`) or
/// names a file (`tokenFile`, a certificate or key path) would have
/// whoever may write the Secret run code in, or read files of, the worker
/// and the portal, which hold the database's credentials and every
/// cluster's.
pub fn inline_only(kubeconfig: &kube::config::Kubeconfig) -> Result<(), String> {
    for named in &kubeconfig.auth_infos {
        let Some(user) = &named.auth_info else { continue };
        let said = |what: &str| Err(format!("user {}: {what}; only inline credentials are accepted", named.name));
        if user.exec.is_some() {
            return said("an exec plugin would run a command in Berth's processes");
        }
        if user.auth_provider.is_some() {
            return said("an auth-provider may run a command or read files");
        }
        if user.token_file.is_some() {
            return said("tokenFile names a file of Berth's processes");
        }
        if user.client_certificate.is_some() || user.client_key.is_some() {
            return said("client-certificate and client-key name files (use the -data forms)");
        }
    }
    for named in &kubeconfig.clusters {
        let Some(cluster) = &named.cluster else { continue };
        if cluster.certificate_authority.is_some() {
            return Err(format!(
                "cluster {}: certificate-authority names a file (use certificate-authority-data); \
                 only inline credentials are accepted",
                named.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::inline_only;
    use kube::config::Kubeconfig;

    fn kubeconfig(user: &str, cluster: &str) -> Kubeconfig {
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{{name: c, context: {{cluster: k, user: u}}}}]\n\
             clusters: [{{name: k, cluster: {{server: 'https://10.0.0.1:6443'{cluster}}}}}]\n\
             users: [{{name: u, user: {{{user}}}}}]\n"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    #[test]
    fn only_inline_credentials_pass() {
        assert_eq!(inline_only(&kubeconfig("token: abc", ", certificate-authority-data: Zm9v")), Ok(()));
        let refused = [
            ("exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'id']}", "", "exec"),
            ("auth-provider: {name: gcp, config: {cmd-path: /bin/sh}}", "", "auth-provider"),
            ("tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token", "", "tokenFile"),
            ("client-certificate: /etc/berth/tls.crt, client-key-data: Zm9v", "", "client-certificate"),
            ("client-key: /etc/berth/tls.key", "", "client-key"),
            ("token: abc", ", certificate-authority: /etc/ssl/ca.pem", "certificate-authority"),
        ];
        for (user, cluster, said) in refused {
            let outcome = inline_only(&kubeconfig(user, cluster));
            assert!(outcome.as_ref().is_err_and(|e| e.contains(said)), "{user}{cluster}: {outcome:?}");
        }
    }
}
