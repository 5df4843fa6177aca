//! What a pass of the worker did, for logs, metrics and tests.

use uuid::Uuid;

/// What a pass did, for logs and tests.
#[derive(Debug, Default, PartialEq)]
pub struct PassReport {
    /// Objects written (server-side apply).
    pub applied: usize,
    pub started: Vec<Uuid>,
    pub completed: Vec<Uuid>,
    pub collected: Vec<String>,
    pub failed: Vec<Uuid>,
    /// Sessions this pass could not converge (retried in the next pass), with why.
    pub errors: Vec<(Uuid, String)>,
    /// Pending bookings rejected because their window opened unapproved.
    pub expired: u64,
    /// Waitlist entries whose window started before they fit.
    pub waitlist_expired: u64,
    /// Waitlist entries admitted by this pass (room the worker freed, or a
    /// promotion that failed where the room was freed).
    pub waitlist_admitted: usize,
}

impl PassReport {
    /// Adds what converging sessions did elsewhere (another pass, one start).
    pub(super) fn absorb(&mut self, other: PassReport) {
        self.applied += other.applied;
        self.started.extend(other.started);
        self.failed.extend(other.failed);
        self.errors.extend(other.errors);
    }
}
