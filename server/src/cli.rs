//! The `berth` command line. Every flag has an environment fallback so the
//! same binary runs from a shell, a script or a container.

use crate::auth::{Auth, AuthConfig, GroupMapping, OidcSettings};
use crate::worker::manifests::{self, Cluster, Expose, ImageCache, Proxy, Session};
use crate::worker::reconcile::Reconciler;
use crate::worker::run::run as run_worker;
use crate::worker::simulated::SimulatedCluster;
use crate::{router, seed, AppState};
use app::backend::{tokens, users, MIGRATOR};
use app::model::ClusterMode;
use app::model::Role;
use chrono::Duration;
use clap::{Args, Parser, Subcommand, ValueEnum};
use sqlx::PgPool;
use std::net::SocketAddr;

#[derive(Parser)]
#[command(name = "berth", version, about = "Self-service GPU booking for Kubernetes and OpenShift")]
pub struct Cli {
    /// Log lines as text for people, or as JSON (one object per line, with
    /// the request id) for a log pipeline.
    #[arg(long, global = true, env = "BERTH_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// How long in-flight requests may finish after SIGTERM (Kubernetes waits
/// `terminationGracePeriodSeconds`, 40 s in deploy/, before SIGKILL).
const DRAIN: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Args, Clone)]
pub struct Database {
    /// PostgreSQL connection URL.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
}

#[derive(Subcommand)]
pub enum Command {
    /// Migrate the database, then serve the portal and the API.
    Serve {
        #[command(flatten)]
        db: Database,
        /// Address to listen on.
        #[arg(long, env = "BERTH_LISTEN", default_value = "127.0.0.1:3000")]
        listen: SocketAddr,
        /// Folder with the built site (`pkg/berth.js`, `.wasm`, `.css`).
        #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
        site_root: String,
        /// Database connections kept open.
        #[arg(long, env = "BERTH_DB_CONNECTIONS", default_value_t = 32)]
        db_connections: u32,
        #[command(flatten)]
        auth: Box<AuthArgs>,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
        /// Serve the portal only; another process runs `berth worker`.
        #[arg(long, env = "BERTH_NO_WORKER")]
        no_worker: bool,
        /// Serve Prometheus metrics at http://<address>/metrics (a port of its own).
        #[arg(long, env = "BERTH_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
        /// Seconds a client has to send a request's head (then it is disconnected).
        #[arg(long, env = "BERTH_HEADER_READ_TIMEOUT", default_value_t = 10)]
        header_read_timeout: u64,
    },
    /// Run the provisioning worker alone (needs a kubeconfig or in-cluster config).
    Worker {
        #[command(flatten)]
        db: Database,
        /// The portal's address as people reach it (links in notifications).
        #[arg(long, env = "BERTH_PUBLIC_URL", default_value = "http://127.0.0.1:3000")]
        public_url: url::Url,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
        /// Serve Prometheus metrics at http://<address>/metrics.
        #[arg(long, env = "BERTH_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
    },
    /// Apply pending database migrations.
    Migrate {
        #[command(flatten)]
        db: Database,
    },
    /// Create the demo pool (modelled on the reference lab) if it is missing.
    SeedDemo {
        #[command(flatten)]
        db: Database,
    },
    /// Print the objects the worker applies for a booking (multi-document YAML).
    Manifests {
        #[command(flatten)]
        db: Database,
        booking_id: uuid::Uuid,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
    },
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// In a workspace's pod: the auth step in front of it (one-time codes
    /// from "Open workspace" for a cookie); the token from BERTH_ACCESS_TOKEN.
    Gate {
        #[arg(long, env = "BERTH_GATE_LISTEN", default_value = "0.0.0.0:8888")]
        listen: SocketAddr,
        /// The workspace itself, in the same pod.
        #[arg(long, env = "BERTH_GATE_UPSTREAM", default_value = "127.0.0.1:8889")]
        upstream: SocketAddr,
    },
    #[command(flatten)]
    Client(crate::client::Command),
}

