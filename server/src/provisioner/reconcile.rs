//! One pass of the worker, as the list of its steps. Desired state comes
//! from PostgreSQL; the cluster is only read and written through
//! `kube::Client`. Modelled on kube-rs controller-rs: the passes here only
//! say what happens in which order; each step is a free function in a file
//! of its own taking the worker (`context::Reconciler`: database, client,
//! cluster, policy) and what the pass read.
//!
//! The pass reads the windows due on its cluster (`due::due`) once and
//! hands them to its steps:
//!
//! - the *start pass* (`start`): expire unapproved bookings, collect the
//!   Kueue queues of sessions that no longer run (`queues`), complete the
//!   windows that have closed (`stop`), collect the namespaces whose booking
//!   no longer runs (`collect`), start the sessions whose window has opened
//!   (`start`, each through `session` → `homes`, `converge`), the waitlist,
//!   and the room held ahead (`ahead`);
//! - the *repair pass* (`repair`): read one snapshot of Berth's objects, repair
//!   every active session against it, keep and grow their homes (`homes`),
//!   the pools' backfill queues (`backfill`) and the image cache
//!   (`image_cache`).
//!
//! `run` calls the two halves on their own triggers; `pass` runs both. The
//! sweep (`sweep`) runs every few minutes besides. Idempotent: a pass over
//! a converged cluster reads but writes nothing (neither to the cluster
//! nor to the database), and a pass interrupted after any step is finished
//! by the next.

pub use super::context::{ClusterRef, Reconciler};
pub use super::policy::Policy;
pub use super::report::PassReport;

use super::error::WorkerResult;
use super::sweep::SweepReport;
use super::{ahead, backfill, collect, homes, image_cache, queues, repair, start, stop, sweep};
use app::backend::sessions::due::{self, Due};
use app::backend::sessions::{continuation, facts, transitions};
use app::model::BookingState;
use k8s_openapi::api::core::v1::Namespace;
use uuid::Uuid;

impl Reconciler {
    /// A whole pass: the start pass, then the repair pass, over one reading
    /// of the windows due.
    pub async fn pass(&self) -> WorkerResult<PassReport> {
        let mut report = PassReport { expired: expire(self).await?, ..PassReport::default() };
        let mut due = due::due(&self.db, self.cluster_id()).await?;
        start_steps(self, &due, &mut report).await?;
        // The repair half sees what the start half did, as a fresh read
        // would: the sessions it started are active, the ones it failed
        // are gone (windows it completed were never the repair's).
        after_start(&mut due, &report);
        let mut repaired = PassReport::default();
        repair_steps(self, &due, &mut repaired).await?;
        report.absorb(repaired);
        Ok(report)
    }

    /// What a booking change needs at once: stop closed windows, collect
    /// namespaces whose booking no longer runs, start sessions not yet
    /// active (each object read by name). Its cost does not grow with the
    /// number of running sessions, so a new window never waits for them.
    pub async fn start_pass(&self) -> WorkerResult<PassReport> {
        let mut report = PassReport { expired: expire(self).await?, ..PassReport::default() };
        let due = due::due(&self.db, self.cluster_id()).await?;
        start_steps(self, &due, &mut report).await?;
        Ok(report)
    }

    /// Drift repair: every active session against one snapshot of Berth's
    /// objects (13 requests however many sessions run), and the image cache.
    pub async fn repair_pass(&self) -> WorkerResult<PassReport> {
        let mut report = PassReport::default();
        let due = due::due(&self.db, self.cluster_id()).await?;
        repair_steps(self, &due, &mut report).await?;
        Ok(report)
    }
}

/// Pending bookings whose window opened unapproved are rejected before the
/// pass reads what is due.
async fn expire(w: &Reconciler) -> WorkerResult<u64> {
    Ok(transitions::reject_unapproved(&w.db, w.cluster_id()).await?)
}

