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
    /// A kubeconfig in a Secret (key `kubeconfig`) in the hub's
    /// `berth-clusters` namespace, which a hub worker reads by name.
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
    /// A cluster reached by `access` whose switches all follow the worker.
    pub fn reached(name: &str, access: ClusterAccess) -> ClusterSpec {
        ClusterSpec {
            name: Some(name.to_string()),
            access,
            kubeconfig_secret: None,
            workspace_domain: None,
            expose: None,
            kueue: None,
            scale_ahead_mode: None,
            scale_ahead_minutes: None,
            image_cache: None,
        }
    }

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

/// A cluster as the console's form posts it: every field text. Empty
/// switches follow the worker's flags; `on`/`off` set them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterForm {
    /// Empty: a new cluster.
    pub id: String,
    pub name: String,
    pub access: String,
    pub kubeconfig_secret: String,
    pub workspace_domain: String,
    pub expose: String,
    pub kueue: String,
    pub scale_ahead_mode: String,
    pub scale_ahead_minutes: String,
    pub image_cache: String,
}

fn text(value: &str) -> Option<String> {
    Some(value.trim().to_string()).filter(|v| !v.is_empty())
}

fn switch(field: &str, value: &str) -> Result<Option<bool>, super::FieldError> {
    match value.trim() {
        "" => Ok(None),
        "on" => Ok(Some(true)),
        "off" => Ok(Some(false)),
        _ => Err(super::FieldError::new(field, "must be on, off, or empty for the worker's flag")),
    }
}

impl ClusterForm {
    /// The form as the API's body; the services check the values.
    pub fn to_spec(&self) -> Result<ClusterSpec, super::FieldError> {
        let access = ClusterAccess::parse(self.access.trim())
            .ok_or_else(|| super::FieldError::new("access", "must be in-cluster, kubeconfig or simulated"))?;
        let minutes = match self.scale_ahead_minutes.trim() {
            "" => None,
            text => Some(text.parse().map_err(|_| super::FieldError::new("scale_ahead_minutes", "must be a number"))?),
        };
        Ok(ClusterSpec {
            name: text(&self.name),
            access,
            kubeconfig_secret: text(&self.kubeconfig_secret),
            workspace_domain: text(&self.workspace_domain),
            expose: text(&self.expose),
            kueue: switch("kueue", &self.kueue)?,
            scale_ahead_mode: text(&self.scale_ahead_mode),
            scale_ahead_minutes: minutes,
            image_cache: switch("image_cache", &self.image_cache)?,
        })
    }

    /// A saved cluster as the form shows it.
    pub fn of(cluster: &Cluster) -> ClusterForm {
        let switch =
            |value: Option<bool>| value.map(|on| if on { "on" } else { "off" }).unwrap_or_default().to_string();
        let s = &cluster.switches;
        ClusterForm {
            id: cluster.id.to_string(),
            name: cluster.name.clone(),
            access: cluster.access.as_str().to_string(),
            kubeconfig_secret: cluster.kubeconfig_secret.clone().unwrap_or_default(),
            workspace_domain: s.workspace_domain.clone().unwrap_or_default(),
            expose: s.expose.clone().unwrap_or_default(),
            kueue: switch(s.kueue),
            scale_ahead_mode: s.scale_ahead_mode.clone().unwrap_or_default(),
            scale_ahead_minutes: s.scale_ahead_minutes.map(|m| m.to_string()).unwrap_or_default(),
            image_cache: switch(s.image_cache),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_round_trips_and_empty_means_the_workers_flag() {
        let cluster = Cluster {
            id: Uuid::nil(),
            name: "aws".into(),
            access: ClusterAccess::Kubeconfig,
            kubeconfig_secret: Some("aws-kubeconfig".into()),
            switches: ClusterSwitches {
                kueue: Some(false),
                scale_ahead_minutes: Some(30),
                expose: Some("route".into()),
                ..ClusterSwitches::default()
            },
            pools: vec![],
            created_at: chrono::DateTime::UNIX_EPOCH,
        };
        let form = ClusterForm::of(&cluster);
        assert_eq!((form.kueue.as_str(), form.image_cache.as_str()), ("off", ""));
        let spec = form.to_spec().unwrap();
        assert_eq!(spec.switches(), cluster.switches);
        assert_eq!((spec.name.as_deref(), spec.kubeconfig_secret.as_deref()), (Some("aws"), Some("aws-kubeconfig")));
    }

    #[test]
    fn mistyped_fields_are_named() {
        let form = |f: fn(&mut ClusterForm)| {
            let mut form = ClusterForm { name: "aws".into(), access: "simulated".into(), ..ClusterForm::default() };
            f(&mut form);
            form.to_spec().err().map(|e| e.field)
        };
        assert_eq!(form(|_| {}), None);
        assert_eq!(form(|f| f.access = "cloud".into()).as_deref(), Some("access"));
        assert_eq!(form(|f| f.kueue = "yes".into()).as_deref(), Some("kueue"));
        assert_eq!(form(|f| f.scale_ahead_minutes = "half an hour".into()).as_deref(), Some("scale_ahead_minutes"));
    }
}