/// How people sign in. Without an issuer there is no single sign-on; the
/// development login must be asked for and only works on loopback.
#[derive(Args, Clone)]
pub struct AuthArgs {
    /// The portal's external URL (origin checks, OIDC redirect `<url>/auth/callback`,
    /// `Secure` cookies when https). Defaults to http://<listen address>.
    #[arg(long, env = "BERTH_PUBLIC_URL")]
    pub public_url: Option<url::Url>,
    /// OpenID provider issuer URL; enables single sign-on.
    #[arg(long, env = "BERTH_OIDC_ISSUER", requires = "oidc_client_id")]
    pub oidc_issuer: Option<String>,
    #[arg(long, env = "BERTH_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// Client secret (prefer the file variant; never logged).
    #[arg(long, env = "BERTH_OIDC_CLIENT_SECRET", hide_env_values = true, conflicts_with = "oidc_client_secret_file")]
    pub oidc_client_secret: Option<String>,
    /// File holding the client secret.
    #[arg(long, env = "BERTH_OIDC_CLIENT_SECRET_FILE")]
    pub oidc_client_secret_file: Option<std::path::PathBuf>,
    /// Scopes to ask for, comma-separated.
    #[arg(long, env = "BERTH_OIDC_SCOPES", value_delimiter = ',', default_value = "openid,email,profile,groups")]
    pub oidc_scopes: Vec<String>,
    /// The ID-token claim that lists the user's groups.
    #[arg(long, env = "BERTH_OIDC_GROUPS_CLAIM", default_value = "groups")]
    pub oidc_groups_claim: String,
    /// The ID-token claim the cluster names users by: the same as the API
    /// server's `--oidc-username-claim` (an `email` claim counts only when
    /// verified). Session RoleBindings bind that name.
    #[arg(long, env = "BERTH_CLUSTER_USERNAME_CLAIM", default_value = "email")]
    pub cluster_username_claim: String,
    /// Prefix of those names: the same as the API server's `--oidc-username-prefix`.
    #[arg(long, env = "BERTH_CLUSTER_USERNAME_PREFIX", default_value = "")]
    pub cluster_username_prefix: String,
    /// Groups whose members are admins, comma-separated.
    #[arg(long, env = "BERTH_ADMIN_GROUPS", value_delimiter = ',', default_value = "berth-admins")]
    pub admin_groups: Vec<String>,
    /// Groups whose members are managers, comma-separated.
    #[arg(long, env = "BERTH_MANAGER_GROUPS", value_delimiter = ',', default_value = "berth-managers")]
    pub manager_groups: Vec<String>,
    /// A group `<prefix><slug>` makes its members part of tenant `<slug>`.
    #[arg(long, env = "BERTH_TENANT_GROUP_PREFIX", default_value = "berth-team-")]
    pub tenant_group_prefix: String,
    /// Offer the labelled development login (pick a local user); loopback only.
    #[arg(long, env = "BERTH_DEV_LOGIN")]
    pub dev_login: bool,
    /// A session ends after this long without a request (e.g. 8h, 30m).
    #[arg(long, env = "BERTH_SESSION_IDLE", default_value = "8h", value_parser = parse_lifetime)]
    pub session_idle: Duration,
    /// A session ends this long after login, however busy (e.g. 24h).
    #[arg(long, env = "BERTH_SESSION_LIFETIME", default_value = "24h", value_parser = parse_lifetime)]
    pub session_lifetime: Duration,
    /// File holding the key calendar-feed URLs are derived from (at least
    /// 32 characters; the same for every replica). Without it each process
    /// makes its own: feed URLs keep working, but Settings cannot show them
    /// again after a restart.
    #[arg(long, env = "BERTH_CALENDAR_KEY_FILE")]
    pub calendar_key_file: Option<std::path::PathBuf>,
    /// Requests to /auth/* one client address may make per minute (then 429).
    #[arg(long, env = "BERTH_AUTH_RATE_LIMIT", default_value_t = 60)]
    pub auth_rate_limit: u32,
    /// Failed bearer tokens one client address may send per minute; past
    /// it, its tokens are refused with 429 until the minute ends.
    #[arg(long, env = "BERTH_TOKEN_FAILURE_LIMIT", default_value_t = 20)]
    pub token_failure_limit: u32,
    /// Behind a reverse proxy: the header whose last entry is the client's
    /// address (e.g. X-Forwarded-For, appended by the proxy); without it
    /// the peer address counts.
    #[arg(long, env = "BERTH_CLIENT_ADDRESS_HEADER")]
    pub client_address_header: Option<axum::http::HeaderName>,
}

