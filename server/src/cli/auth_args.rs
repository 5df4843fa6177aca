//! How people sign in, as flags: checked together and turned into the
//! portal's `AuthConfig`.

use super::parse_lifetime;
use crate::auth::{AuthConfig, GroupMapping, OidcSettings};
use chrono::Duration;
use clap::Args;
use std::net::SocketAddr;

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
    /// Expensive requests one signed-in person may make per minute (the
    /// free view, the sizing helper, finding a slot, opening a workspace);
    /// past it they get 429 until the minute ends.
    #[arg(long, env = "BERTH_EXPENSIVE_RATE_LIMIT", default_value_t = 60)]
    pub expensive_rate_limit: u32,
    /// Requests one API token may make per minute, REST and MCP alike (0:
    /// no limit); past it, 429 until the minute ends. The default lets a
    /// script book at 100 a second and stops a runaway assistant.
    #[arg(long, env = "BERTH_TOKEN_RATE_LIMIT", default_value_t = 6000)]
    pub token_rate_limit: u32,
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
                expensive_per_minute: self.expensive_rate_limit,
                token_requests_per_minute: self.token_rate_limit,
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

/// `http://127.0.0.1:3000`, `http://[::1]`, `http://localhost`: reachable from this machine only.
fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}
