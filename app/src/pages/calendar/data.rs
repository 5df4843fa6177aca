//! The calendar's server fns: load a week or day, an agenda or a month,
//! and move a booking (booking itself: `pages::book`).

use crate::model::{CalendarData, CalendarSpan, MoveOutcome};
use crate::rpc::RpcError;
use chrono::NaiveDate;
use leptos::prelude::*;
use std::sync::Arc;
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
    let pool = pool_asked(&ctx.db, &principal, pool).await?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let (db, principal) = (&ctx.db, &principal);
    let data = remembering(pool, |pool| {
        let query = CalendarQuery { pool, date, days, tz: tz.clone() };
        async move { load(db, principal, &query).await }
    })
    .await?;
    crate::rpc::no_script::remember_pool(data.pool.id);
    Ok(data)
}

/// The calendar's data as the page holds it: one copy, shared by every
/// read of the page's resource. leptos reads a resource by cloning its
/// value, and on the server builds a Suspense's children twice a request
/// (once to find the resources they read, then for real): a week of 500
/// bookings was copied twice and its grid written twice (`cells::Written`).
/// On the wire it is the data itself; serde's own `Arc` support is a
/// feature the workspace does not turn on.
#[derive(Clone, Debug)]
pub struct Shared(pub Arc<CalendarData>);

impl serde::Serialize for Shared {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Shared {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        CalendarData::deserialize(deserializer).map(|data| Self(Arc::new(data)))
    }
}

/// Loads a view of the `asked` pool; without one, of the pool shown last
/// (else the first the viewer may book). A remembered pool the viewer can
/// no longer see is forgotten.
#[cfg(feature = "ssr")]
async fn remembering<T, F, Fut>(asked: Option<Uuid>, load: F) -> Result<T, RpcError>
where
    F: Fn(Option<Uuid>) -> Fut,
    Fut: std::future::Future<Output = crate::backend::error::ServiceResult<T>>,
{
    let remembered = asked.is_none().then(crate::rpc::no_script::last_pool).flatten();
    Ok(match load(asked.or(remembered)).await {
        Err(crate::backend::ServiceError::NotFound(_)) if remembered.is_some() => load(None).await?,
        loaded => loaded?,
    })
}

/// The pool a calendar asks for, by id or by name (any case).
#[cfg(feature = "ssr")]
async fn pool_asked(
    db: &sqlx::PgPool,
    principal: &crate::model::Principal,
    pool: Option<String>,
) -> Result<Option<Uuid>, RpcError> {
    Ok(match pool.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        None => None,
        Some(id) if id.parse::<Uuid>().is_ok() => id.parse::<Uuid>().ok(),
        Some(name) => {
            let pools = crate::backend::pools::list(db, principal).await?;
            let named = pools.into_iter().find(|p| p.name.eq_ignore_ascii_case(name));
            let unknown = || crate::rules::FieldError::new("pool", format!("no pool you may see is named “{name}”"));
            Some(named.ok_or_else(|| crate::backend::ServiceError::from(unknown()))?.id)
        }
    })
}

/// The agenda or the month of a pool (`view=agenda|month`), as the grid's
/// `load_calendar` picks and remembers its pool.
#[server(prefix = "/rpc", endpoint = "calendar_span", output = crate::codec::JsonText)]
pub async fn load_span(
    pool: Option<String>,
    date: Option<NaiveDate>,
    view: String,
    tz: String,
) -> Result<CalendarSpan, RpcError> {
    use crate::backend::calendar::span::load;
    let (principal, ctx) = crate::rpc::ctx()?;
    let kind = crate::model::SpanKind::parse(&view).ok_or_else(|| {
        crate::backend::ServiceError::from(crate::rules::FieldError::new("view", "must be agenda or month"))
    })?;
    let pool = pool_asked(&ctx.db, &principal, pool).await?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let span = remembering(pool, |pool| load(&ctx.db, &principal, pool, date, kind, &tz)).await?;
    crate::rpc::no_script::remember_pool(span.pool.id);
    Ok(span)
}

/// Moves or resizes one's booking to `start`–`end` (the calendar's drag).
#[server(prefix = "/rpc", endpoint = "bookings/move", output = crate::codec::JsonText)]
pub async fn move_booking(id: Uuid, start: String, end: String, tz: String) -> Result<MoveOutcome, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::backend::bookings::form::move_to(&ctx.db, &principal, id, (&start, &end, &tz)).await?)
}