/// The start pass's steps, in order.
async fn start_steps(w: &Reconciler, due: &Due, report: &mut PassReport) -> WorkerResult<()> {
    let managed: Vec<Namespace> = w.managed_namespaces().await?;
    // Windows that have closed whose owner's next booking takes the
    // session over (see `continuation`), and sessions already taken over.
    let successors = continuation::successors(&w.db, &due.ended).await?;
    // Read once, for the queues and the namespaces alike. The stops below
    // change nothing it holds: a session they continue is of a window in
    // `due.ended`, which it holds already, and a booking they complete had
    // ended, so no session continued into it; reading it again would only
    // see what others wrote meanwhile, which the next pass sees.
    let keep = collect::keep(w, due).await?;
    // Kueue's queues of sessions that no longer run go before their namespaces.
    let running = queues::running(due, &keep, successors.keys());
    report.collected.extend(queues::collect(w, &running).await?);
    // Stop: windows that have closed, unless the session continues.
    stop::ended(w, &due.ended, &successors, &managed, report).await?;
    // Collect: managed namespaces whose booking no longer runs (canceled,
    // ended early, failed, or already completed) and whose session no
    // booking has taken over.
    report.collected.extend(collect::namespaces(w, &managed, &keep).await?);
    start::sessions(w, &due.in_state(BookingState::Approved), &managed, report).await?;
    if w.site_duties {
        (report.waitlist_expired, report.waitlist_admitted) = app::backend::waitlist::sweep(&w.db).await?;
    }
    // After the starts: a session that runs now no longer needs its room.
    let (written, removed) = ahead::hold_room(w).await?;
    report.applied += written;
    report.collected.extend(removed);
    Ok(())
}

/// The repair pass's steps, in order.
async fn repair_steps(w: &Reconciler, due: &Due, report: &mut PassReport) -> WorkerResult<()> {
    let active = facts::facts_in_order(&w.db, &due.in_state(BookingState::Active)).await?;
    let (managed, snapshot) = repair::read(w, &active).await?;
    let sessions = repair::sessions(w, active, (&managed, &snapshot), report).await?;
    repair::homes(w, &sessions, &snapshot, report).await;
    if w.cluster.kueue {
        backfill::keep(w, &snapshot, report).await?;
    }
    image_cache::keep(w, report).await
}

/// The windows due as the start half left them: what it started is active,
/// what it failed no longer runs.
fn after_start(due: &mut Due, report: &PassReport) {
    due.running.retain(|(id, _)| !report.failed.contains(id));
    for (id, state) in &mut due.running {
        if report.started.contains(id) {
            *state = BookingState::Active;
        }
    }
    due.ended.clear();
}

/// The rest of the worker's public face: what `run` and the tests call
/// besides the passes, each a step of its own file.
impl Reconciler {
    /// The sweep (see `sweep`).
    pub async fn sweep(&self) -> WorkerResult<SweepReport> {
        sweep::run(self).await
    }

    /// Managed namespaces stuck terminating, with their booking (see `sweep::stuck`).
    pub fn stuck(&self, managed: &[Namespace]) -> Vec<(String, Uuid)> {
        sweep::stuck(self, managed)
    }

    /// Tells admins of stuck namespaces; returns the names (see `sweep::report_stuck`).
    pub async fn report_stuck(&self) -> WorkerResult<Vec<String>> {
        sweep::report_stuck(self).await
    }

    /// Records the cluster's priority and runtime classes (see `sweep::read_classes`).
    pub async fn read_classes(&self) -> WorkerResult<()> {
        sweep::read_classes(self).await
    }

    /// Lets homes past their retention go (see `homes::let_go`).
    pub async fn let_homes_go(&self) -> WorkerResult<Vec<String>> {
        homes::let_go(self).await
    }

    /// The storage class homes and caches are kept in ('' for the cluster's default).
    pub fn home_class(&self) -> String {
        homes::home_class(self)
    }

    /// Deletes the image cache an earlier configuration left (see `image_cache::remove_disabled`).
    pub async fn remove_disabled_image_cache(&self) -> Result<bool, kube::Error> {
        image_cache::remove_disabled(self).await
    }
}