impl AuthArgs {
    /// Checks the combination and reads the secret file.
    pub fn into_config(self: Box<Self>, listen: SocketAddr) -> anyhow::Result<AuthConfig> {
        if self.dev_login && !listen.ip().is_loopback() {
            anyhow::bail!("--dev-login lets anyone sign in as any user; it is refused on {listen}, which is not a loopback address");
        }
        let public_url = match self.public_url {
            Some(url) => url,
            None => url::Url::parse(&format!("http://{listen}"))?,
        };
        let oidc = match (self.oidc_issuer, self.oidc_client_id) {
            (Some(issuer), Some(client_id)) => {
                let client_secret = match (self.oidc_client_secret, self.oidc_client_secret_file) {
                    (Some(secret), _) => secret,
                    (None, Some(path)) => std::fs::read_to_string(&path)
                        .map_err(|e| anyhow::anyhow!("cannot read the client secret file {}: {e}", path.display()))?
                        .trim()
                        .to_string(),
                    (None, None) => {
                        anyhow::bail!("--oidc-issuer needs --oidc-client-secret or --oidc-client-secret-file")
                    }
                };
                Some(OidcSettings {
                    issuer,
                    client_id,
                    client_secret,
                    scopes: self.oidc_scopes,
                    groups_claim: self.oidc_groups_claim,
                    cluster_username: crate::auth::config::ClusterUsername {
                        claim: self.cluster_username_claim,
                        prefix: self.cluster_username_prefix,
                    },
                })
            }
            _ => None,
        };
        if self.dev_login && oidc.is_some() {
            anyhow::bail!("--dev-login lets anyone sign in as any user; it is refused when single sign-on (--oidc-issuer) is configured");
        }
        if self.dev_login && !is_loopback_url(&public_url) {
            anyhow::bail!("--dev-login lets anyone sign in as any user; it is refused with --public-url {public_url}, which is not a loopback URL");
        }
        let calendar_key = match &self.calendar_key_file {
            Some(path) => {
                let key = std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("cannot read the calendar key file {}: {e}", path.display()))?;
                let key = key.trim();
                if key.len() < 32 {
                    anyhow::bail!("the calendar key in {} is shorter than 32 characters", path.display());
                }
                Some(crate::auth::SecretKey(key.as_bytes().to_vec()))
            }
            None => None,
        };
        let to_std = |d: Duration| d.to_std().unwrap_or_default();
        Ok(AuthConfig {
            calendar_key,
            rate_limits: crate::auth::rate_limit::RateLimits {
                auth_per_minute: self.auth_rate_limit,
                token_failures_per_minute: self.token_failure_limit,
                client_address_header: self.client_address_header,
            },
            public_url,
            oidc,
            dev_login: self.dev_login,
            groups: GroupMapping {
                admin_groups: self.admin_groups,
                manager_groups: self.manager_groups,
                tenant_prefix: self.tenant_group_prefix,
            },
            idle_timeout: to_std(self.session_idle),
            absolute_lifetime: to_std(self.session_lifetime),
        })
    }
}

/// How the cluster that runs workspaces is set up.
#[derive(Args, Clone)]
pub struct ClusterArgs {
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
    /// Size of each session's model cache volume.
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

/// `http://127.0.0.1:3000`, `http://[::1]`, `http://localhost`: reachable from this machine only.
fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
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
            Some(smtp) => {
                Some(crate::notify::email::Mail::new(smtp, &self.smtp_from, portal_url.host_str().unwrap_or("berth"))?)
            }
            None => None,
        };
        worker.notifier = Some(crate::notify::Notifier {
            mail,
            webhooks: crate::notify::webhook::Webhooks::new(self.webhook_allow_private)?,
            portal_url: portal_url.as_str().trim_end_matches('/').to_string(),
        });
        worker.policy.audit_retention_days = self.audit_retention_days;
        worker.usage = self.prometheus_url.as_ref().and_then(|url| {
            match crate::usage::prometheus::Prometheus::new(url.clone(), self.prometheus_token.clone()) {
                Ok(prometheus) => Some(crate::usage::UsageSource { prometheus, selector: self.dcgm_selector.clone() }),
                Err(err) => {
                    tracing::error!(error = %err, "cannot build the Prometheus client; GPU use is not measured");
                    None
                }
            }
        });
        Ok(worker)
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
            image_cache: self.image_cache.then(|| ImageCache {
                images: self.cache_images.clone(),
                registries: self.cache_registries.clone(),
                node_selector: [self.gpu_node_selector.clone()].into_iter().collect(),
                pause_image: self.pause_image.clone(),
            }),
        }
    }
}

