//! A card's actions: cancel (the booking, or the rest of its series), end
//! now and extend, each destructive one asked first (`Confirm`, which works
//! without JavaScript).

use super::Actions;
use crate::model::{BookingCard, BookingState};
use crate::pages::confirm::{Asked, Confirm};
use leptos::prelude::*;

#[component]
pub(super) fn CardActions(card: BookingCard, live: bool, actions: Actions, asked: Option<Asked>) -> impl IntoView {
    let b = card.booking.clone();
    let id = b.id;
    let what = format!("{} × {} on {}", b.quantity, crate::model::short_kind(&b.kind), card.pool_name);
    let owner = b.user_name.clone().unwrap_or_default();
    let whose = if b.mine { "your booking".to_string() } else { format!("{owner}'s booking") };
    // Only the owner (or an admin) changes the booking; co-owners share its session.
    let changeable = !b.co_owned;
    let cancelable = matches!(b.state, BookingState::Pending | BookingState::Approved) && !live && changeable;
    view! {
        <div class="card-actions">
            {cancelable.then(|| view! {
                <Confirm booking=id asked=Asked::Cancel label="Cancel booking" open=asked == Some(Asked::Cancel)
                    question=format!("Cancel {whose} of {what}, {}? The units are given back to the pool.", card.when)>
                    <ActionForm action=actions.cancel attr:class="inline">
                        <input type="hidden" name="id" value=id.to_string()/>
                        <button class="button danger" type="submit">"Yes, cancel booking"</button>
                    </ActionForm>
                </Confirm>
            })}
            {(cancelable && card.series_rule.is_some()).then(|| view! {
                <Confirm booking=id asked=Asked::CancelSeries label="Cancel this and later occurrences"
                    open=asked == Some(Asked::CancelSeries)
                    question=format!("Cancel this occurrence ({}) and every later one of the series (repeats {})?",
                        card.when, card.series_rule.clone().unwrap_or_default())>
                    <ActionForm action=actions.cancel_series attr:class="inline">
                        <input type="hidden" name="id" value=b.series.map(|s| s.to_string()).unwrap_or_default()/>
                        <input type="hidden" name="from" value=b.start.to_rfc3339()/>
                        <button class="button danger" type="submit">"Yes, cancel them"</button>
                    </ActionForm>
                </Confirm>
            })}
            {(live && changeable).then(|| view! {
                <Confirm booking=id asked=Asked::End label="End now" open=asked == Some(Asked::End)
                    question=format!("End {} of {what} now? {}",
                        if b.mine { "your session".to_string() } else { format!("{owner}'s session") },
                        card.home_note.clone().unwrap_or_else(|| "Everything in its namespace is deleted now.".into()))>
                    <ActionForm action=actions.end attr:class="inline">
                        <input type="hidden" name="id" value=id.to_string()/>
                        <button class="button danger" type="submit">"Yes, end now"</button>
                    </ActionForm>
                </Confirm>
            })}
            {card.extend_by.clone().filter(|_| changeable).map(|by| view! {
                <ActionForm action=actions.extend attr:class="inline">
                    <input type="hidden" name="id" value=id.to_string()/>
                    <input type="hidden" name="end" value=by.end.to_rfc3339()/>
                    <button class="button secondary extend-by" type="submit"
                        aria-label=format!("Extend by {}", by.label.trim_start_matches('+'))>{by.label.clone()}</button>
                </ActionForm>
            })}
            {(changeable && !card.extend_to.is_empty()).then(|| view! {
                <ActionForm action=actions.extend attr:class="inline">
                    <input type="hidden" name="id" value=id.to_string()/>
                    <label>"Extend to "
                        <select name="end" class="extend-to">
                            {card.extend_to.iter().map(|o| view! { <option value=o.end.to_rfc3339()>{o.label.clone()}</option> }).collect_view()}
                        </select>
                    </label>
                    <button class="button secondary" type="submit">"Extend"</button>
                </ActionForm>
            })}
        </div>
    }
}
