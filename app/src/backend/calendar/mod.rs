//! The calendar's data: one pool's week (or day) in the viewer's time zone,
//! cut into the pool's slots, with free units per kind and slot, and the
//! bookings the viewer may see.

mod blocks;
pub mod feed;
pub mod find;
pub mod free_then;
pub mod overview;
pub mod planning;
pub mod span;
mod used;

use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::{bookings, db_now, pools};
use crate::model::{
    short_kind, Booking, BookingFilter, CalendarData, Cell, Day, KindLane, PoolChoice, PoolKind, Principal, Slot,
    Window,
};
use crate::rules::capacity::{align_up, free_steps, Step, Usage};
use crate::rules::local_time::{local_midnight, zone};
use crate::rules::window::{earliest_start, granularity, horizon_end};
use chrono::{Duration, NaiveDate};
use sqlx::PgPool;
use uuid::Uuid;

/// How a `datetime-local` input writes a time.
pub const LOCAL_INPUT: &str = "%Y-%m-%dT%H:%M";

/// What the calendar is asked to show.
#[derive(Clone, Debug, Default)]
pub struct CalendarQuery {
    pub pool: Option<Uuid>,
    /// The first day shown (of seven, or the one day); today when absent.
    pub date: Option<NaiveDate>,
    /// 1 for the day view, 7 for the week view.
    pub days: u32,
    /// IANA time zone; UTC when unknown.
    pub tz: String,
}

/// The smallest free count among the steps that overlap `window`; `steps`
/// are sorted and cover it, and `cursor` walks forward across calls.
fn min_free(steps: &[Step], cursor: &mut usize, window: Window) -> i32 {
    while *cursor < steps.len() && steps[*cursor].end <= window.start {
        *cursor += 1;
    }
    steps[*cursor..].iter().take_while(|s| s.start < window.end).map(|s| s.free).min().unwrap_or(0)
}

pub async fn load(db: &PgPool, principal: &Principal, query: &CalendarQuery) -> ServiceResult<CalendarData> {
    let tz = zone(&query.tz);
    // The reads run one after another, each on one connection: run at once,
    // a render held three, and 32 renders at once waited past the pool's
    // deadline (503s; docs/benchmarks.md, `make bench-calendar`).
    let now = db_now(db).await?;
    let visible = pools::list(db, principal).await?;
    let pool = match query.pool {
        Some(id) => visible.iter().find(|p| p.id == id).cloned().ok_or(ServiceError::NotFound("pool"))?,
        None => visible.first().cloned().ok_or(ServiceError::NotFound("pool"))?,
    };
    let days = if query.days == 1 { 1 } else { 7 };
    let today = now.with_timezone(&tz).date_naive();
    let asked = query.date.unwrap_or(today);
    crate::rules::window::check_date_in_range("date", asked)?;
    // A rolling week from the asked day: on a Sunday, "this week" is mostly
    // past, and booking looks ahead.
    let first = asked;
    let range = Window { start: local_midnight(tz, first), end: local_midnight(tz, first + Duration::days(days)) };

    let filter = BookingFilter { pool_id: Some(pool.id), from: Some(range.start), to: Some(range.end), mine: false };
    // What holds capacity, and what held it: a past booking stays on the
    // calendar as it was used, under its used-time bar.
    let bookings: Vec<Booking> = bookings::list(db, principal, &filter)
        .await?
        .into_iter()
        .filter(|b| b.state.holds_capacity() || b.state == crate::model::BookingState::Completed)
        .collect();

    let rules = pool.rules;
    let step = granularity(&rules);
    let (bookable_from, bookable_until) = (earliest_start(&rules, now), horizon_end(&rules, now));
    let lanes: Vec<Vec<Step>> = pool
        .kinds
        .iter()
        .map(|k| {
            let usages: Vec<Usage> = bookings
                .iter()
                .filter(|b| b.kind == k.kind)
                .map(|b| Usage { start: b.start, end: b.end, quantity: b.quantity })
                .collect();
            free_steps(&usages, k.capacity, range)
        })
        .collect();
    let mut cursors = vec![0usize; lanes.len()];
    let mut free: Vec<Vec<Vec<i32>>> = Vec::new(); // [day][slot][kind]
    let day_list: Vec<Day> = (0..days)
        .map(|offset| {
            let date = first + Duration::days(offset);
            let (day_start, day_end) = (local_midnight(tz, date), local_midnight(tz, date + Duration::days(1)));
            let mut slots = Vec::new();
            let mut day_free = Vec::new();
            let mut at = align_up(day_start, step);
            while at < day_end {
                let window = Window { start: at, end: at + step };
                day_free
                    .push(lanes.iter().zip(cursors.iter_mut()).map(|(steps, c)| min_free(steps, c, window)).collect());
                slots.push(Slot {
                    start: window.start,
                    label: window.start.with_timezone(&tz).format("%H:%M").to_string(),
                    bookable: window.start >= bookable_from && window.end <= bookable_until,
                });
                at += step;
            }
            free.push(day_free);
            Day { date, label: crate::model::day_text(date), slots }
        })
        .collect();
    let used = used::bars(db, &bookings, now).await?;
    let movable = bookings
        .iter()
        // Only the owner moves a booking (co-owners share its session).
        .filter(|b| b.mine && !b.co_owned && b.start > now && b.extends.is_none())
        .filter(|b| matches!(b.state, crate::model::BookingState::Pending | crate::model::BookingState::Approved))
        .filter_map(|b| {
            let kind = pool.kinds.iter().position(|k| k.kind == b.kind)?;
            Some(crate::model::Movable { id: b.id, kind, start: b.start, end: b.end })
        })
        .collect();
    let mut cells = cells(&day_list, &free, &pool.kinds, &bookings, step);
    let blackouts = crate::backend::pools::blackouts::list(db, principal, pool.id).await?;
    mark_blackouts(&mut cells, &day_list, &pool.kinds, &blackouts, step);
    let blocks = blocks::blocks(&day_list, &pool.kinds, &bookings, &blackouts, &used, step);
    let cluster_down = crate::backend::sessions::cluster_status::pool_note(db, pool.id, &tz).await?;
    Ok(CalendarData {
        cluster_down,
        pools: visible.iter().map(|p| PoolChoice { id: p.id, name: p.name.clone() }).collect(),
        kinds: pool
            .kinds
            .iter()
            .map(|k| KindLane {
                kind: k.kind.clone(),
                capacity: k.capacity,
                short: short_kind(&k.kind),
                fits: crate::rules::fit::kind_line_of(k.vram_gb_per_unit),
            })
            .collect(),
        pool,
        tz: tz.name().to_string(),
        now,
        days: day_list,
        cells,
        blocks,
        bookings,
        today,
        prev: first - Duration::days(days),
        next: first + Duration::days(days),
        form_key: uuid::Uuid::new_v4().to_string(),
        movable,
    })
}

