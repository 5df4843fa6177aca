//! A session's device chart: engine busy (%, left axis) and memory used
//! (GiB, right axis) over the chosen range, times in the reader's zone.
//! SVG the server draws, as the reports' charts are; gaps stay gaps.

use crate::model::{ChartAxis, ChartRange, DeviceChart};
use leptos::prelude::*;

const W: f32 = 480.0;
const H: f32 = 150.0;
// The plot's edges: room for the % axis left, the GiB axis right, dates below.
const LEFT: f32 = 40.0;
const RIGHT: f32 = 430.0;
const TOP: f32 = 10.0;
const BOTTOM: f32 = 118.0;

/// A round top for the memory axis: 1, 2 or 5 × 10ⁿ GiB, at least 1.
fn memory_top(most: f32) -> f32 {
    let mut top = 1.0_f32;
    while top < most {
        top = if (top * 2.0) >= most {
            top * 2.0
        } else if (top * 5.0) >= most {
            top * 5.0
        } else {
            top * 10.0
        };
    }
    top
}

#[component]
pub fn DeviceChartView(chart: DeviceChart, axis: ChartAxis, simulated: bool) -> impl IntoView {
    let span = (axis.to - axis.from).num_seconds().max(1) as f32;
    let x = |at: chrono::DateTime<chrono::Utc>| LEFT + (at - axis.from).num_seconds() as f32 / span * (RIGHT - LEFT);
    let y = |share: f32| BOTTOM - share.clamp(0.0, 1.0) * (BOTTOM - TOP);
    // Engine busy on the left, on the shared axis' gridlines.
    let percent = super::chart::Scale { top: f64::from(TOP), bottom: f64::from(BOTTOM), most: 100.0 };
    let top = memory_top(chart.points.iter().map(|p| p.memory_gib).fold(0.0, f32::max));
    // A gap longer than two buckets breaks the lines.
    let gap = (axis.range.bucket() * 2).num_seconds();
    let mut runs: Vec<Vec<&crate::model::ChartPoint>> = Vec::new();
    for p in &chart.points {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|last| (p.at - last.at).num_seconds() <= gap) => run.push(p),
            _ => runs.push(vec![p]),
        }
    }
    let line = |run: &[&crate::model::ChartPoint], value: &dyn Fn(&crate::model::ChartPoint) -> f32| {
        run.iter().map(|p| format!("{:.1},{:.1}", x(p.at), y(value(p)))).collect::<Vec<_>>().join(" ")
    };
    let latest = chart.points.last().copied();
    let now = match latest {
        Some(p) => {
            format!("engine busy {:.0} %, {:.1} GiB memory at the last measured minute", p.busy_pct, p.memory_gib)
        }
        None => "nothing measured".into(),
    };
    let name = format!(
        "{}: engine busy and memory over {}; {now}{}",
        chart.device,
        axis.range.phrase(),
        if simulated { " (simulated)" } else { "" }
    );
    let busy_lines = runs.iter().filter(|r| r.len() > 1).map(|r| line(r, &|p| p.busy_pct / 100.0)).collect::<Vec<_>>();
    let memory_lines =
        runs.iter().filter(|r| r.len() > 1).map(|r| line(r, &|p| p.memory_gib / top)).collect::<Vec<_>>();
    view! {
        // Focusable: on a narrow screen it scrolls sideways, by keyboard too.
        <figure class="device-chart" tabindex="0">
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=name.clone()>
                <title>{name.clone()}</title>
                {super::chart::value_axis(&[0.0, 25.0, 50.0, 75.0, 100.0], percent, (f64::from(LEFT), f64::from(RIGHT)),
                    (f64::from(LEFT) - 4.0, "end"), " %")}
                <line class="axis" x1=LEFT y1=BOTTOM x2=RIGHT y2=BOTTOM/>
                <line class="axis" x1=LEFT y1=TOP x2=LEFT y2=BOTTOM/>
                <line class="axis" x1=RIGHT y1=TOP x2=RIGHT y2=BOTTOM/>
                {[0.0_f32, 0.5, 1.0].map(|share| view! {
                    <text class="tick" x=RIGHT + 4.0 y=y(share) + 4.0>{format!("{} GiB", crate::model::figure_text(f64::from(top * share)))}</text>
                }).collect_view()}
                {axis.ticks.iter().map(|(at, label)| view! {
                    <line class="grid" x1=x(*at) y1=TOP x2=x(*at) y2=BOTTOM/>
                    <text class="tick date" x=x(*at) y=BOTTOM + 14.0 text-anchor="middle">{label.clone()}</text>
                }).collect_view()}
                {busy_lines.into_iter().map(|points| view! { <polyline class="busy" points=points/> }).collect_view()}
                {memory_lines.into_iter().map(|points| view! { <polyline class="memory" points=points/> }).collect_view()}
            </svg>
            <figcaption>
                <strong>{chart.device}</strong>
                " · " <span class="key busy">"engine busy (%)"</span> " · " <span class="key memory">"memory used (GiB)"</span>
                {simulated.then_some(" · simulated")}
            </figcaption>
        </figure>
    }
}

