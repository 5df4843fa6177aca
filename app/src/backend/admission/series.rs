//! Recurring bookings. A series' occurrences are decided by the one
//! admission path (`admit_locked`) in one transaction under the kind's
//! lock, each on its own under the normal rules, so a series racing single
//! bookings can never overbook. A preview runs exactly that and rolls back;
//! booking commits only when every chosen occurrence was admitted.

use crate::backend::admission::admit::{admit_locked, judge, Admission, Outcome};
use crate::backend::admission::create::booking_tenant;
use crate::backend::admission::locks::begin_locked;
use crate::backend::admission::request::Request;
use crate::backend::audit::{self, Subject};
use crate::backend::bookings::change::{change, settle, Change};
use crate::backend::bookings::row::{BookingRow, BOOKING_COLUMNS, BOOKING_FROM};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{
    BookedSeries, Booking, BookingState, NewSeries, Occurrence, Principal, Repeat, SeriesPlan, TenantRef, Window,
};
use crate::rules::local_time::local_window;
use crate::rules::local_time::zone;
use crate::rules::recurrence::{self, Rule};
use crate::rules::state_machine::Action;
use crate::rules::window::{check_in_range, check_not_empty};
use crate::rules::FieldError;
use chrono::{DateTime, Datelike, Duration, Utc};
use chrono_tz::Tz;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

/// A series request read against its pool: the occurrences and the rule in words.
struct Planned {
    tenant: TenantRef,
    tz: Tz,
    rule: String,
    windows: Vec<Window>,
}

async fn plan(db: &PgPool, principal: &Principal, new: &NewSeries) -> ServiceResult<Planned> {
    if new.note.chars().count() > crate::model::NOTE_LIMIT {
        return Err(FieldError::new("note", format!("must be at most {} characters", crate::model::NOTE_LIMIT)).into());
    }
    let tenant = booking_tenant(principal, new.tenant.as_deref())?.clone();
    let first = Window { start: new.start, end: new.end };
    check_in_range("start", first.start)?;
    check_in_range("end", first.end)?;
    check_not_empty(first)?;
    let pool: Option<(String, i32, DateTime<Utc>)> =
        sqlx::query_as("SELECT time_zone, horizon_days, now() FROM pool WHERE id = $1")
            .bind(new.pool_id)
            .fetch_optional(db)
            .await?;
    let Some((pool_zone, horizon_days, now)) = pool else {
        return Err(FieldError::new("pool_id", "no pool with this id that your tenant may book").into());
    };
    let tz = match &new.time_zone {
        Some(name) => {
            name.parse::<Tz>().map_err(|_| FieldError::new("time_zone", "must be an IANA zone like Europe/Berlin"))?
        }
        None => zone(&pool_zone),
    };
    let last_day = (now + Duration::days(i64::from(horizon_days))).with_timezone(&tz).date_naive();
    if new.until > last_day {
        let reason = format!("must be within the pool's horizon of {horizon_days} days: {last_day} at the latest");
        return Err(FieldError::new("until", reason).into());
    }
    let rule = match new.repeat {
        Repeat::Daily => Rule::Daily,
        Repeat::Weekly => Rule::Weekly(recurrence::weekdays(&new.weekdays, first.start.with_timezone(&tz).weekday())?),
    };
    let windows = recurrence::occurrences(first, tz, &rule, new.until)?;
    if windows.is_empty() {
        return Err(FieldError::new("until", "no occurrence falls on or before this day").into());
    }
    Ok(Planned { tenant, tz, rule: recurrence::describe(first, tz, &rule, new.until), windows })
}

/// Admits `windows` as occurrences inside a transaction holding the kind's
/// lock; the caller commits or drops it.
fn requests(principal: &Principal, new: &NewSeries, tenant: &TenantRef, windows: &[Window]) -> Vec<Request> {
    windows
        .iter()
        .map(|&window| Request {
            principal: principal.clone(),
            tenant: tenant.clone(),
            pool_id: new.pool_id,
            kind: new.kind.clone(),
            quantity: new.quantity,
            mode: new.mode,
            image: new.image.clone(),
            note: new.note.clone(),
            window,
            join_waitlist: false,
            entry: None,
            provenance: crate::backend::provenance::Provenance::current(),
        })
        .collect()
}

