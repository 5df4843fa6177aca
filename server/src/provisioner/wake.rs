//! What a booking notification asks of the start loop: a pass now, or only
//! to wake by a time (a future window). A pure function of the payload the
//! `booking_notify` trigger sends, so most changes under booking load — new
//! bookings in the future — cost the worker no query at all.

use chrono::{DateTime, Utc};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Change {
    pub state: String,
    pub was: Option<String>,
    pub starts_at: DateTime<Utc>,
}

#[derive(Debug, PartialEq)]
pub enum Wake {
    /// Run a start pass now.
    Now,
    /// Nothing to do before this moment (the pass then finds the rest).
    By(DateTime<Utc>),
    /// Nothing to do for this change.
    Never,
}

/// A payload that cannot be read (an older trigger's bare id) asks for a
/// pass: waking too often is safe, sleeping through a change is not.
pub fn wake_for(payload: &str, now: DateTime<Utc>) -> Wake {
    let Ok(change) = serde_json::from_str::<Change>(payload) else { return Wake::Now };
    let running = |state: Option<&str>| state == Some("active");
    if running(Some(&change.state)) || running(change.was.as_deref()) {
        // A live session started, ended, was canceled or extended.
        return Wake::Now;
    }
    if change.starts_at <= now {
        // An open window: to start (approved), to expire (pending), or to
        // collect (canceled or failed before the worker got to it).
        return Wake::Now;
    }
    match change.state.as_str() {
        // Pending: the worker rejects it at its start if still unapproved.
        "approved" | "pending" => Wake::By(change.starts_at),
        // A future booking that went away: an early wake at most, harmless.
        _ => Wake::Never,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn payload(state: &str, was: Option<&str>, starts_at: DateTime<Utc>) -> String {
        serde_json::json!({"id": "7f0c", "state": state, "was": was, "starts_at": starts_at, "ends_at": starts_at + Duration::hours(1)})
            .to_string()
    }

    #[test]
    fn future_windows_only_move_the_wake_up_and_open_ones_run_a_pass() {
        let now = Utc::now();
        let later = now + Duration::hours(3);
        assert_eq!(wake_for(&payload("approved", None, later), now), Wake::By(later));
        assert_eq!(wake_for(&payload("pending", None, later), now), Wake::By(later));
        assert_eq!(wake_for(&payload("approved", Some("pending"), later), now), Wake::By(later));
        assert_eq!(wake_for(&payload("canceled", Some("approved"), later), now), Wake::Never);
        assert_eq!(wake_for(&payload("rejected", Some("pending"), later), now), Wake::Never);
        let open = now - Duration::minutes(5);
        assert_eq!(wake_for(&payload("approved", None, open), now), Wake::Now);
        assert_eq!(wake_for(&payload("canceled", Some("approved"), open), now), Wake::Now);
        assert_eq!(wake_for(&payload("pending", None, open), now), Wake::Now);
    }

    #[test]
    fn any_change_of_a_live_session_and_any_unreadable_payload_run_a_pass() {
        let now = Utc::now();
        let earlier = now - Duration::hours(1);
        assert_eq!(wake_for(&payload("active", Some("approved"), earlier), now), Wake::Now);
        assert_eq!(wake_for(&payload("completed", Some("active"), earlier), now), Wake::Now);
        assert_eq!(wake_for(&payload("canceled", Some("active"), earlier), now), Wake::Now);
        assert_eq!(wake_for(&payload("active", Some("active"), earlier), now), Wake::Now, "extended");
        assert_eq!(wake_for("2f7c1b1e-1111-4a4a-9b9b-000000000000", now), Wake::Now);
        assert_eq!(wake_for("{}", now), Wake::Now);
    }
}
