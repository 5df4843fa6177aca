//! "Find a slot": the earliest windows in a pool that fit a kind, quantity
//! and duration between two instants (`planning::find_windows`). The REST
//! API (`GET /api/v1/pools/{id}/slots`) answers from `slots`, the page from
//! `page`, which adds its defaults and reads local times in the viewer's zone.

use crate::backend::calendar::planning::{find_windows, SlotRequest};
use crate::backend::calendar::LOCAL_INPUT;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{FindPage, FindQuery, FoundSlots, Pool, Principal, Suggestion};
use crate::rules::local_time::{local_window, parse_local, zone};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The windows that fit, in a pool the principal may book (else 404).
/// `tz` is the zone the answer's `when` texts are written in.
pub async fn slots(
    db: &PgPool,
    principal: &Principal,
    pool_id: Uuid,
    ask: &SlotRequest<'_>,
    tz: &str,
) -> ServiceResult<FoundSlots> {
    let pool = crate::backend::pools::get(db, principal, pool_id).await?;
    let now = crate::backend::db_now(db).await?;
    windows_in(db, &pool, ask, tz, now).await
}

/// The instants a script left out: from now (the database's), for a week.
pub async fn default_span(
    db: &PgPool,
    earliest: Option<DateTime<Utc>>,
    latest_end: Option<DateTime<Utc>>,
) -> ServiceResult<(DateTime<Utc>, DateTime<Utc>)> {
    let earliest = match earliest {
        Some(at) => at,
        None => crate::backend::db_now(db).await?,
    };
    Ok((earliest, latest_end.unwrap_or(earliest + chrono::Duration::days(7))))
}

async fn windows_in(
    db: &PgPool,
    pool: &Pool,
    ask: &SlotRequest<'_>,
    tz: &str,
    now: DateTime<Utc>,
) -> ServiceResult<FoundSlots> {
    let windows = find_windows(db, pool, ask, now).await?;
    Ok(FoundSlots {
        pool_id: pool.id,
        pool_name: pool.name.clone(),
        kind: ask.kind.to_string(),
        quantity: ask.quantity,
        tz: zone(tz).name().to_string(),
        windows: windows.into_iter().map(|window| Suggestion { window, when: local_window(window, tz) }).collect(),
    })
}

/// The page: the pools to choose from, the form filled with defaults where
/// the query had none, and — once a kind was asked for — the answer. A
/// refusal the person can fix within range is shown beside the form;
/// out-of-range input is refused outright (422 naming the field).
pub async fn page(db: &PgPool, principal: &Principal, query: FindQuery) -> ServiceResult<FindPage> {
    let FindQuery { pool, kind, quantity, duration_minutes, earliest, latest, tz } = query;
    let local = zone(&tz);
    let pools = crate::backend::pools::list(db, principal).await?;
    let chosen = pool.and_then(|id| pools.iter().find(|p| p.id == id)).or(pools.first()).cloned();
    let Some(chosen) = chosen else { return Err(ServiceError::NotFound("pool")) };
    let now = crate::backend::db_now(db).await?;
    let asked = kind.is_some();
    let kind = kind.unwrap_or_else(|| chosen.kinds.first().map(|k| k.kind.clone()).unwrap_or_default());
    let quantity = quantity.unwrap_or(1);
    let duration_minutes = duration_minutes.unwrap_or(60);
    let earliest = earliest.unwrap_or_else(|| now.with_timezone(&local).format(LOCAL_INPUT).to_string());
    let latest = latest
        .unwrap_or_else(|| (now + chrono::Duration::days(7)).with_timezone(&local).format(LOCAL_INPUT).to_string());
    let found = if asked {
        // Out of range outright (the form's own limits), not a refusal to show.
        let ask = SlotRequest {
            kind: &kind,
            quantity,
            duration: crate::rules::window::duration_minutes("duration_minutes", duration_minutes)?,
            earliest: parse_local("earliest", &earliest, &tz)?,
            latest_end: parse_local("latest", &latest, &tz)?,
        };
        match windows_in(db, &chosen, &ask, &tz, now).await {
            Ok(found) => Some(Ok(found)),
            Err(err) if err.can_be_acted_on() => Some(Err(err.public_message())),
            Err(err) => return Err(err),
        }
    } else {
        None
    };
    Ok(FindPage {
        pools,
        pool: chosen,
        tz: local.name().to_string(),
        kind,
        quantity,
        duration_minutes,
        earliest,
        latest,
        found,
        form_key: Uuid::new_v4().to_string(),
    })
}
