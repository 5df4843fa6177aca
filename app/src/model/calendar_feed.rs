//! A user's secret calendar feed (ICS), as Settings and
//! `GET /api/v1/me/calendar-feed` show it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolFeed {
    pub pool: String,
    pub url: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalendarFeed {
    /// The feed of the caller's own bookings; `None` when this server's
    /// calendar key changed since it was made (regenerate to see a new one).
    pub url: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Admins: each pool's occupancy, through the same secret.
    pub pools: Vec<PoolFeed>,
}
