//! The approval queue as admins read it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    pub id: Uuid,
    /// Set for an extension request: the booking it would lengthen.
    pub extends: Option<Uuid>,
    pub user_name: String,
    pub user_email: String,
    pub tenant: String,
    pub pool: String,
    pub kind: String,
    pub quantity: i32,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub requested_at: DateTime<Utc>,
    pub capacity: i32,
    /// The kind's busiest moment in the window, without and with this request.
    pub peak_without: i32,
    pub peak_with: i32,
    pub note: String,
}

/// What happened to one booking of a batch decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub id: Uuid,
    pub ok: bool,
    pub message: String,
}

/// How the approvals page names a booking it shows: its id and the window
/// shown (`<id>@<start>/<end>`, Unix seconds), so a decision binds to what
/// the admin saw, not to whatever the booking became since.
pub fn shown_token(id: Uuid, start: DateTime<Utc>, end: DateTime<Utc>) -> String {
    format!("{id}@{}/{}", start.timestamp(), end.timestamp())
}

/// The booking and window a token of `shown_token` names; `None` if it is not one.
pub fn parse_shown_token(token: &str) -> Option<(Uuid, crate::model::Window)> {
    let (id, window) = token.trim().split_once('@')?;
    let (start, end) = window.split_once('/')?;
    let at = |text: &str| DateTime::from_timestamp(text.parse().ok()?, 0);
    Some((id.parse().ok()?, crate::model::Window { start: at(start)?, end: at(end)? }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_token_reads_back_and_nothing_else_does() {
        let (id, start) = (Uuid::new_v4(), DateTime::from_timestamp(1_796_000_400, 0).unwrap());
        let end = start + chrono::Duration::hours(3);
        let token = shown_token(id, start, end);
        assert_eq!(parse_shown_token(&token), Some((id, crate::model::Window { start, end })));
        for bad in [id.to_string(), format!("{id}@"), format!("{id}@1/x"), "x@1/2".into(), format!("{id}@1")] {
            assert_eq!(parse_shown_token(&bad), None, "{bad}");
        }
    }
}