async fn decide(
    db: &PgPool,
    principal: &Principal,
    new: &NewSeries,
    tenant: &TenantRef,
    windows: &[Window],
) -> ServiceResult<(Transaction<'static, Postgres>, Vec<Outcome>)> {
    let requests = requests(principal, new, tenant, windows);
    let refs: Vec<&Request> = requests.iter().collect();
    let mut tx = begin_locked(db, new.pool_id, &new.kind).await?;
    let outcomes = admit_locked(&mut tx, &refs).await?;
    Ok((tx, outcomes))
}

/// An occurrence's verdict: the booking it became, or why not.
fn verdict(window: Window, outcome: Outcome) -> (Occurrence, Option<Booking>) {
    let (booked, refusal) = match outcome {
        Outcome::Decided(Ok(Admission::Booked(booking))) => (Some(booking), None),
        Outcome::Decided(Ok(Admission::Waitlisted(_))) | Outcome::Waits(_) => {
            (None, Some("it would only join the waitlist".into()))
        }
        Outcome::Decided(Err(err)) => (None, Some(err.public_message())),
        Outcome::Crowded(crowded) => {
            let full = ServiceError::CapacityExceeded {
                peak_used: crowded.peak_used,
                capacity: crowded.capacity,
                next_free: None,
            };
            (None, Some(full.public_message()))
        }
    };
    let occurrence = Occurrence { start: window.start, end: window.end, fits: booked.is_some(), refusal, held: false };
    (occurrence, booked)
}

/// Which occurrences the normal rules admit now, and why the others would
/// be refused. Read only, in one snapshot, without the kind's lock: a
/// preview of 200 occurrences never holds up anyone's booking (it once
/// held the lock while it admitted them all and rolled back).
pub async fn preview(db: &PgPool, principal: &Principal, new: &NewSeries) -> ServiceResult<SeriesPlan> {
    let planned = plan(db, principal, new).await?;
    let requests = requests(principal, new, &planned.tenant, &planned.windows);
    let refs: Vec<&Request> = requests.iter().collect();
    let mut tx = db.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?;
    let judged = judge(&mut tx, &refs).await?;
    let held = held(&mut tx, principal, new, &planned.windows).await?;
    tx.rollback().await?;
    let occurrences = (planned.windows.iter().zip(judged).zip(held))
        .map(|((w, judged), held)| Occurrence {
            start: w.start,
            end: w.end,
            fits: judged.is_ok(),
            refusal: judged.err(),
            held,
        })
        .collect();
    Ok(SeriesPlan { rule: planned.rule, time_zone: planned.tz.name().to_string(), occurrences })
}

/// For each of `windows`, whether the principal already holds a booking of
/// the series' pool and kind over it: previewing a series again shows what
/// is already theirs (the page then offers only the others; the API books
/// what it is asked, a second unit in the same window included).
async fn held(
    conn: &mut sqlx::PgConnection,
    principal: &Principal,
    new: &NewSeries,
    windows: &[Window],
) -> ServiceResult<Vec<bool>> {
    let starts: Vec<_> = windows.iter().map(|w| w.start).collect();
    let ends: Vec<_> = windows.iter().map(|w| w.end).collect();
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM booking b
                        WHERE b.user_id = $1 AND b.pool_id = $2 AND b.kind = $3 AND b.extends_id IS NULL
                          AND b.state IN ('pending', 'approved', 'active')
                          AND b.starts_at < w.ends_at AND b.ends_at > w.starts_at)
         FROM unnest($4::timestamptz[], $5::timestamptz[]) WITH ORDINALITY AS w(starts_at, ends_at, n) ORDER BY n",
    )
    .bind(principal.user_id)
    .bind(new.pool_id)
    .bind(&new.kind)
    .bind(&starts)
    .bind(&ends)
    .fetch_all(conn)
    .await?)
}

