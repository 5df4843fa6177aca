//! The report's charts as SVG the server renders: readable without
//! JavaScript, each with a text alternative.

use crate::model::{HeatCell, TrendPoint};
use leptos::prelude::*;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 180.0;
const PAD: f64 = 28.0;

fn points(trend: &[TrendPoint], value: fn(&TrendPoint) -> f64, top: f64) -> String {
    let step = if trend.len() > 1 { (WIDTH - 2.0 * PAD) / (trend.len() - 1) as f64 } else { 0.0 };
    trend
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let y = HEIGHT - PAD - value(p) / top * (HEIGHT - 2.0 * PAD);
            format!("{:.1},{:.1}", PAD + step * i as f64, y)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A tick's text width in the chart's units (10-unit type: about 6 a character).
fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 6.0
}

/// Which points get a date under the x-axis: at most six, evenly spaced,
/// the first and the last among them, and none whose text would run into
/// the next one's (the last label ends at its point, the first starts at
/// its point, the others are centred).
fn tick_indices(labels: &[String], step: f64) -> Vec<usize> {
    let n = labels.len();
    if n == 0 {
        return Vec::new();
    }
    let every = n.div_ceil(6).max(1);
    let extent = |i: usize| {
        let (x, w) = (step * i as f64, label_width(&labels[i]));
        match i {
            0 => (x, x + w),
            i if i + 1 == n => (x - w, x),
            _ => (x - w / 2.0, x + w / 2.0),
        }
    };
    let mut chosen: Vec<usize> = (0..n).step_by(every).collect();
    if chosen.last() != Some(&(n - 1)) {
        chosen.push(n - 1);
    }
    // Keep the last; drop any earlier one that would touch the one kept after it.
    let mut kept: Vec<usize> = Vec::new();
    for i in chosen.into_iter().rev() {
        if kept.last().is_none_or(|&next| extent(i).1 + 8.0 <= extent(next).0) {
            kept.push(i);
        }
    }
    kept.reverse();
    kept
}

fn date_ticks(trend: &[TrendPoint]) -> impl IntoView {
    let n = trend.len();
    let step = if n > 1 { (WIDTH - 2.0 * PAD) / (n - 1) as f64 } else { 0.0 };
    let labels: Vec<String> = trend.iter().map(|p| p.label.clone()).collect();
    tick_indices(&labels, step)
        .into_iter()
        .map(|i| {
            let x = PAD + step * i as f64;
            let anchor = if i + 1 == n && n > 1 { "end" } else if i == 0 { "start" } else { "middle" };
            view! { <text x=format!("{x:.1}") y=HEIGHT - 8.0 class="tick date" text-anchor=anchor>{labels[i].clone()}</text> }
        })
        .collect_view()
}

