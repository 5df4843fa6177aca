//! Identity for every transport: OIDC login and server-side sessions for
//! browsers, bearer tokens for API clients, resolved once per request into an
//! `Identity`; plus CSRF and security-header layers.

pub mod config;
pub mod csrf;
pub mod headers;
pub mod identity;
pub mod login;
pub mod oauth;
pub mod oidc;
pub mod rate_limit;
pub mod routes;
pub mod scope;

pub use config::{AuthConfig, GroupMapping, OidcSettings, SecretKey};

use app::backend::accounts::tokens::TokenCache;
use std::sync::Arc;

/// What the sign-in layers and routes read of the server's state. The
/// server's `AppState` provides it (`FromRef`), so nothing here imports the
/// state this module is a part of.
#[derive(Clone)]
pub struct AuthState {
    pub db: sqlx::PgPool,
    pub tokens: Arc<TokenCache>,
    pub auth: Arc<Auth>,
}

/// The auth configuration and, when configured, the OpenID relying party.
pub struct Auth {
    pub config: AuthConfig,
    pub oidc: Option<oidc::Oidc>,
    pub limits: rate_limit::Limits,
}

impl Auth {
    pub fn new(config: AuthConfig) -> Result<Self, reqwest::Error> {
        let oidc = match &config.oidc {
            Some(settings) => Some(oidc::Oidc::new(settings.clone(), config.redirect_url())?),
            None => None,
        };
        let limits = rate_limit::Limits::new(config.rate_limits.clone());
        Ok(Self { config, oidc, limits })
    }
}
