//! The data behind the home page: the pools the signed-in user may book with
//! what is free now, and the coming week's bookings as anonymous occupancy.

use crate::model::Overview;
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "overview", output = crate::codec::JsonText)]
pub async fn load_overview() -> Result<Overview, ServerFnError> {
    use crate::backend::identity::{signed_in, to_server_error};
    let principal = signed_in().map_err(to_server_error)?;
    let db = expect_context::<sqlx::PgPool>();
    crate::backend::overview::load(&db, &principal).await.map_err(to_server_error)
}
