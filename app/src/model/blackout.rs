//! Maintenance windows of a pool.

use super::Booking;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct Blackout {
    pub id: Uuid,
    pub pool_id: Uuid,
    /// `None`: every kind of the pool.
    pub kind: Option<String>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub reason: String,
}

/// What to do with bookings a new blackout overlaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnOverlap {
    /// They run as booked; only new bookings are refused.
    Keep,
    /// They are canceled (or ended, if running) with the blackout's reason.
    Cancel,
}

/// `POST /api/v1/pools/{id}/blackouts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewBlackout {
    #[serde(default)]
    pub kind: Option<String>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub reason: String,
    /// Required when the window overlaps bookings (the refusal lists them).
    #[serde(default)]
    pub overlapping: Option<OnOverlap>,
}

/// The created blackout and the bookings it overlapped (kept or canceled).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlackoutCreated {
    pub blackout: Blackout,
    pub overlapping: Vec<Booking>,
    pub canceled: bool,
}