/// The cluster the kubeconfig (or in-cluster config) names, or else the
/// in-memory simulated one, where the whole lifecycle can still be watched.
async fn cluster_client() -> (kube::Client, ClusterMode) {
    match real_cluster().await {
        Ok(client) => (client, ClusterMode { simulated: false }),
        Err(err) => {
            tracing::warn!(error = %err, "no Kubernetes cluster found: the worker uses a simulated, in-memory one");
            (SimulatedCluster::start(true).await.client(), ClusterMode { simulated: true })
        }
    }
}

/// The kubeconfig's (or in-cluster) cluster, its requests counted in the metrics.
async fn real_cluster() -> anyhow::Result<kube::Client> {
    let config = kube::Config::infer().await?;
    Ok(kube::client::ClientBuilder::try_from(config)?.with_layer(&crate::kube_metrics::CountRequests).build())
}

/// The manifests preview of one booking.
pub async fn render_manifests(db: &PgPool, booking_id: uuid::Uuid, cluster: &Cluster) -> anyhow::Result<String> {
    let facts =
        app::backend::provisioning::facts(db, booking_id).await.map_err(|e| anyhow::anyhow!(e.public_message()))?;
    Ok(manifests::preview(&Session::of(facts), cluster))
}

#[derive(Clone, Copy, ValueEnum)]
pub enum RoleArg {
    User,
    Admin,
    Manager,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::User => Role::User,
            RoleArg::Admin => Role::Admin,
            RoleArg::Manager => Role::Manager,
        }
    }
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user (or update name and role), and add them to a tenant.
    Add {
        #[command(flatten)]
        db: Database,
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        #[arg(long, value_enum, default_value = "user")]
        role: RoleArg,
        /// Tenant slug; created when it does not exist.
        #[arg(long)]
        tenant: String,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create an API token and print it once; only its hash is stored.
    Create {
        #[command(flatten)]
        db: Database,
        #[arg(long)]
        email: String,
        /// Lifetime such as 30d, 12h or 90m.
        #[arg(long, default_value = "30d", value_parser = parse_lifetime)]
        expires_in: Duration,
        #[arg(long, default_value = "cli")]
        name: String,
    },
}

/// Parses `<number><d|h|m>` into a positive duration.
pub fn parse_lifetime(text: &str) -> Result<Duration, String> {
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = digits.parse().map_err(|_| format!("`{text}` is not like 30d, 12h or 90m"))?;
    if n <= 0 || n > 3660 {
        return Err("the number must be between 1 and 3660".into());
    }
    match unit {
        "d" => Ok(Duration::days(n)),
        "h" => Ok(Duration::hours(n)),
        "m" => Ok(Duration::minutes(n)),
        _ => Err(format!("`{text}` needs a unit: d, h or m")),
    }
}

pub async fn connect(db: &Database, connections: u32) -> anyhow::Result<PgPool> {
    Ok(crate::database::pool_options(connections).connect(&db.database_url).await?)
}

/// SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
}

/// A stop flag raised by the first SIGTERM or Ctrl-C.
fn stop_on_signal() -> tokio::sync::watch::Receiver<bool> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("stopping: no new connections; requests in flight finish; the worker lets go of the lead");
        let _ = stop.send(true);
    });
    stopped
}