/// Capacity, booked and busy GPU-hours per bucket, as three lines, over dates.
#[component]
pub fn TrendChart(trend: Vec<TrendPoint>, bucket: String) -> impl IntoView {
    let top = trend.iter().map(|p| p.capacity_gpu_hours.max(p.booked_gpu_hours)).fold(0.0, f64::max).max(1.0);
    let sum = |f: fn(&TrendPoint) -> f64| trend.iter().map(f).sum::<f64>();
    let summary = format!(
        "GPU-hours per {bucket} over {} {bucket}s: capacity {:.1}, booked {:.1}, busy {:.1}; the highest {bucket} holds {:.1}.",
        trend.len(),
        sum(|p| p.capacity_gpu_hours),
        sum(|p| p.booked_gpu_hours),
        sum(|p| p.busy_gpu_hours),
        top
    );
    let label = summary.clone();
    let line = |class: &'static str, value: fn(&TrendPoint) -> f64| {
        view! { <polyline class=class fill="none" points=points(&trend, value, top)/> }
    };
    view! {
        <figure class="chart">
            <svg id="trend-chart" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=label>
                <title>{summary}</title>
                <line class="axis" x1=PAD y1=HEIGHT - PAD x2=WIDTH - PAD y2=HEIGHT - PAD/>
                <text x=2 y=PAD + 4.0 class="tick">{format!("{top:.0}")}</text>
                <text x=2 y=HEIGHT - PAD class="tick">"0"</text>
                {date_ticks(&trend)}
                {line("capacity", |p| p.capacity_gpu_hours)}
                {line("booked", |p| p.booked_gpu_hours)}
                {line("busy", |p| p.busy_gpu_hours)}
            </svg>
            <figcaption>
                <span class="key capacity">"— capacity"</span> " "
                <span class="key booked">"— booked"</span> " "
                <span class="key busy">"— busy (measured)"</span>
                " GPU-hours per " {bucket}
            </figcaption>
        </figure>
    }
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// Booked share of capacity per weekday and hour of day.
#[component]
pub fn HeatMap(cells: Vec<HeatCell>, zone: String) -> impl IntoView {
    let (cell_w, cell_h, left, top) = (26.0, 20.0, 36.0, 16.0);
    let busiest = cells
        .iter()
        .filter_map(|c| c.occupancy_pct.map(|o| (o, c)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(o, c)| format!("busiest: {} {:02}:00 at {o:.0} %", DAYS[c.weekday as usize], c.hour))
        .unwrap_or_else(|| "no capacity in this period".into());
    let summary = format!("Occupancy by weekday and hour ({zone}); {busiest}.");
    let label = summary.clone();
    view! {
        <figure class="chart">
            <svg id="heat-map" viewBox=format!("0 0 {} {}", left + 24.0 * cell_w, top + 7.0 * cell_h) role="img" aria-label=label>
                <title>{summary}</title>
                {(0..24).step_by(3).map(|h| view! {
                    <text class="tick" x=left + f64::from(h) * cell_w y=11>{format!("{h:02}")}</text>
                }).collect_view()}
                {DAYS.iter().enumerate().map(|(d, name)| view! {
                    <text class="tick" x=0 y=top + (d as f64 + 0.7) * cell_h>{*name}</text>
                }).collect_view()}
                {cells.into_iter().map(|c| {
                    let label = match c.occupancy_pct {
                        Some(o) => format!("{} {:02}:00 — {o:.0} % booked", DAYS[c.weekday as usize], c.hour),
                        None => format!("{} {:02}:00 — not in the period", DAYS[c.weekday as usize], c.hour),
                    };
                    let opacity = c.occupancy_pct.map_or(0.0, |o| (o / 100.0).clamp(0.05, 1.0));
                    view! {
                        <rect class=if c.occupancy_pct.is_some() { "heat" } else { "heat none" }
                            x=left + f64::from(c.hour) * cell_w y=top + f64::from(c.weekday) * cell_h
                            width=cell_w - 2.0 height=cell_h - 2.0 fill-opacity=format!("{opacity:.2}")>
                            <title>{label}</title>
                        </rect>
                    }
                }).collect_view()}
            </svg>
            <figcaption>"Share of capacity booked, by weekday and hour (" {zone} "); darker is fuller."</figcaption>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_years_weekly_dates_do_not_run_into_each_other() {
        // 53 weeks: every 9th point, and the last, Mon 28 Dec, 7 steps after
        // Mon 09 Nov; both would overlap, so the earlier one goes.
        let labels: Vec<String> =
            (0..53).map(|i| if i == 0 { "Thu 01 Jan".into() } else { format!("Mon {:02} Xxx", i % 28) }).collect();
        let step = (WIDTH - 2.0 * PAD) / 52.0;
        let ticks = tick_indices(&labels, step);
        assert_eq!(ticks.first(), Some(&0));
        assert_eq!(ticks.last(), Some(&52));
        assert!(!ticks.contains(&45), "{ticks:?}");
        for pair in ticks.windows(2) {
            let gap = step * (pair[1] - pair[0]) as f64;
            assert!(gap >= 60.0, "{ticks:?}");
        }
        assert!(ticks.len() >= 5, "{ticks:?}");
    }

    #[test]
    fn a_months_days_keep_six_dates() {
        let labels: Vec<String> = (1..=30).map(|d| format!("Mon {d:02} Nov")).collect();
        let ticks = tick_indices(&labels, (WIDTH - 2.0 * PAD) / 29.0);
        assert_eq!(ticks, vec![0, 5, 10, 15, 20, 29]);
    }
}
