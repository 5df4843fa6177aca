//! The report's charts as SVG the server renders: readable without
//! JavaScript, each with a text alternative (its name, a tooltip per
//! point, and its figures as a table).

use super::chart::{nice_ticks, tick_text, value_axis, Scale};
use crate::model::{HeatCell, TrendPoint};
use leptos::prelude::*;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 240.0;
/// The plot's edges: values left, dates below, the axis' name above.
const LEFT: f64 = 48.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 208.0;

fn step_of(n: usize) -> f64 {
    if n > 1 {
        (RIGHT - LEFT) / (n - 1) as f64
    } else {
        0.0
    }
}

fn points(trend: &[TrendPoint], value: fn(&TrendPoint) -> f64, scale: Scale) -> String {
    let step = step_of(trend.len());
    trend
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", LEFT + step * i as f64, scale.y(value(p))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A tick's text width in the chart's units (13-unit type: about 7.5 a character).
fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 7.5
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
    // Far enough apart that the first (drawn from its point on) leaves
    // room for the next (centred on its point).
    let widest = labels.iter().map(|l| label_width(l)).fold(0.0, f64::max);
    let apart = if step > 0.0 { ((1.5 * widest + 8.0) / step).ceil() as usize } else { 1 };
    let every = n.div_ceil(6).max(apart).max(1);
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
    let step = step_of(n);
    let labels: Vec<String> = trend.iter().map(|p| p.label.clone()).collect();
    tick_indices(&labels, step)
        .into_iter()
        .map(|i| {
            let x = LEFT + step * i as f64;
            let anchor = if i + 1 == n && n > 1 { "end" } else if i == 0 { "start" } else { "middle" };
            view! {
                <line class="grid" x1=x y1=TOP x2=x y2=BOTTOM/>
                <text x=format!("{x:.1}") y=HEIGHT - 10.0 class="tick date" text-anchor=anchor>{labels[i].clone()}</text>
            }
        })
        .collect_view()
}

/// One bucket's figures in words: its tooltip and its row's sense.
fn bucket_text(p: &TrendPoint) -> String {
    format!(
        "{}: capacity {}, booked {}, busy {} GPU-hours",
        p.label,
        tick_text(p.capacity_gpu_hours),
        tick_text(p.booked_gpu_hours),
        tick_text(p.busy_gpu_hours)
    )
}

/// A band per bucket that names its figures on hover (the SVG's tooltip).
fn hover_bands(trend: &[TrendPoint]) -> impl IntoView {
    let step = step_of(trend.len());
    let width = if step > 0.0 { step } else { RIGHT - LEFT };
    trend
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let x = (LEFT + step * i as f64 - width / 2.0).max(LEFT - width / 2.0);
            view! {
                <rect class="hover" x=format!("{x:.1}") y=TOP width=format!("{width:.1}") height=BOTTOM - TOP>
                    <title>{bucket_text(p)}</title>
                </rect>
            }
        })
        .collect_view()
}

