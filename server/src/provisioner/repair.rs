//! Drift repair: every active session converged against one snapshot of
//! Berth's objects (13 requests however many sessions run) instead of a
//! read per object, then their homes kept and grown.

use super::context::Reconciler;
use super::error::WorkerResult;
use super::manifests::{self, Session};
use super::report::PassReport;
use super::snapshot::Snapshot;
use super::{guarded_domain, homes, session};
use app::backend::sessions::facts::BookingFacts;
use app::backend::sessions::session_status;
use app::model::BookingState;
use k8s_openapi::api::core::v1::Namespace;
use uuid::Uuid;

/// What the repair converges against: Berth's namespaces and one snapshot
/// of the objects in the `active` sessions' namespaces (Kueue's too with
/// `--kueue`). Without active sessions, only Kueue's: the backfill queues
/// stay while their pools lend, sessions or not.
pub(super) async fn read(w: &Reconciler, active: &[BookingFacts]) -> WorkerResult<(Vec<Namespace>, Snapshot)> {
    let (retries, delay) = (w.policy.retries, w.policy.retry_delay);
    let (mut managed, mut snapshot) = (Vec::new(), Snapshot::default());
    if !active.is_empty() {
        // Repair rewrites each session's host too (under a domain an
        // admin may just have changed).
        guarded_domain::check(w).await?;
        managed = w.managed_namespaces().await?;
        let namespaces = active.iter().map(|facts| manifests::namespace_name(&facts.tenant, facts.session_id()));
        snapshot = Snapshot::read(&w.client, &namespaces.collect(), retries, delay).await?;
    }
    if w.cluster.kueue {
        snapshot.read_kueue(&w.client, retries, delay).await?;
    }
    Ok((managed, snapshot))
}

/// Converges each active session against `snapshot`, one after another;
/// returns the sessions as converged (not those that stopped meanwhile).
pub(super) async fn sessions(
    w: &Reconciler,
    active: Vec<BookingFacts>,
    (managed, snapshot): (&[Namespace], &Snapshot),
    report: &mut PassReport,
) -> WorkerResult<Vec<Session>> {
    if active.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = active.iter().map(|facts| facts.booking_id).collect();
    let mut stored = session_status::load(&w.db, &ids).await?;
    let mut homes = app::backend::sessions::homes::decided(&w.db, &ids).await?;
    let mut sessions = Vec::new();
    for facts in active {
        let decided = homes.remove(&facts.booking_id).unwrap_or_default();
        let before = (stored.remove(&facts.booking_id).unwrap_or_default(), decided);
        let session = session::run(w, facts, BookingState::Active, before, (managed, Some(snapshot)), report).await?;
        sessions.extend(session);
    }
    Ok(sessions)
}

/// The converged sessions' homes: kept and grown as their claims allow. A
/// refusal is reported and does not stop the pass.
pub(super) async fn homes(w: &Reconciler, sessions: &[Session], snapshot: &Snapshot, report: &mut PassReport) {
    // A first session's home, once its claim is bound, stays for the next.
    if let Err(err) = homes::keep_new(w, sessions, snapshot).await {
        report.errors.push((Uuid::nil(), format!("keeping homes: {err}")));
    }
    // A kept one the tenant now sizes larger grows, where its class allows.
    if let Err(err) = homes::grow_kept(w, sessions, snapshot).await {
        report.errors.push((Uuid::nil(), format!("growing homes: {err}")));
    }
}