/// A session's charts, one per device, or that nothing was measured in the range.
#[component]
pub fn DeviceCharts(devices: Vec<DeviceChart>, axis: ChartAxis, simulated: bool) -> impl IntoView {
    if devices.is_empty() {
        return view! { <p class="muted">{format!("No GPU use measured in {}.", axis.range.phrase())}</p> }.into_any();
    }
    view! {
        <div class="device-charts">
            {devices.into_iter().map(|chart| view! { <DeviceChartView chart axis=axis.clone() simulated/> }).collect_view()}
        </div>
    }
    .into_any()
}

/// The range picker: links that keep the rest of the page's query.
#[component]
pub fn RangePicker(current: ChartRange, href: Callback<ChartRange, String>) -> impl IntoView {
    view! {
        <nav class="view-switch chart-range" id="chart-range" aria-label="Chart range">
            {ChartRange::ALL.map(|range| view! {
                <a class="button secondary" href=href.run(range) id=format!("range-{}", range.as_str())
                    aria-current=(range == current).then_some("page")>{range.as_str()}</a>
            }).collect_view()}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_memory_axis_tops_at_a_round_figure() {
        use super::memory_top;
        let tops = [0.0, 0.4, 1.5, 3.0, 12.3, 70.0].map(memory_top);
        assert_eq!(tops, [1.0, 1.0, 2.0, 5.0, 20.0, 100.0]);
    }
}

/// A booking's own device charts on its page (`?range=` picks the range).
#[server(prefix = "/rpc", endpoint = "bookings/charts", output = crate::codec::JsonText)]
pub async fn load_session_charts(
    id: uuid::Uuid,
    #[server(default)] range: String,
    tz: String,
) -> Result<Option<crate::model::SessionCharts>, crate::rpc::RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let range = ChartRange::parse(&range);
    Ok(crate::backend::reports::device_charts::for_booking(&ctx.db, &principal, id, range, &tz).await?)
}

#[component]
pub fn SessionChartsPanel(id: uuid::Uuid) -> impl IntoView {
    let query = leptos_router::hooks::use_query_map();
    let charts = Resource::new(
        move || (query.with(|q| q.get("range").unwrap_or_default()), super::viewer_zone(&query)),
        move |(range, tz)| load_session_charts(id, range, tz),
    );
    let href = Callback::new(move |range: ChartRange| format!("/bookings/{id}?range={}", range.as_str()));
    view! {
        <Transition fallback=|| ()>
            {move || charts.get().and_then(Result::ok).flatten().map(|c| view! {
                <section class="session-charts" id="session-charts" aria-labelledby="session-charts-head">
                    <h2 id="session-charts-head">"GPU use"</h2>
                    <RangePicker current=c.axis.range href/>
                    {(!c.devices.is_empty()).then(|| view! { <p class="muted">"Times in " {c.axis.zone.clone()} "."</p> })}
                    <DeviceCharts devices=c.devices axis=c.axis simulated=c.simulated/>
                </section>
            })}
        </Transition>
    }
}
