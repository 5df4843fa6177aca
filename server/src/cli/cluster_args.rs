//! How the cluster that runs workspaces is set up, as flags: the worker
//! and the `Cluster` its manifests are built for.

use crate::provisioner::cluster_clients::{self, ClusterClients};
use crate::provisioner::clusters::Fleet;
use crate::provisioner::manifests::ahead::{AheadMode, ScaleAhead};
use crate::provisioner::manifests::{self, Cluster, Expose, ImageCache, Proxy};
use crate::provisioner::reconcile::Reconciler;
use clap::Args;
use sqlx::PgPool;
use std::sync::Arc;

/// How the cluster that runs workspaces is set up.
#[derive(Args, Clone)]
pub struct ClusterArgs {
    /// The cluster this process's own credentials reach (its ServiceAccount
    /// in the cluster, or its kubeconfig), by its name on the Clusters page.
    #[arg(long = "cluster", env = "BERTH_CLUSTER", default_value = app::model::DEFAULT_CLUSTER)]
    pub own_cluster: String,
    /// Also drive every cluster reached through a kubeconfig Secret in
    /// Berth's namespace: the hub of several clusters.
    #[arg(long, env = "BERTH_HUB")]
    pub hub: bool,
    /// Where the hub reads the member clusters' kubeconfig Secrets: a
    /// namespace of their own, so the worker may read no other Secret.
    #[arg(long, env = "BERTH_KUBECONFIG_NAMESPACE", default_value = cluster_clients::WORKER_KUBECONFIGS)]
    pub kubeconfig_namespace: String,
    /// Where the portal reads its kubeconfig of each other cluster (a
    /// Secret named after the cluster, key `kubeconfig`, of that cluster's
    /// berth-portal ServiceAccount) to open workspaces there; apart from the
    /// worker's, so neither identity can read the other's.
    #[arg(long, env = "BERTH_PORTAL_KUBECONFIG_NAMESPACE", default_value = cluster_clients::PORTAL_KUBECONFIGS)]
    pub portal_kubeconfig_namespace: String,
    /// Each session also gets Kueue quota (kueue.x-k8s.io/v1beta2, Kueue ≥ v0.15):
    /// a ClusterQueue of its own holding what was booked, in the pool's
    /// cohort, and the LocalQueue `session` in its namespace.
    #[arg(long, env = "BERTH_KUEUE")]
    pub kueue: bool,
    /// Holds room for every booked unit this long before its window opens
    /// (e.g. 30m), so the cluster autoscaler adds GPU nodes in time; off
    /// when not given.
    #[arg(long, env = "BERTH_SCALE_AHEAD", value_parser = super::parse_lifetime)]
    pub scale_ahead: Option<chrono::Duration>,
    /// How the room is held: a CapacityBuffer, or low-priority placeholder pods.
    #[arg(long, env = "BERTH_SCALE_AHEAD_MODE", value_enum, default_value = "capacity-buffer")]
    pub scale_ahead_mode: crate::provisioner::manifests::ahead::AheadMode,
    /// Workspace URLs are https://<namespace>.<domain>/.
    #[arg(long, env = "BERTH_WORKSPACE_DOMAIN", default_value = "berth.local")]
    pub workspace_domain: String,
    /// The ingress controller's namespace: the only one let into sessions.
    #[arg(long, env = "BERTH_INGRESS_NAMESPACE", default_value = "ingress-nginx")]
    pub ingress_namespace: String,
    #[arg(long, env = "BERTH_INGRESS_CLASS")]
    pub ingress_class: Option<String>,
    #[arg(long, env = "BERTH_STORAGE_CLASS")]
    pub storage_class: Option<String>,
    /// Outbound proxy such as http://proxy.corp:3128; sessions may reach nothing else outside.
    #[arg(long, env = "BERTH_PROXY_URL", requires = "proxy_cidr")]
    pub proxy_url: Option<url::Url>,
    /// Where the proxy listens, for the egress policy (e.g. 10.20.0.5/32).
    #[arg(long, env = "BERTH_PROXY_CIDR")]
    pub proxy_cidr: Option<String>,
    #[arg(long, env = "BERTH_NO_PROXY", default_value = ".cluster.local,.svc")]
    pub no_proxy: String,
    /// Size of the model cache of sessions started before model caches were
    /// kept (each tenant now sets its own size on the Homes page).
    #[arg(long, env = "BERTH_MODEL_CACHE_GIB", default_value_t = 200)]
    pub model_cache_gib: i32,
    /// How workspaces are reached: a Kubernetes Ingress or an OpenShift Route.
    #[arg(long, env = "BERTH_EXPOSE", value_enum, default_value = "ingress")]
    pub expose: Expose,
    /// Keep a DaemonSet pre-pulling the pools' workspace images and `--cache-images` on GPU nodes.
    #[arg(long, env = "BERTH_IMAGE_CACHE")]
    pub image_cache: bool,
    /// Berth's own namespace, where the image cache DaemonSet lives.
    #[arg(long, env = "BERTH_NAMESPACE", default_value = "berth")]
    pub berth_namespace: String,
    /// Images to pre-pull besides the pools' workspace images (inference
    /// engines), comma-separated; each pinned by digest from a `--cache-registries` entry.
    #[arg(long, env = "BERTH_CACHE_IMAGES", value_delimiter = ',')]
    pub cache_images: Vec<String>,
    /// Registries (or paths: `nvcr.io/nvidia`) the image cache may pull
    /// from, comma-separated. Only images pinned by digest from these are
    /// pre-pulled, pools' images included.
    #[arg(long, env = "BERTH_CACHE_REGISTRIES", value_delimiter = ',')]
    pub cache_registries: Vec<String>,
    /// Label (`key=value`) of the pools' GPU nodes, where images are pre-pulled.
    #[arg(long, env = "BERTH_GPU_NODE_SELECTOR", default_value = "nvidia.com/gpu.present=true", value_parser = parse_label)]
    pub gpu_node_selector: (String, String),
    #[arg(long, env = "BERTH_PAUSE_IMAGE", default_value = "registry.k8s.io/pause:3.10")]
    pub pause_image: String,
    /// The image of `berth gate`, the auth step in every workspace's pod:
    /// Berth's own image (the Containerfile's).
    #[arg(long, env = "BERTH_GATE_IMAGE", default_value = manifests::DEFAULT_GATE_IMAGE)]
    pub gate_image: String,
    /// Extended resources set to 0 in every session's quota unless booked,
    /// besides every kind any pool offers; comma-separated.
    #[arg(
        long,
        env = "BERTH_DENY_RESOURCES",
        value_delimiter = ',',
        default_value = "nvidia.com/gpu,amd.com/gpu,nvidia.com/gpu.shared",
        value_parser = parse_resource_name
    )]
    pub deny_resources: Vec<String>,
    /// Prometheus with the NVIDIA DCGM exporter's metrics: the worker measures
    /// each session's GPU use from it every minute.
    #[arg(long, env = "BERTH_PROMETHEUS_URL")]
    pub prometheus_url: Option<url::Url>,
    /// Bearer token for Prometheus, if it wants one.
    #[arg(long, env = "BERTH_PROMETHEUS_TOKEN", hide_env_values = true, requires = "prometheus_url")]
    pub prometheus_token: Option<String>,
    /// Label matchers only the DCGM exporter's series carry, such as
    /// job="nvidia-dcgm-exporter": series that tenants' own pods could
    /// publish under the same names are then ignored.
    #[arg(long, env = "BERTH_DCGM_SELECTOR", default_value = "", requires = "prometheus_url")]
    pub dcgm_selector: crate::usage::DcgmSelector,
    /// How busy a device's engine must be, in percent, for a minute to count
    /// as active in reports (booked, occupied, active) and on the calendar.
    #[arg(long, env = "BERTH_ACTIVE_THRESHOLD", default_value = "10")]
    pub active_threshold: crate::usage::ActiveThreshold,
    /// Keep audit events (booking state changes) this many days.
    #[arg(long, env = "BERTH_AUDIT_RETENTION_DAYS", default_value_t = 400, value_parser = clap::value_parser!(i32).range(1..))]
    pub audit_retention_days: i32,
    /// Mail server for notifications: smtp://host:port (plain),
    /// smtp://host:587?tls=required (STARTTLS) or smtps://host (TLS);
    /// credentials as smtp://user:password@host. Without it, no email.
    #[arg(long, env = "BERTH_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Sender of notification mail.
    #[arg(long, env = "BERTH_SMTP_FROM", default_value = "Berth <berth@localhost>")]
    pub smtp_from: String,
    /// Let webhooks reach loopback, private and link-local addresses (off:
    /// any user could otherwise make the worker call the cluster's insides).
    #[arg(long, env = "BERTH_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
}

