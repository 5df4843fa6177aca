//! The coming week across pools, as a resource timeline: a row per pool's
//! kind, time left to right from this hour on, each hour shaded by how
//! much of the kind is booked (its height the share, its colour how full),
//! with the exact figure on hover; the local days are drawn as gridlines.
//! The home page's bookings table under it lists the same bookings as text.

use crate::model::{short_kind, Clock, Overview};
use crate::rules::capacity::{peak_usage, Usage};
use chrono::{DateTime, Duration, DurationRound, Timelike, Utc};
use leptos::prelude::*;

/// Hours the timeline shows: the week from this hour.
const HOURS: i64 = 168;
// The SVG's units: the labels' column, the plot, a row and its gap.
const WIDTH: f64 = 1000.0;
const LABELS: f64 = 150.0;
const HEAD: f64 = 22.0;
const ROW: f64 = 30.0;
const GAP: f64 = 6.0;

/// One row: a pool's kind, and each hour's most units booked at once.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub pool: String,
    pub kind: String,
    pub capacity: i32,
    pub hours: Vec<i32>,
}

/// The rows of `data` from `start` (an hour) on.
pub fn rows(data: &Overview, start: DateTime<Utc>) -> Vec<Row> {
    let mut rows = Vec::new();
    for summary in &data.pools {
        for kind in &summary.kinds {
            let usages: Vec<Usage> = data
                .bookings
                .iter()
                .filter(|b| b.pool_id == summary.pool.id && b.kind == kind.kind)
                .map(|b| Usage { start: b.start, end: b.end, quantity: b.quantity })
                .collect();
            let hours = hourly(&usages, start);
            rows.push(Row { pool: summary.pool.name.clone(), kind: kind.kind.clone(), capacity: kind.capacity, hours });
        }
    }
    rows
}

/// Each hour's most units booked at once, from `start` on.
fn hourly(usages: &[Usage], start: DateTime<Utc>) -> Vec<i32> {
    (0..HOURS)
        .map(|h| {
            let from = start + Duration::hours(h);
            peak_usage(usages, crate::model::Window { start: from, end: from + Duration::hours(1) })
        })
        .collect()
}

/// How full an hour is, as its shade's class: the calendar's words.
fn fullness(used: i32, capacity: i32) -> &'static str {
    match (used, capacity) {
        (_, c) if c <= 0 => "full",
        (u, c) if u >= c => "full",
        (u, c) if u * 2 >= c => "most",
        _ => "some",
    }
}

/// A pool's name as its label's column holds it: a long one cut with an
/// ellipsis (its tooltip and the table below say it whole).
fn fitted(name: &str) -> String {
    const MOST: usize = 17;
    match name.chars().count() > MOST {
        true => format!("{}…", name.chars().take(MOST - 1).collect::<String>()),
        false => name.to_string(),
    }
}

fn x(hour: f64) -> f64 {
    LABELS + hour * (WIDTH - LABELS - 10.0) / HOURS as f64
}

#[component]
pub fn WeekTimeline(data: Overview, clock: Clock) -> impl IntoView {
    let start = data.now.duration_trunc(Duration::hours(1)).unwrap_or(data.now);
    let rows = rows(&data, start);
    if rows.is_empty() {
        return ().into_any();
    }
    let height = HEAD + rows.len() as f64 * (ROW + GAP);
    // Each local midnight inside the week: a gridline and its day's name.
    let days: Vec<(f64, String)> = (1..HOURS)
        .filter_map(|h| {
            let at = clock.local(start + Duration::hours(h));
            (at.hour() == 0).then(|| (x(h as f64), at.format("%a %d").to_string()))
        })
        .collect();
    let label = format!(
        "The week from {} across {} pool kinds: each hour shaded by how much is booked.",
        clock.when(start),
        rows.len()
    );
    let tz = clock.tz.clone();
    let hour_text = |h: i64| {
        let from = clock.local(start + Duration::hours(h));
        format!("{} {}–{}", from.format("%a %d"), from.format("%H:%M"), (from + Duration::hours(1)).format("%H:%M"))
    };
    view! {
        <figure class="chart timeline" tabindex="0" id="week-timeline">
            <svg viewBox=format!("0 0 {WIDTH} {height}") role="img" aria-label=label.clone()>
                <title>{label.clone()}</title>
                <text class="tick" x=x(0.0) y=14>"now"</text>
                {days.into_iter().map(|(at, day)| view! {
                    <line class="grid" x1=at y1=HEAD - 4.0 x2=at y2=height/>
                    <text class="tick" x=at + 3.0 y=14>{day}</text>
                }).collect_view()}
                {rows.into_iter().enumerate().map(|(i, row)| {
                    let top = HEAD + i as f64 * (ROW + GAP);
                    let name = format!("{} · {}", row.pool, short_kind(&row.kind));
                    view! {
                        <text class="tick row-pool" x=4 y=top + 12.0>{fitted(&row.pool)}<title>{row.pool.clone()}</title></text>
                        <text class="tick" x=4 y=top + 27.0>{short_kind(&row.kind)}</text>
                        <rect class="lane" x=x(0.0) y=top width=x(HOURS as f64) - x(0.0) height=ROW/>
                        {row.hours.iter().enumerate().filter(|(_, used)| **used > 0).map(|(h, used)| {
                            let share = f64::from(*used) / f64::from(row.capacity.max(1));
                            let tall = ROW * share.min(1.0);
                            view! {
                                <rect class=format!("booked {}", fullness(*used, row.capacity))
                                    x=x(h as f64) y=top + ROW - tall width=x(1.0) - x(0.0) height=tall>
                                    <title>{format!("{name}, {}: {used} of {} booked", hour_text(h as i64), row.capacity)}</title>
                                </rect>
                            }
                        }).collect_view()}
                    }
                }).collect_view()}
            </svg>
            <figcaption>
                <span class="key some">"booked"</span> " "
                <span class="key most">"half or more"</span> " "
                <span class="key full">"full"</span>
                " — the height is the share of the kind booked; hover an hour for its figure. Times in "
                {tz} "."
            </figcaption>
        </figure>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hour_holds_the_most_booked_at_once() {
        let start: DateTime<Utc> = "2026-11-30T10:00:00Z".parse().unwrap();
        let usage = |from: i64, to: i64, quantity: i32| Usage {
            start: start + Duration::minutes(from),
            end: start + Duration::minutes(to),
            quantity,
        };
        // 10:30–12:00 two units, 11:15–11:45 one more: hour 11 peaks at 3.
        let hours = hourly(&[usage(30, 120, 2), usage(75, 105, 1)], start);
        assert_eq!(&hours[..3], &[2, 3, 0]);
        assert_eq!(hours.len(), 168);
        assert_eq!((fullness(1, 4), fullness(2, 4), fullness(4, 4)), ("some", "most", "full"));
        assert_eq!(fitted("lab-h100"), "lab-h100");
        assert_eq!(fitted("approve-1795964521234"), "approve-17959645…");
    }
}
