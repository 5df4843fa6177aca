//! One session, start or repair: decide its volumes (`homes`), converge
//! its objects (`converge`), and record what happened — the steps for the
//! booking page, `active` once ready, `failed` after repeated refusals.

use super::context::Reconciler;
use super::error::{HomeBusy, WorkerResult};
use super::manifests::{Session, Volume};
use super::progress::{Converged, Progress, Step, Steps};
use super::report::PassReport;
use super::snapshot::Snapshot;
use super::{converge, homes};
use app::backend::sessions::facts::BookingFacts;
use app::backend::sessions::session_status::{self, Stored};
use app::backend::sessions::transitions;
use app::model::{BookingState, Kept, SessionStatus, StepState};
use app::rules::state_machine::Action;
use k8s_openapi::api::core::v1::Namespace;
use std::collections::HashMap;

/// Converges one session and records what happened: the steps for the
/// booking page, `active` once ready, `failed` after repeated refusals.
/// `home` holds the volumes decided for its home and model cache, by
/// purpose, if decided. Returns the session as converged.
pub(super) async fn run(
    w: &Reconciler,
    facts: BookingFacts,
    state: BookingState,
    (before, home): (Stored, HashMap<Kept, Volume>),
    (managed, snapshot): (&[Namespace], Option<&Snapshot>),
    report: &mut PassReport,
) -> WorkerResult<Option<Session>> {
    let id = facts.booking_id;
    let mut session = Session::of(facts);
    let converged = match homes::volumes_for(w, &session, state == BookingState::Approved, home, managed).await? {
        Ok((home, cache)) => {
            (session.window.home, session.window.cache) = (home, cache);
            converge::session(w, &session, managed, snapshot).await?
        }
        Err(HomeBusy(detail)) => {
            let mut states = Steps::all(StepState::Pending);
            states.set(Step::Storage, StepState::Working);
            Converged::stopped(states, Step::Storage, detail, Progress::PreviousTerminating, 0)
        }
    };
    report.applied += converged.applied;
    let mut after = Stored {
        status: SessionStatus { namespace: session.namespace(), workspace_url: None, steps: converged.steps },
        failures: 0,
    };
    match converged.progress {
        // The booking stopped while this pass ran: the start pass collects it.
        Progress::Stopped => return Ok(None),
        Progress::Applied { ready } => {
            if ready {
                after.status.workspace_url = Some(w.cluster.workspace_url(&session));
            }
            if ready && state == BookingState::Approved {
                transitions::system_transition(&w.db, id, Action::Activate, "the workspace is ready").await?;
                report.started.push(id);
            }
        }
        Progress::PreviousTerminating => {}
        Progress::Collision(reason) => {
            transitions::system_transition(&w.db, id, Action::Fail, &reason).await?;
            report.failed.push(id);
        }
        Progress::Refused(detail) => {
            after.failures = before.failures + 1;
            report.errors.push((id, detail.clone()));
            if after.failures >= w.policy.failures_before_failed {
                let reason = format!(
                    "Berth could not set up the workspace ({} attempts): {detail}. Ask your Berth admin.",
                    after.failures
                );
                transitions::system_transition(&w.db, id, Action::Fail, &reason).await?;
                report.failed.push(id);
            }
        }
    }
    if after != before {
        session_status::save(&w.db, id, &after).await?;
    }
    Ok(Some(session))
}
