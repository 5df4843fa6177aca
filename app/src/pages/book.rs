//! Booking from a form: the calendar's panel, a found slot, the fit
//! helper's and the free view's one-click lines all submit this one action.

use crate::model::BookOutcome;
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// The booking form, posted by the calendar's panel and every one-click
/// form (`HiddenBooking`); the key makes a second submit answer as the first.
#[server(prefix = "/rpc", endpoint = "book", output = crate::codec::JsonText)]
pub async fn book(
    #[server(flatten)] form: crate::model::BookingForm,
    #[server(default)] idempotency_key: String,
) -> Result<BookOutcome, RpcError> {
    use crate::backend::admission::idempotency::once;
    use crate::backend::bookings::form::book;
    let (principal, ctx) = crate::rpc::ctx()?;
    // A second submit of the same form answers with the first outcome.
    let key = Some(idempotency_key.as_str());
    let outcome = once(&ctx.db, (principal.user_id, key), &form, book(&ctx.admissions, &principal, &form)).await?;
    crate::rpc::no_script::send_back_outcome(&outcome, &form);
    Ok(outcome)
}

/// A booking request as the hidden fields of a one-click form (a found
/// window, a free line, a suggestion, joining the waitlist): what `book`
/// reads, written in one place. Empty image, note and waitlist are left
/// out, as the server fn's defaults read them.
#[component]
pub fn HiddenBooking(form: crate::model::BookingForm, key: String) -> impl IntoView {
    let optional = |name: &'static str, value: String| {
        (!value.is_empty()).then(|| view! { <input type="hidden" name=name value=value/> })
    };
    view! {
        <input type="hidden" name="pool_id" value=form.pool_id.to_string()/>
        <input type="hidden" name="kind" value=form.kind/>
        <input type="hidden" name="quantity" value=form.quantity.to_string()/>
        <input type="hidden" name="start" value=form.start/>
        <input type="hidden" name="end" value=form.end/>
        <input type="hidden" name="tz" value=form.tz/>
        <input type="hidden" name="mode" value=form.mode/>
        {optional("image", form.image)}
        {optional("note", form.note)}
        {form.waitlist.then(|| view! { <input type="hidden" name="waitlist" value="true"/> })}
        <input type="hidden" name="idempotency_key" value=key/>
    }
}

/// A found window booked as it was found: interactive, no image or note.
pub fn one_click(
    pool_id: Uuid,
    kind: String,
    quantity: i32,
    window: crate::model::Window,
    tz: String,
) -> crate::model::BookingForm {
    crate::model::BookingForm {
        pool_id,
        kind,
        quantity,
        start: window.start.to_rfc3339(),
        end: window.end.to_rfc3339(),
        tz,
        mode: "interactive".into(),
        ..Default::default()
    }
}
