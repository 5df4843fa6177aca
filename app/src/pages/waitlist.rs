//! The waitlist on My bookings: each entry with its place in line, and a
//! button to leave the list while it waits; and the admins' page of every
//! entry (`/admin/waitlist`), where one may be taken off the list.

use crate::model::{ActionNotice, WaitlistLine, WaitlistState};
use crate::pages::said::Empty;
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "waitlist/leave", output = crate::codec::JsonText)]
pub async fn leave_waitlist(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let left = crate::backend::waitlist::leave(&ctx.db, &principal, id).await;
    crate::rpc::act(left, |entry| match entry.user_email == principal.email {
        true => "You left the waitlist.".into(),
        false => format!("Took {}'s request for {} off the waitlist.", entry.user_email, entry.pool_name),
    })
}

#[server(prefix = "/rpc", endpoint = "admin/waitlist", output = crate::codec::JsonText)]
pub async fn load_admin_waitlist(tz: String) -> Result<Vec<WaitlistLine>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::backend::waitlist::for_admins(&ctx.db, &principal, &tz).await?)
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

/// Every entry whose window has not ended, in the order they will be
/// admitted; an admin may take a waiting one off the list.
#[component]
pub fn AdminWaitlistPage() -> impl IntoView {
    let query = leptos_router::hooks::use_query_map();
    let remove = ServerAction::<LeaveWaitlist>::new();
    let from_query = super::notice::query_notice();
    let live = super::shared().live;
    let tz = move || super::viewer_zone(&query);
    let data = Resource::new(move || (remove.version().get(), live.get(), tz()), |(_, _, tz)| load_admin_waitlist(tz));
    view! {
        <section class="page-head"><h1>"Waitlist"</h1></section>
        <p class="muted">"Requests waiting for room in exactly their window, first come first served per pool and kind. "
            "Each is booked automatically as soon as it fits."</p>
        {move || super::notice::notice_view(remove.value().get(), from_query.get())}
        <Transition fallback=|| view! { <p class="loading">"Loading the waitlist…"</p> }>
            {move || data.get().map(|loaded| match loaded {
                Ok(lines) if lines.is_empty() => view! { <Empty id="waitlist-empty">"Nobody is waiting."</Empty> }.into_any(),
                Ok(lines) => view! { <AdminWaitlist lines remove/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load the waitlist: ", err),
            })}
        </Transition>
    }
}

#[component]
fn AdminWaitlist(lines: Vec<WaitlistLine>, remove: ServerAction<LeaveWaitlist>) -> impl IntoView {
    view! {
        <super::table::TableScroll label="Waitlist entries">
            <table class="list" id="admin-waitlist">
                <thead><tr>
                    <th scope="col">"Pool"</th><th scope="col">"Kind"</th><th scope="col">"Window"</th>
                    <th scope="col">"Who"</th><th scope="col">"State"</th><th scope="col">"Action"</th>
                </tr></thead>
                <tbody>
                    {lines.into_iter().map(|line| {
                        let entry = &line.entry;
                        let state = match entry.state {
                            WaitlistState::Waiting => format!("waiting · position {}", entry.position.unwrap_or_default()),
                            WaitlistState::Closed => format!("closed: {}", entry.reason),
                            other => other.as_str().to_string(),
                        };
                        let waiting = entry.state == WaitlistState::Waiting;
                        let id = entry.id;
                        view! {
                            <tr data-entry=id.to_string()>
                                <td>{entry.pool_name.clone()}</td>
                                <td>{crate::model::short_kind(&entry.kind)} " × " {entry.quantity}</td>
                                <td>{line.when.clone()}</td>
                                <td>{entry.user_email.clone()} <span class="muted">" (" {entry.tenant.clone()} ")"</span></td>
                                <td class="state">{state}</td>
                                <td>{waiting.then(|| view! {
                                    <ActionForm action=remove attr:class="inline">
                                        <input type="hidden" name="id" value=id.to_string()/>
                                        <button class="button secondary" type="submit">"Take off the list"</button>
                                    </ActionForm>
                                })}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </super::table::TableScroll>
    }
}