/// Slots under a maintenance window have nothing free and carry its reason.
fn mark_blackouts(
    cells: &mut [Vec<Vec<Cell>>],
    days: &[Day],
    kinds: &[PoolKind],
    blackouts: &[crate::model::Blackout],
    step: Duration,
) {
    for (day, day_cells) in days.iter().zip(cells.iter_mut()) {
        for (kind, lane) in kinds.iter().zip(day_cells.iter_mut()) {
            for (slot, cell) in day.slots.iter().zip(lane.iter_mut()) {
                let covering = blackouts.iter().find(|b| {
                    b.kind.as_ref().is_none_or(|k| *k == kind.kind) && b.start < slot.start + step && slot.start < b.end
                });
                if let Some(blackout) = covering {
                    cell.free = 0;
                    cell.blackout = Some(blackout.reason.clone());
                }
            }
        }
    }
}

/// `cells[day][kind][slot]`: free units, and the viewer's own units.
fn cells(
    days: &[Day],
    free: &[Vec<Vec<i32>>],
    kinds: &[PoolKind],
    bookings: &[Booking],
    step: Duration,
) -> Vec<Vec<Vec<Cell>>> {
    days.iter()
        .zip(free)
        .map(|(day, day_free)| {
            kinds
                .iter()
                .enumerate()
                .map(|(k, kind)| {
                    let lane: Vec<&Booking> = bookings.iter().filter(|b| b.kind == kind.kind).collect();
                    day.slots
                        .iter()
                        .enumerate()
                        .map(|(i, slot)| {
                            let end = slot.start + step;
                            let mine = lane
                                .iter()
                                .filter(|b| b.mine && b.start < end && slot.start < b.end)
                                .map(|b| b.quantity)
                                .sum();
                            Cell { free: day_free[i][k], mine, ..Cell::default() }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::backend::calendar::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn min_free_is_the_lowest_step_overlapping_the_slot() {
        let t = |m| Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::minutes(m);
        let steps = [
            Step { start: t(0), end: t(20), free: 3 },
            Step { start: t(20), end: t(25), free: 1 },
            Step { start: t(25), end: t(60), free: 2 },
        ];
        let mut cursor = 0;
        assert_eq!(min_free(&steps, &mut cursor, Window { start: t(0), end: t(15) }), 3);
        assert_eq!(min_free(&steps, &mut cursor, Window { start: t(15), end: t(30) }), 1);
        assert_eq!(min_free(&steps, &mut cursor, Window { start: t(30), end: t(45) }), 2);
        assert_eq!(cursor, 2);
    }
}