/// Capacity, booked and busy GPU-hours per bucket, as three lines, over
/// dates, on round gridlines; each bucket's figures on hover and in a
/// table under the chart.
#[component]
pub fn TrendChart(trend: Vec<TrendPoint>, bucket: String) -> impl IntoView {
    let most = trend.iter().map(|p| p.capacity_gpu_hours.max(p.booked_gpu_hours)).fold(0.0, f64::max);
    let ticks = nice_ticks(most, 4);
    let scale = Scale { top: TOP, bottom: BOTTOM, most: ticks.last().copied().unwrap_or(1.0) };
    let sum = |f: fn(&TrendPoint) -> f64| trend.iter().map(f).sum::<f64>();
    let summary = format!(
        "GPU-hours per {bucket} over {} {bucket}s: capacity {:.1}, booked {:.1}, busy {:.1}; the highest {bucket} holds {:.1}.",
        trend.len(),
        sum(|p| p.capacity_gpu_hours),
        sum(|p| p.booked_gpu_hours),
        sum(|p| p.busy_gpu_hours),
        most
    );
    let label = summary.clone();
    let line = |class: &'static str, value: fn(&TrendPoint) -> f64| {
        view! { <polyline class=class fill="none" points=points(&trend, value, scale)/> }
    };
    let rows = trend.clone();
    view! {
        // Focusable: on a narrow screen it scrolls sideways, by keyboard too.
        <figure class="chart" tabindex="0">
            <svg id="trend-chart" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=label>
                <title>{summary}</title>
                <text class="tick axis-name" x=LEFT y=14>{format!("GPU-hours per {bucket}")}</text>
                {value_axis(&ticks, scale, (LEFT, RIGHT), (LEFT - 6.0, "end"), "")}
                <line class="axis" x1=LEFT y1=BOTTOM x2=RIGHT y2=BOTTOM/>
                {date_ticks(&trend)}
                {line("capacity", |p| p.capacity_gpu_hours)}
                {line("booked", |p| p.booked_gpu_hours)}
                {line("busy", |p| p.busy_gpu_hours)}
                {hover_bands(&trend)}
            </svg>
            <figcaption>
                <span class="key capacity">"- - capacity"</span> " "
                <span class="key booked">"— booked"</span> " "
                <span class="key busy">"— busy (measured)"</span>
                " GPU-hours per " {bucket.clone()} "; hover a " {bucket.clone()} " for its figures."
            </figcaption>
            <details class="chart-table">
                <summary>"The figures as a table"</summary>
                <super::table::TableScroll label="The trend as a table"><table class="bookings" id="trend-table">
                    <thead><tr>
                        <th scope="col">{bucket}</th>
                        <th scope="col">"Capacity (GPU-h)"</th>
                        <th scope="col">"Booked (GPU-h)"</th>
                        <th scope="col">"Busy (GPU-h)"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|p| view! {
                            <tr>
                                <th scope="row">{p.label.clone()}</th>
                                <td>{tick_text(p.capacity_gpu_hours)}</td>
                                <td>{tick_text(p.booked_gpu_hours)}</td>
                                <td>{tick_text(p.busy_gpu_hours)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table></super::table::TableScroll>
            </details>
        </figure>
    }
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// Booked share of capacity per weekday and hour of day.
#[component]
pub fn HeatMap(cells: Vec<HeatCell>, zone: String) -> impl IntoView {
    let (cell_w, cell_h, left, top) = (26.0, 20.0, 36.0, 20.0);
    let busiest = cells
        .iter()
        .filter_map(|c| c.occupancy_pct.map(|o| (o, c)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(o, c)| format!("busiest: {} {:02}:00 at {o:.0} %", DAYS[c.weekday as usize], c.hour))
        .unwrap_or_else(|| "no capacity in this period".into());
    let summary = format!("Occupancy by weekday and hour ({zone}); {busiest}.");
    let label = summary.clone();
    view! {
        // Focusable: on a narrow screen it scrolls sideways, by keyboard too.
        <figure class="chart" tabindex="0">
            <svg id="heat-map" viewBox=format!("0 0 {} {}", left + 24.0 * cell_w, top + 7.0 * cell_h) role="img" aria-label=label>
                <title>{summary}</title>
                {(0..24).step_by(3).map(|h| view! {
                    <text class="tick" x=left + f64::from(h) * cell_w y=14>{format!("{h:02}")}</text>
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
        let step = (RIGHT - LEFT) / 52.0;
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
    fn a_months_days_keep_dates_that_do_not_touch() {
        let labels: Vec<String> = (1..=30).map(|d| format!("Mon {d:02} Nov")).collect();
        let ticks = tick_indices(&labels, (RIGHT - LEFT) / 29.0);
        assert_eq!(ticks, vec![0, 6, 12, 18, 29], "the first and last, evenly between, none touching");
    }
}