/// An extended resource name such as `nvidia.com/gpu` (a quota key follows from it).
fn parse_resource_name(text: &str) -> Result<String, String> {
    if text.contains('/') && app::rules::pool_spec::is_label_key(text) {
        Ok(text.to_string())
    } else {
        Err(format!("`{text}` is not an extended resource name such as nvidia.com/gpu"))
    }
}

/// `key=value`, as in a label selector.
fn parse_label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not key=value")),
    }
}

impl ClusterArgs {
    /// The worker these settings describe.
    /// `portal_url` is where the links in notifications point.
    pub fn worker(&self, db: PgPool, client: kube::Client, portal_url: &url::Url) -> anyhow::Result<Reconciler> {
        if self.image_cache {
            if let Some(image) = self.cache_images.iter().find(|i| !manifests::cacheable(i, &self.cache_registries)) {
                anyhow::bail!(
                    "--cache-images: {image} is not pinned by digest (…@sha256:…) from a --cache-registries entry"
                );
            }
        }
        let mut worker = Reconciler::new(db, client, self.cluster());
        let mail = match &self.smtp_url {
            Some(smtp) => Some(
                crate::notify::email::Mail::new(smtp, &self.smtp_from, portal_url.host_str().unwrap_or("berth"))
                    .map_err(anyhow::Error::msg)?,
            ),
            None => None,
        };
        worker.notifier = Some(crate::notify::Notifier {
            mail,
            webhooks: crate::notify::webhook::Webhooks::new(self.webhook_allow_private)?,
            portal_url: portal_url.as_str().trim_end_matches('/').to_string(),
            simulated: false,
        });
        worker.policy.audit_retention_days = self.audit_retention_days;
        worker.usage = self.prometheus_url.as_ref().and_then(|url| {
            match crate::usage::prometheus::Prometheus::new(url.clone(), self.prometheus_token.clone()) {
                Ok(prometheus) => Some(crate::usage::UsageSource {
                    prometheus,
                    selector: self.dcgm_selector.clone(),
                    threshold: self.active_threshold,
                }),
                Err(err) => {
                    tracing::error!(error = %err, "cannot build the Prometheus client; GPU use is not measured");
                    None
                }
            }
        });
        Ok(worker)
    }

