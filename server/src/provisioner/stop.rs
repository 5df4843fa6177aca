//! The start pass's first writes: windows that have closed. A session
//! another booking of its owner's takes over (`continuation`) moves to it
//! and keeps its namespace; any other loses its namespace. Either way the
//! booking is completed, with the reason on its card.

use super::collect::delete_namespace;
use super::context::Reconciler;
use super::error::WorkerResult;
use super::manifests::owned_by;
use super::report::PassReport;
use app::backend::sessions::{continuation, transitions};
use app::rules::state_machine::Action;
use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Namespace;
use std::collections::HashMap;
use uuid::Uuid;

/// What `continuation::successors` read: each ended booking whose session
/// continues, with the booking it continues into.
pub(super) type Successors = HashMap<Uuid, (Uuid, DateTime<Utc>, DateTime<Utc>)>;

/// Completes the bookings in `ended`, continuing their session where
/// `successors` names a booking that takes it over.
pub(super) async fn ended(
    w: &Reconciler,
    ended: &[Uuid],
    successors: &Successors,
    managed: &[Namespace],
    report: &mut PassReport,
) -> WorkerResult<()> {
    for id in ended {
        let reason = match successors.get(id) {
            Some((next, _, _)) => {
                continuation::continue_into(&w.db, *id, *next).await?;
                format!("the window ended; the session continues into booking {next}")
            }
            None => {
                for ns in managed.iter().filter(|ns| owned_by(ns, Some(*id)).is_some()) {
                    delete_namespace(w, ns).await?;
                }
                "the window ended".to_string()
            }
        };
        transitions::system_transition(&w.db, *id, Action::Complete, &reason).await?;
        report.completed.push(*id);
    }
    Ok(())
}
