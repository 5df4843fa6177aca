//! One booking as a card: its state and window with a countdown, what it
//! says of the workspace and its steps, and (on its page, or unfolded on a
//! phone) sharing and the actions (`card_actions`).

use super::card_actions::CardActions;
use super::{countdown_text, Actions};
use crate::model::{BookingCard, BookingState, SessionStep, StepState};
use crate::pages::confirm::Asked;
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use uuid::Uuid;

#[component]
pub(super) fn Card(
    card: BookingCard,
    now: ReadSignal<DateTime<Utc>>,
    actions: Actions,
    simulated: bool,
    me: String,
    /// The confirmation the page was asked for, shown open.
    asked: Option<Asked>,
) -> impl IntoView {
    let b = card.booking.clone();
    let state = b.state;
    let rendered = now.get_untracked();
    let live = state.holds_capacity() && b.start <= rendered && rendered < b.end;
    let (start, end) = (b.start, b.end);
    let countdown = move || countdown_text(state, (start, end), now.get());
    let id = b.id;
    // An admin opening someone else's booking acts on it as an admin.
    let held_by = (!b.mine).then(|| {
        let owner = b.user_name.clone().unwrap_or_default();
        let email = b.user_email.clone().unwrap_or_default();
        let tenant = b.tenant.clone().unwrap_or_default();
        view! {
            <p class="held-by">{format!("Booked by {owner} <{email}>, tenant {tenant}. You see it as an admin: \
                what you do here is done as an admin, under your name in the audit log.")}</p>
        }
    });
    let session = card.session.clone().filter(|_| live);
    let workspace_url = session.as_ref().and_then(|s| s.workspace_url.clone());
    let steps = session.map(|s| view! { <Steps steps=s.steps/> });
    let open = (state == BookingState::Active && live)
        .then_some(workspace_url)
        .flatten()
        .map(|url| view! { <OpenWorkspace id url simulated/> });
    view! {
        <article class="booking-card" id=format!("booking-{id}") data-booking=id.to_string() data-start=b.start.to_rfc3339()>
            <header>
                <span class=format!("badge state-{}", state.as_str())>{state.as_str()}</span>
                <strong class="when">{card.when.clone()}</strong>
                <span class="muted countdown">{countdown}</span>
            </header>
            // The kind as the calendar names it ("MIG 1g.24gb"); the
            // resource name (nvidia.com/mig-1g.24gb) on hover.
            <p>{card.pool_name.clone()} " · " <span class="card-kind" title=b.kind.clone()>{crate::model::short_kind(&b.kind)}</span>
                " × " {b.quantity} " · " {b.mode.as_str()}</p>
            {b.image.clone().map(|image| view! { <p class="muted booking-image">"Workspace image " <code>{image}</code></p> })}
            {b.note.clone().filter(|n| !n.trim().is_empty()).map(|note| view! { <p class="booking-note user-text">"Note: " {note}</p> })}
            {held_by}
            {(!card.approvers.is_empty()).then(|| view! {
                <p class="pending-note">"Pending: waiting for approval by " {card.approvers.join(", ")} " (admin)."</p>
            })}
            {card.failure.clone().map(|reason| view! { <p class="failure">{reason}</p> })}
            {card.extension.clone().map(|text| view! { <p class="extension-request">{text}</p> })}
            {card.decision.clone().map(|text| view! { <p class="decision">{text}</p> })}
            {card.booked_via.clone().map(|text| view! { <p class="booked-via muted">{text}</p> })}
            {card.idle.clone().map(|text| view! { <p class="idle-warning warning" role="status">{text}</p> })}
            {card.access_note.clone().map(|text| view! { <p class="access-note warning">{text}</p> })}
            {card.maintenance.clone().map(|text| view! { <p class="maintenance-note warning" role="note">{text}</p> })}
            {card.cluster_down.clone().map(|text| view! { <p class="cluster-note warning" role="note">{text}</p> })}
            {card.series_rule.clone().map(|rule| view! { <p class="series">"Repeats " {rule} "."</p> })}
            <p class="workspace muted">{workspace_text(state, live, simulated)}</p>
            {open}
            // In the list on a phone, this opens the booking's page, where
            // what follows (its steps, sharing and actions) is shown instead.
            <a class="card-open" href=format!("/bookings/{id}")>"Details and actions ›"</a>
            <div class="card-more">
            {card.continues_into.clone().map(|text| view! { <p class="continues-into">{text}</p> })}
            {card.persistence.clone().map(|text| view! { <p class="persistence">{text}</p> })}
            {steps}
            {card.batch_queue.clone().filter(|_| live).map(|queue| view! {
                <p class="batch-queue">"Batch Jobs run on what you booked: label them "
                    <code>{format!("kueue.x-k8s.io/queue-name: {queue}")}</code>
                    ". Kueue admits them while they fit your booking; those beyond it wait for room."</p>
            })}
            <crate::pages::sharing::Sharing booking=b.clone() me actions=actions.share/>
            <p><a class="manifests-link" href=format!("/bookings/{id}/manifests")>"What the worker applies"</a></p>
            <CardActions card live actions asked/>
            </div>
        </article>
    }
}

