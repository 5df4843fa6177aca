//! The calendar's server fns: load a week or day, and book from the form.

use crate::model::{BookOutcome, CalendarData};
use crate::rpc::RpcError;
use chrono::NaiveDate;
use leptos::prelude::*;
use uuid::Uuid;

/// `pool`: its id, or its name as a person types it in `?pool=` (an
/// unknown one is said, never swapped for another pool).
#[server(prefix = "/rpc", endpoint = "calendar", output = crate::codec::JsonText)]
pub async fn load_calendar(
    pool: Option<String>,
    date: Option<NaiveDate>,
    days: u32,
    tz: String,
) -> Result<CalendarData, RpcError> {
    use crate::backend::calendar::{load, CalendarQuery};
    let (principal, ctx) = crate::rpc::ctx()?;
    let pool = match pool.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        None => None,
        Some(id) if id.parse::<Uuid>().is_ok() => id.parse::<Uuid>().ok(),
        Some(name) => {
            let pools = crate::backend::pools::list(&ctx.db, &principal).await?;
            let named = pools.into_iter().find(|p| p.name.eq_ignore_ascii_case(name));
            let unknown = || crate::rules::FieldError::new("pool", format!("no pool you may see is named “{name}”"));
            Some(named.ok_or_else(|| crate::backend::ServiceError::from(unknown()))?.id)
        }
    };
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    // Without a pool, the one shown last (else the first the viewer may book);
    // a remembered pool the viewer can no longer see is forgotten.
    let remembered = pool.is_none().then(crate::rpc::no_script::last_pool).flatten();
    let query = CalendarQuery { pool: pool.or(remembered), date, days, tz };
    let data = match load(&ctx.db, &principal, &query).await {
        Err(crate::backend::ServiceError::NotFound(_)) if remembered.is_some() => {
            load(&ctx.db, &principal, &CalendarQuery { pool: None, ..query }).await?
        }
        loaded => loaded?,
    };
    crate::rpc::no_script::remember_pool(data.pool.id);
    Ok(data)
}

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
    use crate::backend::bookings::{form::book, once::once};
    use crate::model::BookingForm;
    let (principal, ctx) = crate::rpc::ctx()?;
    let form = BookingForm { pool_id, kind, quantity, start, end, tz, mode, image, note, waitlist };
    // A second submit of the same form answers with the first outcome.
    let key = Some(idempotency_key.as_str());
    let outcome = once(&ctx.db, principal.user_id, key, &form, book(&ctx.admissions, &principal, &form)).await?;
    crate::rpc::no_script::send_back_outcome(&outcome, &form);
    Ok(outcome)
}
