//! How hard the worker tries before it gives up on a booking.

use std::time::Duration;

/// Its retries, its patience and how long it keeps the audit log.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Extra attempts of a single request on 409, 429, 5xx or no answer.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub retry_delay: Duration,
    /// Passes in a row that fail on a session before its booking is `failed`.
    pub failures_before_failed: i32,
    /// A namespace still terminating after this long is reported as stuck.
    pub stuck_after: Duration,
    /// Audit events older than this many days are deleted.
    pub audit_retention_days: i32,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            retries: 3,
            retry_delay: Duration::from_millis(200),
            failures_before_failed: 5,
            // Two minutes: grace periods are capped at 30 s (policy
            // berth-session-devices) and pods are deleted at once first.
            stuck_after: Duration::from_secs(120),
            audit_retention_days: 400,
        }
    }
}