/// What the card says of the booking's workspace, by its state and whether
/// its window is open now.
fn workspace_text(state: BookingState, live: bool, simulated: bool) -> &'static str {
    match (state, live) {
        (BookingState::Pending, _) => "Once approved, Berth prepares an isolated workspace when the window starts; its link appears here.",
        (BookingState::Active, true) if simulated => "Simulated cluster — no workspace is running. The worker created this session's namespace and objects in its in-memory API server (see what it applies).",
        (BookingState::Active, true) => "Your isolated workspace is ready.",
        (_, true) => "The provisioning worker prepares your isolated workspace for this window:",
        (BookingState::Approved, false) if simulated => "When the window starts, the worker creates its namespace and objects on the simulated cluster: no workspace will run.",
        (BookingState::Approved, false) => "When the window starts, Berth prepares an isolated namespace with your workspace; its link appears here.",
        (BookingState::Failed, _) => "The workspace could not be set up; its namespace has been removed.",
        (BookingState::Rejected, _) => "Rejected: no workspace is prepared for this window.",
        // Only what has not started is canceled (what runs is ended).
        (BookingState::Canceled, _) => "Canceled before its window started: no workspace was prepared.",
        _ => "The workspace of this booking has been torn down.",
    }
}

/// How far the worker got with the session, a step a line.
#[component]
fn Steps(steps: Vec<SessionStep>) -> impl IntoView {
    view! {
        <ol class="steps">
            {steps.into_iter().map(|step| {
                let mark = match step.state {
                    StepState::Done => "✓",
                    StepState::Working => "…",
                    StepState::Failed => "✗",
                    StepState::Pending => "·",
                };
                view! {
                    <li class=format!("step step-{}", step.state.as_str())>
                        <span class="mark" aria-hidden="true">{mark}</span>
                        <span class="name">{step.step}</span>
                        <span class="muted">{step.state.as_str()}</span>
                        {(!step.detail.is_empty()).then(|| view! { <span class="detail">" — " {step.detail}</span> })}
                    </li>
                }
            }).collect_view()}
        </ol>
    }
}

/// The link to a running workspace (on the simulated cluster, where it
/// would be).
#[component]
fn OpenWorkspace(id: Uuid, url: String, simulated: bool) -> impl IntoView {
    if simulated {
        view! {
            <p class="muted">"It would be at " <code>{url}</code> "."</p>
            <p><a class="button secondary open-workspace" href=format!("/bookings/{id}/open") rel="external">"Open workspace (simulated)"</a></p>
        }
        .into_any()
    } else {
        view! { <p><a class="button open-workspace" href=format!("/bookings/{id}/open") rel="external" target="_blank">"Open workspace"</a></p> }.into_any()
    }
}
