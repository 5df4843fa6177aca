//! What a user hears about and where: per event, email and webhook on or
//! off (Settings, `GET/PUT /api/v1/me/notifications`), and their webhooks.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Every event, with what Settings calls it. The outbox's CHECK lists the same.
pub const EVENTS: [(&str, &str); 12] = [
    ("booking.pending", "A booking awaits approval (admins)"),
    ("booking.approved", "My booking is approved"),
    ("booking.rejected", "My booking is rejected"),
    ("waitlist.promoted", "My waitlist entry became a booking"),
    ("booking.starting", "My window starts in 15 minutes"),
    ("booking.ending", "My window ends in 15 minutes"),
    ("workspace.ready", "My workspace is ready"),
    ("booking.failed", "My booking failed"),
    ("booking.idle", "My live booking's GPUs are idle"),
    ("session.stuck", "An ended session's namespace is stuck terminating (admins)"),
    ("booking.maintenance", "Maintenance overlaps my booking"),
    ("home.expiring", "My home or model cache is deleted in 7 days, and again 1 day before"),
];

/// Events only admins are ever notified of.
const ADMIN_EVENTS: [&str; 2] = ["booking.pending", "session.stuck"];

/// The events a person of `role` can be notified of: Settings lists only
/// these (a plain user is never sent an approval request).
pub fn events_for(role: crate::model::Role) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    EVENTS.iter().filter(move |(event, _)| role == crate::model::Role::Admin || !ADMIN_EVENTS.contains(event))
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preference {
    pub event: String,
    pub email: bool,
    pub webhook: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: Uuid,
    pub url: String,
    /// The tenant a tenant-wide hook belongs to; `None` for a user's own.
    pub tenant: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A webhook just made: its signing secret is shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    pub secret: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationSettings {
    /// One per event of EVENTS, in that order.
    pub preferences: Vec<Preference>,
    pub webhooks: Vec<Webhook>,
}
