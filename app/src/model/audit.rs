//! The audit log as admins read it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    /// Who acted (an email); `None` is Berth itself.
    pub actor: Option<String>,
    /// e.g. `booking.approved`, `tenant.create`, `quota.set`.
    pub action: String,
    /// What was acted on: a booking id, a tenant slug, a pool name, an email.
    pub target: String,
    pub tenant: Option<String>,
    pub pool: Option<String>,
    /// Why, or what changed.
    pub detail: String,
    /// The portal page of what `target` names, while it exists (e.g.
    /// `/bookings/{id}`, `/admin/pools/{id}`).
    #[serde(default)]
    pub link: Option<String>,
    /// When `target` is a booking that still exists: whose it is, its
    /// window and whether it is an extension, so the log names it ("Ada
    /// Lovelace's booking on lab-h100, Fri 27 Nov 09:00–12:00").
    #[serde(default)]
    pub booking: Option<AuditBooking>,
    /// The API token the change was made with, by its name ("" when it has
    /// none or was since removed); `None`: no token (the portal, Berth).
    #[serde(default)]
    pub token: Option<String>,
    /// The client that made it, as it named itself (an assistant's MCP
    /// `clientInfo`: "claude-code 1.2.0"); `None` when it did not.
    #[serde(default)]
    pub client: Option<String>,
}

/// How a change was made, as people read it: "via claude-code 1.2.0 with
/// the API token “laptop”"; `None` for a change made in the portal itself.
pub fn via_phrase(token: Option<&str>, client: Option<&str>) -> Option<String> {
    let token = token.map(|name| match name.is_empty() {
        true => "an API token".to_string(),
        false => format!("the API token “{name}”"),
    });
    match (client.filter(|c| !c.is_empty()), token) {
        (Some(client), Some(token)) => Some(format!("via {client} with {token}")),
        (Some(client), None) => Some(format!("via {client}")),
        (None, Some(token)) => Some(format!("with {token}")),
        (None, None) => None,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditBooking {
    pub owner: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub extension: bool,
}

/// Filters of `GET /api/v1/audit` and the Audit page; all optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditFilter {
    /// The actor's email.
    #[serde(default)]
    pub user: Option<String>,
    /// A tenant slug.
    #[serde(default)]
    pub tenant: Option<String>,
    /// A pool name.
    #[serde(default)]
    pub pool: Option<String>,
    /// An action, or its prefix before a dot (`booking` matches `booking.approved`).
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    #[serde(default)]
    pub to: Option<DateTime<Utc>>,
    /// 1-based.
    #[serde(default)]
    pub page: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    pub page: u32,
    /// Whether a next page exists.
    pub more: bool,
}