async fn stopped(mut flag: tokio::sync::watch::Receiver<bool>) {
    while !*flag.borrow_and_update() {
        if flag.changed().await.is_err() {
            return;
        }
    }
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Gate { listen, upstream } => {
            let token = std::env::var("BERTH_ACCESS_TOKEN").unwrap_or_default();
            anyhow::ensure!(!token.is_empty(), "BERTH_ACCESS_TOKEN (the session's access token) is not set");
            crate::gate::serve(listen, crate::gate::Gate::new(token, upstream)).await?;
        }
        Command::Worker { db, public_url, cluster, metrics_listen } => {
            let pool = connect(&db, 4).await?;
            MIGRATOR.run(&pool).await?;
            if let Some(addr) = metrics_listen {
                crate::metrics::serve(addr, pool.clone(), false).await?;
            }
            let client = real_cluster()
                .await
                .map_err(|e| anyhow::anyhow!("no Kubernetes cluster found (kubeconfig or in-cluster): {e}"))?;
            run_worker(cluster.worker(pool, client, &public_url)?, stop_on_signal()).await?;
        }
        Command::Serve {
            db,
            listen,
            site_root,
            db_connections,
            auth,
            cluster,
            no_worker,
            metrics_listen,
            header_read_timeout,
        } => {
            let config = auth.into_config(listen)?;
            let pool = connect(&db, db_connections).await?;
            MIGRATOR.run(&pool).await?;
            if config.dev_login {
                tracing::warn!("development login is ON: anyone reaching {listen} can sign in as any user");
            }
            if config.calendar_key.is_none() {
                tracing::warn!("no --calendar-key-file: calendar-feed URLs made now cannot be shown again after a restart (they keep working)");
            }
            let (client, mode) = cluster_client().await;
            if let Some(addr) = metrics_listen {
                crate::metrics::serve(addr, pool.clone(), mode.simulated).await?;
            }
            let mut worker = cluster.worker(pool.clone(), client.clone(), &config.public_url)?;
            worker.simulated = mode.simulated;
            let state = AppState::new(pool.clone(), &site_root, Auth::new(config)?).with_cluster(
                cluster.cluster(),
                mode,
                client.clone(),
            );
            let stop = stop_on_signal();
            let worker = (!no_worker).then(|| tokio::spawn(run_worker(worker, stop.clone())));
            let listener = tokio::net::TcpListener::bind(listen).await?;
            tracing::info!("serving on http://{listen}");
            let server = crate::http_server::serve(
                listener,
                router(state),
                std::time::Duration::from_secs(header_read_timeout),
                stopped(stop.clone()),
            );
            tokio::select! {
                served = server => served?,
                _ = async { stopped(stop.clone()).await; tokio::time::sleep(DRAIN).await } => {
                    tracing::warn!("requests still in flight {} s after the stop signal; stopping anyway", DRAIN.as_secs());
                }
            }
            if let Some(worker) = worker {
                match tokio::time::timeout(std::time::Duration::from_secs(5), worker).await {
                    Ok(Ok(Err(err))) => tracing::error!(error = %err, "the worker stopped with an error"),
                    Ok(_) => {}
                    Err(_) => tracing::warn!("the worker did not stop within 5 s"),
                }
            }
        }
        Command::Migrate { db } => {
            MIGRATOR.run(&connect(&db, 2).await?).await?;
            println!("database is up to date");
        }
        Command::SeedDemo { db } => {
            let pool = connect(&db, 2).await?;
            MIGRATOR.run(&pool).await?;
            println!("{}", seed::demo(&pool).await?);
            println!("{}", crate::seed_console::console(&pool).await?);
        }
        Command::Manifests { db, booking_id, cluster } => {
            print!("{}", render_manifests(&connect(&db, 2).await?, booking_id, &cluster.cluster()).await?);
        }
        Command::User { command: UserCommand::Add { db, email, name, role, tenant } } => {
            let id = users::upsert_user(&connect(&db, 2).await?, &email, &name, role.into(), &tenant).await?;
            println!("user {email} ({id}) is in tenant {tenant}");
        }
        Command::Token { command: TokenCommand::Create { db, email, expires_in, name } } => {
            let pool = connect(&db, 2).await?;
            let user = users::find_by_email(&pool, &email).await?;
            let issued = tokens::issue(&pool, user, &name, expires_in).await?;
            eprintln!("token for {email}, expires {}; it is shown only now:", issued.expires_at.to_rfc3339());
            println!("{}", issued.token);
        }
        Command::Client(command) => crate::client::run(command).await?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_take_days_hours_or_minutes() {
        assert_eq!(parse_lifetime("30d"), Ok(Duration::days(30)));
        assert_eq!(parse_lifetime("12h"), Ok(Duration::hours(12)));
        assert_eq!(parse_lifetime("90m"), Ok(Duration::minutes(90)));
        for bad in ["", "d", "30", "30s", "-1d", "0h", "1.5d", "99999d"] {
            assert!(parse_lifetime(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_command_parses_with_its_documented_flags() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "berth",
            "user",
            "add",
            "--database-url",
            "postgres://x",
            "--email",
            "a@b.c",
            "--name",
            "A",
            "--role",
            "manager",
            "--tenant",
            "t",
        ]);
        assert!(cli.is_ok());
        let serve = Cli::try_parse_from(["berth", "serve", "--database-url", "postgres://x"]).unwrap();
        match serve.command {
            Command::Serve { listen, .. } => assert_eq!(listen.to_string(), "127.0.0.1:3000"),
            _ => panic!("expected serve"),
        }
    }

    #[test]
    fn cluster_flags_choose_route_and_image_cache() {
        let parse = |extra: &[&str]| {
            let mut all = vec!["berth", "worker", "--database-url", "postgres://x"];
            all.extend_from_slice(extra);
            match Cli::try_parse_from(all).expect("parses").command {
                Command::Worker { cluster, .. } => cluster.cluster(),
                _ => panic!("expected worker"),
            }
        };
        let default = parse(&[]);
        assert_eq!((default.expose, default.image_cache.is_none()), (Expose::Ingress, true));
        let openshift = parse(&[
            "--expose",
            "route",
            "--image-cache",
            "--gpu-node-selector",
            "pool=h100",
            "--cache-images",
            "a:1,b:2",
            "--cache-registries",
            "nvcr.io/nvidia,quay.io",
        ]);
        assert_eq!(openshift.expose, Expose::Route);
        assert_eq!(openshift.berth_namespace, "berth");
        let cache = openshift.image_cache.unwrap();
        assert_eq!(cache.images, ["a:1", "b:2"]);
        assert_eq!(cache.registries, ["nvcr.io/nvidia", "quay.io"]);
        assert_eq!(cache.node_selector.get("pool").map(String::as_str), Some("h100"));
        assert!(
            Cli::try_parse_from(["berth", "worker", "--database-url", "x", "--gpu-node-selector", "novalue"]).is_err()
        );
        assert!(Cli::try_parse_from(["berth", "worker", "--database-url", "x", "--audit-retention-days", "0"]).is_err());
    }

    fn auth_of(args: &[&str]) -> (SocketAddr, Box<AuthArgs>) {
        let mut all = vec!["berth", "serve", "--database-url", "postgres://x"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).expect("parses").command {
            Command::Serve { listen, auth, .. } => (listen, auth),
            _ => panic!("expected serve"),
        }
    }

    #[test]
    fn dev_login_is_refused_off_loopback() {
        let (listen, auth) = auth_of(&["--dev-login", "--listen", "0.0.0.0:3000"]);
        let err = auth.into_config(listen).unwrap_err().to_string();
        assert!(err.contains("not a loopback address"), "{err}");
        let (listen, auth) = auth_of(&["--dev-login", "--listen", "[::1]:3000"]);
        assert!(auth.into_config(listen).unwrap().dev_login);
        for public in ["https://berth.example.org", "http://10.0.0.5:3000", "http://berth.local:3000"] {
            let (listen, auth) = auth_of(&["--dev-login", "--public-url", public]);
            let err = auth.into_config(listen).unwrap_err().to_string();
            assert!(err.contains("not a loopback URL"), "{public}: {err}");
        }
        for public in ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"] {
            let (listen, auth) = auth_of(&["--dev-login", "--public-url", public]);
            assert!(auth.into_config(listen).unwrap().dev_login, "{public}");
        }
        let (listen, auth) = auth_of(&[
            "--dev-login",
            "--oidc-issuer",
            "http://127.0.0.1:4410",
            "--oidc-client-id",
            "berth",
            "--oidc-client-secret",
            "s",
        ]);
        let err = auth.into_config(listen).unwrap_err().to_string();
        assert!(err.contains("single sign-on"), "{err}");
    }

    #[test]
    fn auth_defaults_and_secret_file() {
        let (listen, auth) = auth_of(&[]);
        let config = auth.into_config(listen).unwrap();
        assert_eq!(config.public_url.as_str(), "http://127.0.0.1:3000/");
        assert!(config.oidc.is_none() && !config.dev_login);
        assert_eq!(config.idle_timeout.as_secs(), 8 * 3600);
        assert_eq!(config.absolute_lifetime.as_secs(), 24 * 3600);

        let dir = std::env::temp_dir().join(format!("berth-secret-{}", std::process::id()));
        std::fs::write(&dir, "s3cret\n").unwrap();
        let (listen, auth) = auth_of(&[
            "--oidc-issuer",
            "https://id.example.org",
            "--oidc-client-id",
            "berth",
            "--oidc-client-secret-file",
            dir.to_str().unwrap(),
            "--public-url",
            "https://berth.example.org",
        ]);
        let config = auth.into_config(listen).unwrap();
        std::fs::remove_file(&dir).ok();
        let oidc = config.oidc.clone().unwrap();
        assert_eq!(oidc.client_secret, "s3cret");
        assert!(!format!("{config:?}").contains("s3cret"), "the secret must never be printed");
        assert!(config.secure_cookies());
        let (listen, auth) = auth_of(&["--oidc-issuer", "https://id.example.org", "--oidc-client-id", "berth"]);
        assert!(auth.into_config(listen).is_err(), "an issuer without a secret is refused");
    }
}
