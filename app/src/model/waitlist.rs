//! Requests waiting for capacity in exactly their window.

use super::Window;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitlistState {
    /// On the list; admitted as soon as it fits.
    Waiting,
    /// Became the booking `booking_id`.
    Admitted,
    /// Its window started before it fit.
    Expired,
    /// Its requester left the list.
    Left,
    /// Can no longer be admitted for a reason other than capacity or quota
    /// (the pool was retired, the tenant lost access); `reason` says which.
    Closed,
}

impl WaitlistState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Admitted => "admitted",
            Self::Expired => "expired",
            Self::Left => "left",
            Self::Closed => "closed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Waiting, Self::Admitted, Self::Expired, Self::Left, Self::Closed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

// Decoded checked, like a booking's state.
#[cfg(feature = "ssr")]
crate::model::checked_text_decode!(WaitlistState, "waitlist state");

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitlistEntry {
    pub id: Uuid,
    pub pool_id: Uuid,
    pub pool_name: String,
    pub kind: String,
    pub quantity: i32,
    pub window: Window,
    pub tenant: String,
    pub user_email: String,
    pub state: WaitlistState,
    /// 1 for the first entry still waiting in its pool+kind; `None` once it left the list.
    pub position: Option<i64>,
    pub booking_id: Option<Uuid>,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

/// An entry as My bookings lists it: its window in the viewer's zone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitlistLine {
    pub entry: WaitlistEntry,
    pub when: String,
}
