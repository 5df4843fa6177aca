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
    /// Adds what was done elsewhere (the repair half of a pass, one
    /// session's start): every field, named, so a field added later cannot
    /// be left out (the repair half's deleted queues once were).
    pub(super) fn absorb(&mut self, other: PassReport) {
        let PassReport {
            applied,
            started,
            completed,
            collected,
            failed,
            errors,
            expired,
            waitlist_expired,
            waitlist_admitted,
        } = other;
        self.applied += applied;
        self.started.extend(started);
        self.completed.extend(completed);
        self.collected.extend(collected);
        self.failed.extend(failed);
        self.errors.extend(errors);
        self.expired += expired;
        self.waitlist_expired += waitlist_expired;
        self.waitlist_admitted += waitlist_admitted;
    }
}

#[cfg(test)]
mod tests {
    use super::PassReport;
    use uuid::Uuid;

    #[test]
    fn absorbing_a_report_keeps_everything_it_says() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let mut pass = PassReport { applied: 2, started: vec![a], expired: 1, ..PassReport::default() };
        pass.absorb(PassReport {
            applied: 3,
            started: vec![b],
            completed: vec![a],
            collected: vec!["LocalQueue team-a/gpu".into()],
            failed: vec![b],
            errors: vec![(b, "unreachable".into())],
            expired: 1,
            waitlist_expired: 2,
            waitlist_admitted: 1,
        });
        assert_eq!(
            pass,
            PassReport {
                applied: 5,
                started: vec![a, b],
                completed: vec![a],
                collected: vec!["LocalQueue team-a/gpu".into()],
                failed: vec![b],
                errors: vec![(b, "unreachable".into())],
                expired: 2,
                waitlist_expired: 2,
                waitlist_admitted: 1,
            }
        );
    }
}
