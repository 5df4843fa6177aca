//! Starting the sessions whose window has opened (bookings `approved`),
//! a few at a time, each object read by name: a start's cost does not grow
//! with the number of running sessions, so a new window never waits for
//! them.

use super::context::Reconciler;
use super::error::WorkerResult;
use super::report::PassReport;
use super::{guarded_domain, session};
use app::backend::sessions::{facts, homes, session_status};
use app::model::BookingState;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use uuid::Uuid;

/// Sessions a start pass converges at once.
const STARTS_AT_ONCE: usize = 8;

/// Converges the sessions of `ids` (bookings `approved` whose window is
/// open), activating each whose workspace is ready.
pub(super) async fn sessions(
    w: &Reconciler,
    ids: &[Uuid],
    managed: &[Namespace],
    report: &mut PassReport,
) -> WorkerResult<()> {
    if !ids.is_empty() {
        guarded_domain::check(w).await?;
    }
    let starting = facts::facts_in_order(&w.db, ids).await?;
    let mut stored = session_status::load(&w.db, ids).await?;
    let mut homes = homes::decided(&w.db, ids).await?;
    // A few sessions at a time: each start mostly waits on the API server,
    // so fifty windows opening together wait for the slowest of a few, not
    // for the sum of all.
    let starts = starting.into_iter().map(|facts| {
        let before = stored.remove(&facts.booking_id).unwrap_or_default();
        let home = homes.remove(&facts.booking_id).unwrap_or_default();
        async move {
            let mut one = PassReport::default();
            let outcome =
                session::run(w, facts, BookingState::Approved, (before, home), (managed, None), &mut one).await;
            (one, outcome)
        }
    });
    let started: Vec<_> = futures::stream::iter(starts).buffered(STARTS_AT_ONCE).collect().await;
    for (one, outcome) in started {
        report.absorb(one);
        outcome?;
    }
    Ok(())
}
