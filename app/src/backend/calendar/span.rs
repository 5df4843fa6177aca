//! The agenda and the month (`model::CalendarSpan`): one pool's bookings
//! as the viewer may see them, over two weeks or a month of the viewer's
//! zone. One list of bookings per view; the rest is arithmetic.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::{bookings, db_now, pools};
use crate::model::{
    short_kind, AgendaDay, AgendaEntry, Booking, BookingFilter, CalendarSpan, MonthDay, Pool, PoolChoice, Principal,
    SpanKind, Window,
};
use crate::rules::local_time::{local_midnight, zone};
use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, Utc};
use chrono_tz::Tz;
use sqlx::PgPool;
use uuid::Uuid;

/// The agenda's reach: two weeks, as a phone scrolls it.
const AGENDA_DAYS: i64 = 14;

pub async fn load(
    db: &PgPool,
    principal: &Principal,
    pool: Option<Uuid>,
    date: Option<NaiveDate>,
    kind: SpanKind,
    tz: &str,
) -> ServiceResult<CalendarSpan> {
    let tz = zone(tz);
    let now = db_now(db).await?;
    let visible = pools::list(db, principal).await?;
    let pool = match pool {
        Some(id) => visible.iter().find(|p| p.id == id).cloned().ok_or(ServiceError::NotFound("pool"))?,
        None => visible.first().cloned().ok_or(ServiceError::NotFound("pool"))?,
    };
    let today = now.with_timezone(&tz).date_naive();
    let date = date.unwrap_or(today);
    crate::rules::window::check_date_in_range("date", date)?;
    let (first, last) = match kind {
        SpanKind::Agenda => (date, date + Duration::days(AGENDA_DAYS - 1)),
        SpanKind::Month => month_grid(date),
    };
    let range = Window { start: local_midnight(tz, first), end: local_midnight(tz, last + Duration::days(1)) };
    // The agenda that holds now lists what is still to come (what ended
    // this morning is not on the phone's list of what is next); one paged
    // back into the past lists what was there, as the month does.
    let from = if kind == SpanKind::Agenda && now < range.end { range.start.max(now) } else { range.start };
    let filter = BookingFilter { pool_id: Some(pool.id), from: Some(from), to: Some(range.end), mine: false };
    // As the grid does: what holds capacity and what held it (past days).
    let mut shown: Vec<Booking> = bookings::list(db, principal, &filter)
        .await?
        .into_iter()
        .filter(|b| b.state.holds_capacity() || b.state == crate::model::BookingState::Completed)
        .collect();
    // Ties in a stable order (who, what), not the order rows came in: the
    // same data reads the same way on every load.
    fn key(b: &Booking) -> (DateTime<Utc>, DateTime<Utc>, bool, Option<&str>, &str, i32, Uuid) {
        (b.start, b.end, !b.mine, b.user_name.as_deref(), b.kind.as_str(), b.quantity, b.id)
    }
    shown.sort_by(|a, b| key(a).cmp(&key(b)));
    let days: Vec<NaiveDate> = first.iter_days().take_while(|d| *d <= last).collect();
    let (title, prev, next, agenda, weeks) = match kind {
        SpanKind::Agenda => (
            format!("{} – {}", crate::model::day_text(first), crate::model::day_text(last)),
            date - Duration::days(AGENDA_DAYS),
            date + Duration::days(AGENDA_DAYS),
            agenda(&shown, &days, tz),
            Vec::new(),
        ),
        SpanKind::Month => {
            let month = date.with_day(1).unwrap_or(date);
            (
                month.format("%B %Y").to_string(),
                month - Months::new(1),
                month + Months::new(1),
                Vec::new(),
                month_weeks(&pool, &shown, &days, (month, today), tz),
            )
        }
    };
    Ok(CalendarSpan {
        kind,
        pools: visible.iter().map(|p| PoolChoice { id: p.id, name: p.name.clone() }).collect(),
        pool: PoolChoice { id: pool.id, name: pool.name.clone() },
        tz: tz.name().to_string(),
        title,
        date,
        prev,
        next,
        today,
        agenda,
        weeks,
    })
}

/// The Monday on or before the month's first day to the Sunday on or
/// after its last.
fn month_grid(date: NaiveDate) -> (NaiveDate, NaiveDate) {
    let first = date.with_day(1).unwrap_or(date);
    let last = first + Months::new(1) - Duration::days(1);
    let monday = first - Duration::days(i64::from(first.weekday().num_days_from_monday()));
    let sunday = last + Duration::days(i64::from(6 - last.weekday().num_days_from_monday()));
    (monday, sunday)
}

