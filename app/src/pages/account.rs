//! Server fns about the signed-in person: who they are, how one signs in,
//! their API tokens, and (for admins) every user's tenants. Each reads the
//! request's principal through `backend::identity`, the one place identity
//! is resolved.

use crate::model::{CreatedToken, Principal, TokenInfo, UserSummary};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// How this portal lets people sign in; provided by the server's context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignInOptions {
    /// An OpenID provider is configured: `/auth/login` starts its flow.
    pub single_sign_on: bool,
    /// The labelled development login is on (only ever on a loopback address).
    pub dev_login: bool,
}

/// A user the development login offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DevUser {
    pub email: String,
    pub name: String,
    pub role: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignInPageData {
    pub options: SignInOptions,
    pub dev_users: Vec<DevUser>,
}

#[cfg(feature = "ssr")]
mod serve {
    pub use crate::backend::identity::{signed_in, to_server_error};
    pub use sqlx::PgPool;
}

/// The signed-in principal, or `None` for an anonymous visitor.
#[server(prefix = "/rpc", endpoint = "me", output = crate::codec::JsonText)]
pub async fn current_user() -> Result<Option<Principal>, ServerFnError> {
    Ok(crate::backend::identity::current())
}

#[server(prefix = "/rpc", endpoint = "sign_in_options", output = crate::codec::JsonText)]
pub async fn load_sign_in_page() -> Result<SignInPageData, ServerFnError> {
    use serve::*;
    let options = use_context::<SignInOptions>().unwrap_or_default();
    let dev_users = if options.dev_login {
        let db = expect_context::<PgPool>();
        crate::backend::users::dev_login_candidates(&db)
            .await
            .map_err(to_server_error)?
            .into_iter()
            .map(|u| DevUser { email: u.email, name: u.name, role: u.role.as_str().to_string() })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SignInPageData { options, dev_users })
}

#[server(prefix = "/rpc", endpoint = "tokens/list", output = crate::codec::JsonText)]
pub async fn list_tokens() -> Result<Vec<TokenInfo>, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::tokens::list_for(&expect_context::<PgPool>(), &principal).await.map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "tokens/create", output = crate::codec::JsonText)]
pub async fn create_token(name: String, expires_in_days: i64) -> Result<CreatedToken, ServerFnError> {
    use serve::*;
    let principal = crate::backend::identity::signed_in_browser(
        "API tokens are created from a signed-in browser session, never with another API token",
    )
    .map_err(to_server_error)?;
    crate::backend::tokens::create_for(&expect_context::<PgPool>(), &principal, &name, expires_in_days)
        .await
        .map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "tokens/revoke", output = crate::codec::JsonText)]
pub async fn revoke_token(id: Uuid) -> Result<TokenInfo, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    let cache = expect_context::<std::sync::Arc<crate::backend::tokens::TokenCache>>();
    crate::backend::tokens::revoke(&expect_context::<PgPool>(), &cache, &principal, id).await.map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "users/list", output = crate::codec::JsonText)]
pub async fn list_users() -> Result<Vec<UserSummary>, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::users::list(&expect_context::<PgPool>(), &principal).await.map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "users/assign_tenant", output = crate::codec::JsonText)]
pub async fn assign_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::users::assign_tenant(&expect_context::<PgPool>(), &principal, user_id, tenant.trim())
        .await
        .map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "users/remove_tenant", output = crate::codec::JsonText)]
pub async fn remove_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::users::remove_tenant(&expect_context::<PgPool>(), &principal, user_id, &tenant)
        .await
        .map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "users/disable", output = crate::codec::JsonText)]
pub async fn disable_user(user_id: Uuid, reason: String) -> Result<UserSummary, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    let cache = expect_context::<std::sync::Arc<crate::backend::tokens::TokenCache>>();
    crate::backend::user_disable::disable(&expect_context::<PgPool>(), &cache, &principal, user_id, &reason)
        .await
        .map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "users/enable", output = crate::codec::JsonText)]
pub async fn enable_user(user_id: Uuid) -> Result<UserSummary, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::user_disable::enable(&expect_context::<PgPool>(), &principal, user_id)
        .await
        .map_err(to_server_error)
}
