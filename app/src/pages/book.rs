//! Booking from a form: the calendar's panel, a found slot, the fit
//! helper's and the free view's one-click lines all submit this one action.

use crate::model::BookOutcome;
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[allow(clippy::too_many_arguments)] // one argument per form field
#[server(prefix = "/rpc", endpoint = "book", output = crate::codec::JsonText)]
pub async fn book(
    pool_id: Uuid,
    kind: String,
    quantity: i32,
    start: String,
    end: String,
    tz: String,
    mode: String,
    #[server(default)] image: String,
    #[server(default)] note: String,
    #[server(default)] waitlist: bool,
    #[server(default)] idempotency_key: String,
) -> Result<BookOutcome, RpcError> {
    use crate::backend::admission::idempotency::once;
    use crate::backend::bookings::form::book;
    use crate::model::BookingForm;
    let (principal, ctx) = crate::rpc::ctx()?;
    let form = BookingForm { pool_id, kind, quantity, start, end, tz, mode, image, note, waitlist };
    // A second submit of the same form answers with the first outcome.
    let key = Some(idempotency_key.as_str());
    let outcome = once(&ctx.db, (principal.user_id, key), &form, book(&ctx.admissions, &principal, &form)).await?;
    crate::rpc::no_script::send_back_outcome(&outcome, &form);
    Ok(outcome)
}
