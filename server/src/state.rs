use crate::auth::Auth;
use crate::provisioner::manifests::Cluster;
use app::backend::accounts::tokens::TokenCache;
use app::backend::admission::AdmissionQueue;
use app::backend::calendar::feed::FeedKey;
use app::model::ClusterMode;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;

/// How long a token's principal is remembered; also the longest a revoked
/// token, or a role or tenant change, can lag behind.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);

/// Shared by every handler; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: PgPool,
    pub leptos: LeptosOptions,
    /// The built site's `/pkg` files (names, caching, compression).
    pub site: crate::web::site_files::SiteFiles,
    pub tokens: Arc<TokenCache>,
    pub admissions: AdmissionQueue,
    pub auth: Arc<Auth>,
    /// How the cluster that runs workspaces is set up.
    pub cluster: Arc<Cluster>,
    /// Whether the worker provisions on the in-memory simulated cluster.
    pub mode: ClusterMode,
    /// The clusters, read only to open a workspace for its owner (the worker
    /// does everything else). `None`: the portal cannot open workspaces.
    pub reach: Option<Arc<crate::provisioner::cluster_clients::ClusterClients>>,
    /// Calendar-feed URLs are derived from it.
    pub feed_key: FeedKey,
    /// The ISO 4217 code prices are in (`--currency`).
    pub currency: String,
}

impl FromRef<AppState> for crate::auth::AuthState {
    fn from_ref(state: &AppState) -> Self {
        Self { db: state.db.clone(), tokens: state.tokens.clone(), auth: state.auth.clone() }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

impl AppState {
    /// Options for the site built by `.ci/build-site.sh` (or cargo-leptos)
    /// into `site_root`, with the output name fixed in Cargo.toml's metadata.
    pub fn new(db: PgPool, site_root: &str, auth: Auth) -> Self {
        let leptos = LeptosOptions::builder().output_name("berth").site_root(site_root).site_pkg_dir("pkg").build();
        let public_url = auth.config.public_url.as_str();
        let feed_key = match &auth.config.calendar_key {
            Some(key) => FeedKey::new(&key.0, public_url),
            None => FeedKey::ephemeral(public_url),
        };
        Self {
            feed_key,
            admissions: AdmissionQueue::new(db.clone()),
            tokens: Arc::new(TokenCache::new(TOKEN_CACHE_TTL)),
            db,
            leptos,
            site: crate::web::site_files::SiteFiles::new(site_root),
            auth: Arc::new(auth),
            cluster: Arc::new(Cluster::default()),
            mode: ClusterMode::default(),
            reach: None,
            currency: app::model::DEFAULT_CURRENCY.into(),
        }
    }

    pub fn with_cluster(
        mut self,
        cluster: Cluster,
        mode: ClusterMode,
        reach: Arc<crate::provisioner::cluster_clients::ClusterClients>,
    ) -> Self {
        self.cluster = Arc::new(cluster);
        self.mode = mode;
        self.reach = Some(reach);
        self
    }
}
