//! Identity for every transport: OIDC login and server-side sessions for
//! browsers, bearer tokens for API clients, resolved once per request into an
//! `Identity`; plus CSRF and security-header layers.

pub mod config;
pub mod csrf;
pub mod headers;
pub mod identity;
pub mod oidc;
pub mod rate_limit;
pub mod routes;
pub mod session;

pub use config::{AuthConfig, GroupMapping, OidcSettings, SecretKey};

/// The auth configuration and, when configured, the OpenID relying party.
pub struct Auth {
    pub config: AuthConfig,
    pub oidc: Option<oidc::Oidc>,
    pub limits: rate_limit::Limits,
}

impl Auth {
    pub fn new(config: AuthConfig) -> anyhow::Result<Self> {
        let oidc = match &config.oidc {
            Some(settings) => Some(oidc::Oidc::new(settings.clone(), config.redirect_url())?),
            None => None,
        };
        let limits = rate_limit::Limits::new(config.rate_limits.clone());
        Ok(Self { config, oidc, limits })
    }
}
