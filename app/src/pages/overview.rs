//! The data behind the home page: pools with what is free now, and the bookings
//! of the coming week as anonymous occupancy.

use crate::model::{Booking, Pool};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindSummary {
    pub kind: String,
    pub capacity: i32,
    pub free_now: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolSummary {
    pub pool: Pool,
    pub kinds: Vec<KindSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    pub now: DateTime<Utc>,
    pub pools: Vec<PoolSummary>,
    pub bookings: Vec<Booking>,
}

#[server(prefix = "/rpc", endpoint = "overview")]
pub async fn load_overview() -> Result<Overview, ServerFnError> {
    let db = expect_context::<sqlx::PgPool>();
    crate::backend::overview::load(&db).await.map_err(|err| ServerFnError::new(err.public_message()))
}
