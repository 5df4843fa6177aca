//! Sharing a booking, on its card in My bookings: who shares it, a form for
//! the owner to add a teammate by address, and a button to remove one (for
//! a co-owner: to leave).

use super::field::Field;
use crate::model::{ActionNotice, Booking};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "bookings/co-owners/add", output = crate::codec::JsonText)]
pub async fn add_co_owner(id: Uuid, email: String) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let added = crate::backend::bookings::co_owners::add(&ctx.db, &principal, id, &email).await;
    // A refused address is said beside the card's field; a script-less post
    // comes back to that card's form.
    let at = added.as_ref().err().and_then(|err| err.field_error()).map(|_| share_form(id));
    crate::rpc::act_at(at.as_deref(), added, |_| {
        format!("Shared with {}: they can open, extend and end it.", email.trim())
    })
}

#[server(prefix = "/rpc", endpoint = "bookings/co-owners/remove", output = crate::codec::JsonText)]
pub async fn remove_co_owner(id: Uuid, email: String) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let removed = crate::backend::bookings::co_owners::remove(&ctx.db, &principal, id, &email).await;
    crate::rpc::act(removed, |_| format!("No longer shared with {}.", email.trim()))
}

/// The id of a booking's share form, where its refusal is said.
fn share_form(id: Uuid) -> String {
    format!("share-{id}")
}

#[derive(Clone, Copy)]
pub struct SharingActions {
    pub add: ServerAction<AddCoOwner>,
    pub remove: ServerAction<RemoveCoOwner>,
    /// The booking whose share form was sent last: only its card says
    /// the answer's refusal.
    sent: RwSignal<Option<Uuid>>,
}

impl SharingActions {
    pub fn new() -> Self {
        let add = ServerAction::new();
        Self { add, remove: ServerAction::new(), sent: super::field::last_sent(add, |asked: AddCoOwner| asked.id) }
    }
}

/// The card's sharing block: nothing for a booking no one shares that can
/// no longer be shared.
#[component]
pub fn Sharing(booking: Booking, me: String, actions: SharingActions) -> impl IntoView {
    let id = booking.id;
    let owner = !booking.co_owned;
    let open = booking.state.holds_capacity() && booking.extends.is_none();
    if booking.co_owners.is_empty() && !(owner && open) {
        return ().into_any();
    }
    let by = booking.user_name.clone().unwrap_or_default();
    let people = booking.co_owners.clone();
    let form = share_form(id);
    let from_query = super::notice::query_notice();
    let refused = Signal::derive({
        let form = form.clone();
        move || {
            let answer = actions.add.value().get().filter(|_| actions.sent.get() == Some(id));
            let query = from_query.get().filter(|n| n.at.as_deref() == Some(form.as_str()));
            super::field::refused_field(answer, query)
        }
    });
    view! {
        <div class="sharing">
            {(!owner).then(|| view! { <p class="shared-by">"Shared with you by " {by}"."</p> })}
            {(!people.is_empty()).then(|| view! {
                <p class="muted">"Shared with:"</p>
                <ul class="co-owners">
                    {people.into_iter().map(|person| {
                        let removable = owner || person.email == me;
                        let label = if owner { "Remove" } else { "Leave" };
                        let email = person.email.clone();
                        let shown = person.email.clone();
                        view! {
                            <li class="co-owner" data-email=person.email>
                                {person.name} " " <span class="muted">"(" {shown} ")"</span>
                                {removable.then(|| view! {
                                    <ActionForm action=actions.remove attr:class="inline">
                                        <input type="hidden" name="id" value=id.to_string()/>
                                        <input type="hidden" name="email" value=email.clone()/>
                                        <button class="button secondary small" type="submit"
                                            aria-label=format!("{label} {email}")>{label}</button>
                                    </ActionForm>
                                })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            })}
            {(owner && open).then(|| view! {
                <ActionForm action=actions.add attr:class="fields-row share-form" attr:id=share_form(id)>
                    <input type="hidden" name="id" value=id.to_string()/>
                    <Field form=form name="email" label="Teammate's email" refused let:aria>
                        <input type="email" name="email" required placeholder="teammate@example.org" autocomplete="off"
                            aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                    </Field>
                    <button class="button secondary" type="submit">"Share"</button>
                </ActionForm>
            })}
        </div>
    }
    .into_any()
}