    /// The fleet of clusters this process drives (see `provisioner::clusters`):
    /// its own through `client`, and others as the flags and rows say. Its
    /// own cluster's worker carries the site's duties (notifications, GPU
    /// use, retention); the outbox and the usage minutes are safe to share
    /// between processes, each row taken once. A worker `confined` to its
    /// cluster's rows (`member_role`) carries none.
    pub fn fleet(
        &self,
        db: PgPool,
        reach: Arc<ClusterClients>,
        portal_url: &url::Url,
        confined: bool,
    ) -> anyhow::Result<Fleet> {
        // Checked once here: the flags cannot change while the process runs.
        let site = self.worker(db.clone(), reach.own_client(), portal_url)?;
        let simulated = reach.simulates();
        let (notifier, usage) = (site.notifier, site.usage);
        let args = self.clone();
        let build_db = db.clone();
        let build = move |client: kube::Client, row: &app::model::Cluster, own: bool| {
            let mut worker = Reconciler::new(build_db.clone(), client, args.cluster_with(row));
            worker.policy.audit_retention_days = args.audit_retention_days;
            worker.simulated = simulated;
            worker.verify_domain = !simulated;
            worker.site_duties = own && !confined;
            if worker.site_duties {
                worker.notifier = notifier.clone().map(|mut n| {
                    n.simulated = simulated;
                    n
                });
                worker.usage = usage.clone();
            }
            worker
        };
        Ok(Fleet { db, reach, hub: self.hub, build: Arc::new(build) })
    }