fn local(at: DateTime<Utc>, tz: Tz) -> chrono::NaiveDateTime {
    at.with_timezone(&tz).naive_local()
}

/// Each day that holds bookings, with them in order of their start; a
/// booking begun before the first day is listed on it.
fn agenda(shown: &[Booking], days: &[NaiveDate], tz: Tz) -> Vec<AgendaDay> {
    days.iter()
        .filter_map(|&date| {
            let first = days.first() == Some(&date);
            let entries: Vec<AgendaEntry> = shown
                .iter()
                .filter(|b| {
                    let starts = local(b.start, tz).date();
                    starts == date || (first && starts < date)
                })
                .map(|b| entry(b, tz))
                .collect();
            (!entries.is_empty()).then(|| AgendaDay { date, label: crate::model::day_text(date), entries })
        })
        .collect()
}

fn entry(b: &Booking, tz: Tz) -> AgendaEntry {
    let (start, end) = (b.start.with_timezone(&tz), b.end.with_timezone(&tz));
    let when = if start.date_naive() == end.date_naive() {
        format!("{}–{}", start.format("%H:%M"), end.format("%H:%M"))
    } else {
        crate::model::window_text(start.fixed_offset(), end.fixed_offset())
    };
    let title = match (b.mine, b.note.as_deref().map(str::trim), &b.user_name) {
        (true, Some(note), _) if !note.is_empty() => note.to_string(),
        (true, _, _) => "Your booking".to_string(),
        (false, _, Some(name)) => format!("Booked by {name}"),
        (false, _, None) => "Booked".to_string(),
    };
    AgendaEntry {
        booking: b.mine.then_some(b.id),
        when,
        what: format!("{} ×{}", short_kind(&b.kind), b.quantity),
        title,
        state: b.state.as_str().to_string(),
        mine: b.mine,
    }
}

/// The month's days in weeks: each day's share booked (GPU-hours over the
/// pool's GPU-hours that day, every kind weighed by its share of a GPU)
/// and the viewer's own bookings that start or run that day.
fn month_weeks(
    pool: &Pool,
    shown: &[Booking],
    days: &[NaiveDate],
    (month, today): (NaiveDate, NaiveDate),
    tz: Tz,
) -> Vec<Vec<MonthDay>> {
    let share = |kind: &str| {
        pool.kinds.iter().find(|k| k.kind == kind).map_or(0.0, |k| 1.0 / f64::from(k.slices_per_gpu.max(1)))
    };
    let gpus: f64 = pool.kinds.iter().map(|k| f64::from(k.capacity) * share(&k.kind)).sum();
    let cells: Vec<MonthDay> = days
        .iter()
        .map(|&date| {
            let (start, end) = (local_midnight(tz, date), local_midnight(tz, date + Duration::days(1)));
            let hours = (end - start).num_seconds() as f64 / 3600.0;
            let on_day: Vec<&Booking> = shown.iter().filter(|b| b.start < end && start < b.end).collect();
            let booked: f64 = on_day
                .iter()
                .map(|b| {
                    let overlap = (b.end.min(end) - b.start.max(start)).num_seconds() as f64 / 3600.0;
                    f64::from(b.quantity) * share(&b.kind) * overlap
                })
                .sum();
            let pct = if gpus > 0.0 { (booked / (gpus * hours) * 100.0).round().clamp(0.0, 100.0) } else { 0.0 };
            MonthDay {
                date,
                day: date.day(),
                in_month: date.month() == month.month() && date.year() == month.year(),
                today: date == today,
                past: date < today,
                booked_pct: pct as u8,
                mine: on_day
                    .iter()
                    .filter(|b| b.mine)
                    .map(|b| {
                        let at = if b.start < start {
                            "…".to_string()
                        } else {
                            local(b.start, tz).format("%H:%M").to_string()
                        };
                        match b.note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
                            Some(note) => format!("{at} {note}"),
                            None => format!("{at} {} ×{}", short_kind(&b.kind), b.quantity),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    cells.chunks(7).map(<[MonthDay]>::to_vec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_grid_runs_from_monday_to_sunday() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).unwrap();
        // November 2026 starts on a Sunday and ends on a Monday.
        assert_eq!(month_grid(d(2026, 11, 17)), (d(2026, 10, 26), d(2026, 12, 6)));
        // February 2027 starts on a Monday and ends on a Sunday: four weeks.
        assert_eq!(month_grid(d(2027, 2, 1)), (d(2027, 2, 1), d(2027, 2, 28)));
    }
}
