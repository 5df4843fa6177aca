//! The data behind the home page: the pools the signed-in user may book with
//! what is free now, and the coming week's bookings as anonymous occupancy.

use crate::model::Overview;
use crate::rpc::RpcError;
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "overview", output = crate::codec::JsonText)]
pub async fn load_overview() -> Result<Overview, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let db = ctx.db;
    Ok(crate::backend::calendar::overview::load(&db, &principal).await?)
}
