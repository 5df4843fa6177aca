//! What every step of the worker takes: the `Reconciler`, one cluster's
//! worker (its database, its client, the cluster as configured and the
//! policy), and the few reads and requests all steps share. Modelled on
//! kube-rs controller-rs's `Context`: the steps are free functions in
//! files of their own that take `w: &Reconciler`; the passes that call them
//! in order are in `reconcile`. This file imports no step, so every step
//! can import it.

use super::manifests::{self, Cluster};
use super::policy::Policy;
use super::retry::retrying;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use sqlx::PgPool;
use uuid::Uuid;

pub struct Reconciler {
    pub db: PgPool,
    pub client: kube::Client,
    /// The cluster this worker drives: the pools on it are its to converge,
    /// and its lease is this cluster's. `None`: every pool, on the one
    /// cluster `client` reaches (a worker as it was before clusters were data).
    pub drives: Option<ClusterRef>,
    pub cluster: Cluster,
    pub policy: Policy,
    /// Talks to the in-memory simulated cluster (shown on the worker page).
    pub simulated: bool,
    /// Measures GPU use from Prometheus while this worker leads.
    pub usage: Option<crate::usage::UsageSource>,
    /// Sends the outbox's notifications while this worker leads.
    pub notifier: Option<crate::notify::Notifier>,
    /// Publishes no workspace unless the cluster's policies guard its domain
    /// (`guarded_domain`): on for every real cluster `berth worker` drives.
    pub verify_domain: bool,
    /// Runs what is the site's rather than a cluster's: retention, the
    /// waitlist's expiry, reading the priority and runtime classes. One
    /// worker does (its own cluster's); never a member signed in as its
    /// own database role, which may not write those rows.
    pub site_duties: bool,
}

/// A cluster by id (for the database) and name (for logs and metrics).
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterRef {
    pub id: Uuid,
    pub name: String,
}

impl Reconciler {
    /// A worker with the default policy.
    pub fn new(db: PgPool, client: kube::Client, cluster: Cluster) -> Self {
        Reconciler {
            db,
            client,
            drives: None,
            cluster,
            policy: Policy::default(),
            simulated: false,
            usage: None,
            notifier: None,
            verify_domain: false,
            site_duties: true,
        }
    }

    /// The cluster whose pools this worker converges (`None`: every pool).
    pub fn cluster_id(&self) -> Option<Uuid> {
        self.drives.as_ref().map(|c| c.id)
    }

    /// The cluster's name as metrics and logs label it.
    pub fn cluster_name(&self) -> &str {
        self.drives.as_ref().map_or(app::model::DEFAULT_CLUSTER, |c| c.name.as_str())
    }

    /// Runs one API request with this worker's retries (see `retry`).
    pub(super) async fn retrying<T, F, Fut>(&self, call: F) -> Result<T, kube::Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        retrying(self.policy.retries, self.policy.retry_delay, call).await
    }

    /// Berth's session namespaces on the cluster (one list request).
    pub(super) async fn managed_namespaces(&self) -> Result<Vec<Namespace>, kube::Error> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let params = ListParams::default().labels(&manifests::managed_selector());
        Ok(self.retrying(|| namespaces.list(&params)).await?.items)
    }
}