    /// How this process reaches each cluster: its own through `client`,
    /// others as the flags say, simulated ones too when `simulated`.
    pub fn reach(&self, client: kube::Client, simulated: bool) -> Arc<ClusterClients> {
        let reach = ClusterClients::new(&self.own_cluster, client)
            .kubeconfigs(&self.kubeconfig_namespace, &self.portal_kubeconfig_namespace);
        Arc::new(if simulated { reach.simulating() } else { reach })
    }

    /// The flags' settings with what `row` sets itself in their place.
    pub fn cluster_with(&self, row: &app::model::Cluster) -> Cluster {
        let mut cluster = self.cluster();
        let switches = &row.switches;
        if let Some(domain) = &switches.workspace_domain {
            cluster.domain = domain.clone();
        }
        match switches.expose.as_deref() {
            Some("route") => cluster.expose = Expose::Route,
            Some("ingress") => cluster.expose = Expose::Ingress,
            _ => {}
        }
        if let Some(kueue) = switches.kueue {
            cluster.kueue = kueue;
        }
        let mode = match switches.scale_ahead_mode.as_deref() {
            Some("placeholder") => AheadMode::Placeholder,
            Some("capacity-buffer") => AheadMode::CapacityBuffer,
            _ => self.scale_ahead_mode,
        };
        let lead = switches.scale_ahead_minutes.map(|m| chrono::Duration::minutes(i64::from(m))).or(self.scale_ahead);
        cluster.scale_ahead = lead.map(|lead| ScaleAhead { lead, mode, pause_image: self.pause_image.clone() });
        match switches.image_cache {
            Some(false) => cluster.image_cache = None,
            Some(true) if cluster.image_cache.is_none() => {
                cluster.image_cache = Some(ImageCache {
                    images: self.cache_images.clone(),
                    registries: self.cache_registries.clone(),
                    node_selector: [self.gpu_node_selector.clone()].into_iter().collect(),
                    pause_image: self.pause_image.clone(),
                })
            }
            _ => {}
        }
        cluster
    }

    pub fn cluster(&self) -> Cluster {
        let proxy = match (&self.proxy_url, &self.proxy_cidr) {
            (Some(url), Some(cidr)) => Some(Proxy {
                http: url.to_string(),
                https: url.to_string(),
                no_proxy: self.no_proxy.clone(),
                cidr: cidr.clone(),
                port: i32::from(url.port_or_known_default().unwrap_or(3128)),
            }),
            _ => None,
        };
        Cluster {
            ingress_namespace: self.ingress_namespace.clone(),
            domain: self.workspace_domain.clone(),
            ingress_class: self.ingress_class.clone(),
            storage_class: self.storage_class.clone(),
            proxy,
            model_cache_gib: self.model_cache_gib,
            expose: self.expose,
            berth_namespace: self.berth_namespace.clone(),
            deny_resources: self.deny_resources.clone(),
            gate_image: self.gate_image.clone(),
            kueue: self.kueue,
            scale_ahead: self.scale_ahead.map(|lead| crate::provisioner::manifests::ahead::ScaleAhead {
                lead,
                mode: self.scale_ahead_mode,
                pause_image: self.pause_image.clone(),
            }),
            image_cache: self.image_cache.then(|| ImageCache {
                images: self.cache_images.clone(),
                registries: self.cache_registries.clone(),
                node_selector: [self.gpu_node_selector.clone()].into_iter().collect(),
                pause_image: self.pause_image.clone(),
            }),
        }
    }
}
