//! The home page's data: the pools the signed-in user may book with what is
//! free now, and the coming week's bookings as anonymous occupancy.

use super::{Booking, Pool};
use chrono::{DateTime, Utc};
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
