//! The waitlist on My bookings: each entry with its place in line, and a
//! button to leave the list while it waits.

use crate::model::{ActionNotice, WaitlistLine, WaitlistState};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "waitlist/leave", output = crate::codec::JsonText)]
pub async fn leave_waitlist(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let left = crate::backend::bookings::waitlist::leave(&ctx.db, &principal, id).await;
    crate::rpc::act(left, |_| "You left the waitlist.".into())
}

/// What an entry's state means to its requester.
fn status(line: &WaitlistLine) -> String {
    let entry = &line.entry;
    match entry.state {
        WaitlistState::Waiting => format!("Waiting · position {}", entry.position.unwrap_or_default()),
        WaitlistState::Admitted => "Admitted: it is booked (see Upcoming)".into(),
        WaitlistState::Expired => "Expired: the window started before there was room".into(),
        WaitlistState::Left => "You left the list".into(),
        WaitlistState::Closed => format!("Closed: {}", entry.reason),
    }
}

#[component]
pub fn WaitlistSection(lines: Vec<WaitlistLine>, leave: ServerAction<LeaveWaitlist>) -> impl IntoView {
    if lines.is_empty() {
        return ().into_any();
    }
    view! {
        <section class="card-section" id="waitlist">
            <h2>"Waitlist"</h2>
            <p class="muted">"Booked for you automatically, first come first served, as soon as the window has room."</p>
            <ul class="waitlist">
                {lines.into_iter().map(|line| {
                    let waiting = line.entry.state == WaitlistState::Waiting;
                    let state = line.entry.state.as_str();
                    let id = line.entry.id;
                    let start = line.entry.window.start.to_rfc3339();
                    view! {
                        <li class=format!("waitlist-entry state-{state}") data-start=start>
                            <strong>{line.entry.pool_name.clone()}</strong>
                            " · " {crate::model::short_kind(&line.entry.kind)} " × " {line.entry.quantity}
                            " · " {line.when.clone()}
                            <span class="waitlist-status">" — " {status(&line)}</span>
                            {waiting.then(|| view! {
                                <ActionForm action=leave attr:class="inline">
                                    <input type="hidden" name="id" value=id.to_string()/>
                                    <button class="button secondary" type="submit">"Leave the waitlist"</button>
                                </ActionForm>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
    .into_any()
}
