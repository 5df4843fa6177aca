//! Clusters as data: where each pool's sessions run, how a worker reaches
//! it, and the switches that differ between clusters.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The cluster every pool belongs to until an admin adds another.
pub const DEFAULT_CLUSTER: &str = "default";

/// How a worker reaches a cluster's API server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterAccess {
    /// The worker's own credentials: its ServiceAccount when it runs in
    /// the cluster (`berth worker --cluster NAME`), else its kubeconfig.
    InCluster,
    /// A kubeconfig in a Secret (key `kubeconfig`) in Berth's namespace,
    /// which a hub worker reads by name.
    Kubeconfig,
    /// The in-memory cluster of `make run` (`berth run --simulated`).
    Simulated,
}

impl ClusterAccess {
    pub const ALL: [ClusterAccess; 3] = [Self::InCluster, Self::Kubeconfig, Self::Simulated];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InCluster => "in-cluster",
            Self::Kubeconfig => "kubeconfig",
            Self::Simulated => "simulated",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|access| access.as_str() == text)
    }
}

/// A cluster as the console and `GET /clusters` show it. A switch that is
/// `None` follows the driving worker's flag of the same name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub id: Uuid,
    pub name: String,
    pub access: ClusterAccess,
    /// The Secret holding the kubeconfig, for `kubeconfig` access.
    pub kubeconfig_secret: Option<String>,
    #[serde(flatten)]
    pub switches: ClusterSwitches,
    /// The pools whose sessions run here, by name.
    pub pools: Vec<String>,
    pub created_at: DateTime<Utc>,
}

/// What may differ from one cluster to the next; `None`: the worker's flag.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSwitches {
    /// Workspaces are reached at https://<namespace>.<domain>/.
    pub workspace_domain: Option<String>,
    /// `ingress` or `route` (OpenShift).
    pub expose: Option<String>,
    /// Each session also gets Kueue quota.
    pub kueue: Option<bool>,
    /// `capacity-buffer` or `placeholder`.
    pub scale_ahead_mode: Option<String>,
    /// Room is held this long before a window opens.
    pub scale_ahead_minutes: Option<i32>,
    /// A DaemonSet pre-pulls the pools' images on GPU nodes.
    pub image_cache: Option<bool>,
}

/// `POST /clusters` and `PUT /clusters/{id}`: the whole cluster. A
/// cluster keeps its name (workers started with `--cluster NAME` find it by
/// it), so a PUT may leave the name out or repeat it. A switch left out (or
/// `null`) follows the driving worker's flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub access: ClusterAccess,
    #[serde(default)]
    pub kubeconfig_secret: Option<String>,
    #[serde(default)]
    pub workspace_domain: Option<String>,
    #[serde(default)]
    pub expose: Option<String>,
    #[serde(default)]
    pub kueue: Option<bool>,
    #[serde(default)]
    pub scale_ahead_mode: Option<String>,
    #[serde(default)]
    pub scale_ahead_minutes: Option<i32>,
    #[serde(default)]
    pub image_cache: Option<bool>,
}

impl ClusterSpec {
    pub fn switches(&self) -> ClusterSwitches {
        ClusterSwitches {
            workspace_domain: self.workspace_domain.clone(),
            expose: self.expose.clone(),
            kueue: self.kueue,
            scale_ahead_mode: self.scale_ahead_mode.clone(),
            scale_ahead_minutes: self.scale_ahead_minutes,
            image_cache: self.image_cache,
        }
    }
}