/// Books the chosen occurrences, all or none (a `409` lists those that no
/// longer fit); without a choice, every occurrence that fits now.
pub async fn book(db: &PgPool, principal: &Principal, new: &NewSeries) -> ServiceResult<BookedSeries> {
    let planned = plan(db, principal, new).await?;
    let windows: Vec<Window> = match &new.occurrences {
        None => planned.windows.clone(),
        Some(chosen) if chosen.is_empty() => {
            return Err(FieldError::new("occurrences", "choose at least one occurrence").into());
        }
        Some(chosen) => {
            let mut picked = Vec::new();
            for start in chosen {
                let window = planned.windows.iter().find(|w| w.start == *start).ok_or_else(|| {
                    FieldError::new(
                        "occurrences",
                        format!("{} is not an occurrence of this series", start.to_rfc3339()),
                    )
                })?;
                if !picked.contains(window) {
                    picked.push(*window);
                }
            }
            picked.sort_by_key(|w| w.start);
            picked
        }
    };
    let (mut tx, outcomes) = decide(db, principal, new, &planned.tenant, &windows).await?;
    let (mut bookings, mut left_out) = (Vec::new(), Vec::new());
    for (window, outcome) in windows.iter().zip(outcomes) {
        match verdict(*window, outcome) {
            (_, Some(booking)) => bookings.push(booking),
            (occurrence, None) => left_out.push(occurrence),
        }
    }
    let tz = planned.tz.name();
    if bookings.is_empty() || (new.occurrences.is_some() && !left_out.is_empty()) {
        tx.rollback().await?;
        let reasons: Vec<String> = left_out
            .iter()
            .map(|o| {
                format!(
                    "{}: {}",
                    local_window(Window { start: o.start, end: o.end }, tz),
                    o.refusal.clone().unwrap_or_default()
                )
            })
            .collect();
        let what = if bookings.is_empty() { "no occurrence fits" } else { "not every chosen occurrence fits any more" };
        return Err(ServiceError::Conflict {
            code: "series_refused",
            field: Some("occurrences".into()),
            reason: format!("{what}, so nothing was booked — {}", reasons.join("; ")),
        });
    }
    let id: Uuid =
        sqlx::query_scalar("INSERT INTO booking_series (user_id, tenant_id, rule) VALUES ($1, $2, $3) RETURNING id")
            .bind(principal.user_id)
            .bind(planned.tenant.id)
            .bind(&planned.rule)
            .fetch_one(&mut *tx)
            .await?;
    let ids: Vec<Uuid> = bookings.iter().map(|b| b.id).collect();
    sqlx::query("UPDATE booking SET series_id = $1 WHERE id = ANY($2)").bind(id).bind(&ids).execute(&mut *tx).await?;
    let target = id.to_string();
    let subject = Subject { target: &target, tenant: Some(planned.tenant.id), pool: Some(new.pool_id) };
    let detail = format!("{} occurrences: {}", ids.len(), planned.rule);
    audit::record(&mut tx, principal, "booking.series", subject, &detail).await?;
    tx.commit().await?;
    for booking in &mut bookings {
        booking.series = Some(id);
    }
    Ok(BookedSeries { id, rule: planned.rule, bookings, left_out })
}

/// Cancels the occurrences of series `id` that start at or after `from`
/// (now when left out) and have not started: the owner's and admins' to do.
/// Returns them as canceled.
pub async fn cancel_rest(
    db: &PgPool,
    principal: &Principal,
    id: Uuid,
    from: Option<DateTime<Utc>>,
) -> ServiceResult<Vec<Booking>> {
    if let Some(from) = from {
        check_in_range("from", from)?;
    }
    let mut tx = db.begin().await?;
    let series: Option<(Uuid, Uuid)> = sqlx::query_as("SELECT user_id, tenant_id FROM booking_series WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some((owner, tenant)) = series.filter(|(_, tenant)| principal.is_admin() || principal.in_tenant(*tenant))
    else {
        return Err(ServiceError::NotFound("series"));
    };
    if owner != principal.user_id && !principal.is_admin() {
        return Err(ServiceError::Forbidden("only the series' owner or an admin may cancel it"));
    }
    let sql = format!(
        "SELECT {BOOKING_COLUMNS} FROM {BOOKING_FROM}
         WHERE b.series_id = $1 AND b.state IN ('pending', 'approved') AND b.starts_at > now()
           AND b.starts_at >= coalesce($2, now())
         ORDER BY b.starts_at FOR UPDATE OF b"
    );
    let rows: Vec<BookingRow> = sqlx::query_as(&sql).bind(id).bind(from).fetch_all(&mut *tx).await?;
    let mut changes = Vec::with_capacity(rows.len());
    for row in &rows {
        let rest = Change::new(Action::Cancel, Some(principal.user_id), "the rest of its series was canceled");
        changes.push(change(&mut tx, row.id, rest).await?);
    }
    let target = id.to_string();
    let subject = Subject { target: &target, tenant: Some(tenant), pool: rows.first().map(|r| r.pool_id) };
    audit::record(&mut tx, principal, "booking.series_cancel", subject, &format!("{} occurrences", rows.len())).await?;
    tx.commit().await?;
    settle(db, changes).await;
    Ok(rows.into_iter().map(|row| BookingRow { state: BookingState::Canceled, ..row }.view_for(principal)).collect())
}
