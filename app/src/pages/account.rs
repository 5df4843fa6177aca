//! Server fns about the signed-in person: who they are, how one signs in,
//! their API tokens, and (for admins) every user's tenants. Each reads the
//! request's principal through `backend::identity`, the one place identity
//! is resolved.

use crate::model::{CreatedToken, Principal, SignInPageData, TokenInfo, UserSummary};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// The signed-in principal, or `None` for an anonymous visitor.
#[server(prefix = "/rpc", endpoint = "me", output = crate::codec::JsonText)]
pub async fn current_user() -> Result<Option<Principal>, RpcError> {
    Ok(crate::rpc::visitor()?.0)
}

/// The zone the browser reports once hydrated, kept for mails and feeds
/// until the person chooses one in Settings. (Not learnt while rendering:
/// a write there delayed every page's `me` and unsettled hydration.)
#[server(prefix = "/rpc", endpoint = "me/zone", output = crate::codec::JsonText)]
pub async fn remember_zone(zone: String) -> Result<(), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::time_zone::learn(&ctx.db, &principal, &zone).await?)
}

/// The reader's clock (`rpc::no_script::reader_zone`: `tz` when a page
/// asks for one, else their Settings zone, else their browser's), for
/// `pages::reader_clock`.
#[server(prefix = "/rpc", endpoint = "clock", output = crate::codec::JsonText)]
pub async fn load_clock(tz: String) -> Result<crate::model::Clock, RpcError> {
    let own = tz.is_empty() && crate::rpc::no_script::own_zone().await.is_some();
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::model::Clock { own, ..crate::rules::local_time::clock(&tz, chrono::Utc::now()) })
}

/// Whether the worker provisions on the simulated cluster: every page says
/// so in its header, since nothing it shows as provisioned or measured runs.
#[server(prefix = "/rpc", endpoint = "cluster", output = crate::codec::JsonText)]
pub async fn cluster_is_simulated() -> Result<bool, RpcError> {
    Ok(crate::rpc::visitor()?.1.mode.simulated)
}

#[server(prefix = "/rpc", endpoint = "sign_in_options", output = crate::codec::JsonText)]
pub async fn load_sign_in_page() -> Result<SignInPageData, RpcError> {
    let (_, ctx) = crate::rpc::visitor()?;
    let options = ctx.sign_in;
    let dev_users = if options.dev_login {
        crate::backend::accounts::users::dev_login_candidates(&ctx.db)
            .await?
            .into_iter()
            .map(|u| crate::model::DevUser { email: u.email, name: u.name, role: u.role.as_str().to_string() })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SignInPageData { options, dev_users })
}

#[server(prefix = "/rpc", endpoint = "tokens/list", output = crate::codec::JsonText)]
pub async fn list_tokens() -> Result<Vec<TokenInfo>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tokens::list_for(&ctx.db, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "tokens/create", output = crate::codec::JsonText)]
pub async fn create_token(name: String, expires_in_days: i64) -> Result<CreatedToken, RpcError> {
    let (principal, ctx) =
        crate::rpc::browser("API tokens are created from a signed-in browser session, never with another API token")?;
    Ok(crate::backend::accounts::tokens::create_for(&ctx.db, &principal, &name, expires_in_days).await?)
}

#[server(prefix = "/rpc", endpoint = "tokens/revoke", output = crate::codec::JsonText)]
pub async fn revoke_token(id: Uuid) -> Result<TokenInfo, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tokens::revoke(&ctx.db, &ctx.tokens, &principal, id).await?)
}

#[server(prefix = "/rpc", endpoint = "users/list", output = crate::codec::JsonText)]
pub async fn list_users() -> Result<Vec<UserSummary>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::list(&ctx.db, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "users/assign_tenant", output = crate::codec::JsonText)]
pub async fn assign_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::assign_tenant(&ctx.db, &principal, user_id, tenant.trim()).await?)
}

#[server(prefix = "/rpc", endpoint = "users/remove_tenant", output = crate::codec::JsonText)]
pub async fn remove_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::remove_tenant(&ctx.db, &principal, user_id, &tenant).await?)
}

#[server(prefix = "/rpc", endpoint = "users/disable", output = crate::codec::JsonText)]
pub async fn disable_user(user_id: Uuid, reason: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::disable::disable(&ctx.db, &ctx.tokens, &principal, user_id, &reason).await?)
}

#[server(prefix = "/rpc", endpoint = "users/enable", output = crate::codec::JsonText)]
pub async fn enable_user(user_id: Uuid) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::disable::enable(&ctx.db, &principal, user_id).await?)
}
