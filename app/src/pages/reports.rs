//! `/reports` (managers and admins): utilisation by pool, cluster, tenant or user
//! over a day, week, month or custom period, with its trend, its occupancy
//! heat map and the table as CSV. A plain GET form: works without JavaScript.

use super::field::{choice, Field};
use super::report_charts::{HeatMap, TrendChart};
use crate::model::{ActionNotice, FieldError, PeriodKind, ReportGroup, ReportPage, ReportPageQuery, ReportRow};
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "reports/utilization", output = crate::codec::JsonText)]
/// The report asked for, or why a field of the period form cannot be
/// (shown beside it).
pub async fn load_report(query: ReportPageQuery) -> Result<Result<ReportPage, ActionNotice>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let query = ReportPageQuery { tz: crate::rpc::no_script::reader_zone(query.tz).await, ..query };
    crate::rpc::beside(crate::backend::reports::page(&ctx.db, &principal, &query, &ctx.currency).await)
}

fn hours(value: f64) -> String {
    crate::model::figure_text(value)
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.0} %"))
}

#[component]
pub fn ReportsPage() -> impl IntoView {
    let query = use_query_map();
    let asked = Memo::new(move |_| {
        query.with(|q| {
            let get = |key: &str| q.get(key).unwrap_or_default();
            let tz = super::viewer_zone(&query);
            let (group, period, date, until, cluster) =
                (get("group"), get("period"), get("date"), get("until"), get("cluster"));
            ReportPageQuery { group, period, date, until, tz, cluster }
        })
    });
    let data = Resource::new(move || asked.get(), load_report);
    view! {
        <section class="page-head"><h1>"Reports"</h1><a href="/reports/tokenomics">"Tokenomics ›"</a></section>
        <Transition fallback=|| view! { <p class="loading">"Loading the report…"</p> }>
            {move || data.get().map(|loaded| match loaded {
                Ok(Ok(page)) => view! { <Report page/> }.into_any(),
                // The form as asked, with the field at fault marked.
                Ok(Err(refused)) => asked.with_untracked(|q| {
                    let group = ReportGroup::parse(&q.group).unwrap_or(ReportGroup::Pool);
                    let period = PeriodKind::parse(&q.period).unwrap_or(PeriodKind::Week);
                    view! {
                        <PeriodForm group period date=q.date.clone() until=q.until.clone() clusters=(None, Vec::new())
                            refused=refused.field.clone()/>
                        {refused.field.is_none().then(|| view! { <Alert>{refused.message.clone()}</Alert> })}
                    }.into_any()
                }),
                Err(err) => super::forbidden::refusal(super::forbidden::READERS).unwrap_or_else(|| view! {
                    <Alert>{err.to_string()}</Alert>
                }.into_any()),
            })}
        </Transition>
    }
}

#[component]
fn PeriodForm(
    group: ReportGroup,
    period: PeriodKind,
    date: String,
    until: String,
    /// The cluster chosen, and every cluster (a choice only with two or more).
    clusters: (Option<String>, Vec<String>),
    /// The field the report could not be made with, and why.
    refused: Option<FieldError>,
) -> impl IntoView {
    let refused = Signal::stored(refused);
    let (chosen, clusters) = clusters;
    let cluster_choice = (clusters.len() > 1).then(|| {
        view! {
            <Field form="report" name="cluster" label="Cluster" refused let:aria>
                <select name="cluster" id="report-cluster" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                    <option value="" selected=chosen.is_none()>"every cluster"</option>
                    {clusters.iter().map(|name| {
                        let selected = chosen.as_deref() == Some(name.as_str());
                        view! { <option value=name.clone() selected=selected>{name.clone()}</option> }
                    }).collect_view()}
                </select>
            </Field>
        }
    });
    view! {
        <Form method="GET" action="/reports" attr:class="fields-row" attr:id="report-period">
            <Field form="report" name="group" label="By" refused let:aria>
                {choice("report-group", "group", aria, &[("pool", "pool"), ("cluster", "cluster"), ("tenant", "tenant"), ("user", "user")], group.as_str())}
            </Field>
            <Field form="report" name="period" label="Period" refused let:aria>
                {choice("report-period-kind", "period", aria, &[("day", "day"), ("week", "week"), ("month", "month"), ("custom", "custom")], period.as_str())}
            </Field>
            <Field form="report" name="date" label="From" refused let:aria>
                <input type="date" name="date" id="report-date" value=date.clone()
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="report" name="until" label="Until (custom)" refused let:aria>
                <input type="date" name="until" id="report-until" value=until.clone()
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            {cluster_choice}
            <button class="button secondary" type="submit" id="report-show">"Show"</button>
        </Form>
    }
}

fn link(
    (group, cluster): (ReportGroup, Option<&str>),
    period: PeriodKind,
    (date, until): (chrono::NaiveDate, Option<chrono::NaiveDate>),
    tz: &str,
) -> String {
    let until = until.map(|u| format!("&until={u}")).unwrap_or_default();
    format!(
        "/reports?group={}&period={}&date={date}{until}&tz={}{}",
        group.as_str(),
        period.as_str(),
        super::url::urlencode(tz),
        cluster_query(cluster)
    )
}

/// `&cluster=…` when the report keeps to one cluster.
fn cluster_query(cluster: Option<&str>) -> String {
    cluster.map(|name| format!("&cluster={}", super::url::urlencode(name))).unwrap_or_default()
}

#[component]
fn Report(page: ReportPage) -> impl IntoView {
    let ReportPage { report, period, date, until, span, previous, next } = page;
    let group = report.group;
    let zone = report.time_zone.clone();
    let cluster = report.cluster.clone();
    let csv = format!(
        "/api/v1/reports/utilization.csv?from={}&to={}&group={}&tz={}{}",
        super::url::urlencode(&report.from.to_rfc3339()),
        super::url::urlencode(&report.to.to_rfc3339()),
        group.as_str(),
        super::url::urlencode(&zone),
        cluster_query(cluster.as_deref())
    );
    let name_header = match group {
        ReportGroup::Pool => "Pool",
        ReportGroup::Cluster => "Cluster",
        ReportGroup::Tenant => "Tenant",
        ReportGroup::User => "User",
    };
    let currency = report.currency.clone();
    view! {
        <PeriodForm group period date=date.to_string() until=until.map(|u| u.to_string()).unwrap_or_default()
            clusters=(cluster.clone(), report.clusters.clone()) refused=None/>
        <nav class="cal-nav" aria-label="Periods">
            <a class="button secondary" id="report-previous" href=link((group, cluster.as_deref()), period, previous, &zone)>"‹ Earlier"</a>
            <strong id="report-span">{span}</strong>
            <a class="button secondary" id="report-next" href=link((group, cluster.as_deref()), period, next, &zone)>"Later ›"</a>
            <a class="button secondary" id="report-csv" href=csv download="berth-utilization.csv">"Download CSV"</a>
        </nav>
        {report.demo_history.clone().map(|text| view! { <p class="notice demo-data" id="report-demo">{text}</p> })}
        {report.simulated.then(|| view! {
            <p class="warning" id="report-simulated">"Measured figures come from the simulated cluster: they are simulated, not real GPU use."</p>
        })}
        {(report.gap_minutes > 0).then(|| view! {
            <p class="warning" id="report-gaps">{format!(
                "Prometheus could not be read for {} minutes of this period: those minutes are left out of the measured figures, not filled in.",
                report.gap_minutes
            )}</p>
        })}
        <super::table::TableScroll label="The report's table">
        <table class="bookings report" id="report-table">
            <caption>{format!(
                "In {}: a unit-hour of a kind counts 1 / its pool's slices per GPU (an hour of one of the four \
                 MIG slices a GPU is cut into counts ¼). Booked: reserved. Occupied: a workspace or the session's pods held \
                 the device. Active: its engine was busy {} of the time or more. Idle booked: booked but not \
                 active, what lending or reclaim can give back. Showback in {}, at each kind's price per unit-hour.",
                crate::model::GPU_HOURS,
                report.active_threshold_pct.map_or_else(|| "above the site's threshold".to_string(), |t| format!("{t} %")),
                report.currency
            )}</caption>
            <thead><tr>
                <th scope="col">{name_header}</th>
                <th scope="col">"Capacity"</th>
                <th scope="col">"Booked"</th>
                <th scope="col">"Booked %"</th>
                <th scope="col">"Occupied"</th>
                <th scope="col">"Active"</th>
                <th scope="col">"Active % of booked"</th>
                <th scope="col">"Idle booked"</th>
                <th scope="col"><abbr title="Booked GPU-hours lent to the pool's backfill queue and used by its Jobs">"Lent to backfill"</abbr></th>
                <th scope="col">"No-shows"</th>
                <th scope="col">"Returned early"</th>
                <th scope="col">"Refused"</th>
                <th scope="col">"Waitlisted"</th>
                <th scope="col">{format!("Showback ({})", report.currency)}</th>
            </tr></thead>
            <tbody>
                {report.rows.into_iter().map(|row| view! { <ReportLine row/> }).collect_view()}
            </tbody>
            <tfoot><ReportLine row=report.total/></tfoot>
        </table>
        </super::table::TableScroll>
        <h2>"Storage held by homes"</h2>
        {if report.storage.is_empty() {
            view! { <p class="muted" id="storage-none">"No home was kept in this period."</p> }.into_any()
        } else {
            let price = report.storage_price_per_gib_month;
            view! {
                <super::table::TableScroll label="Storage held by homes"><table class="bookings storage" id="storage-table">
                    <caption>{format!(
                        "Each home's size × the days it was kept in the period, by its owner's tenant; showback at \
                         {price:.2} {} per GiB-month (30 days; admins set it on the Homes page).", currency
                    )}</caption>
                    <thead><tr><th scope="col">"Tenant"</th><th scope="col">"GiB-days"</th>
                        <th scope="col">{format!("Showback ({})", currency)}</th></tr></thead>
                    <tbody>
                        {report.storage.into_iter().map(|line| view! {
                            <tr><th scope="row">{line.tenant}</th><td>{format!("{:.1}", line.gib_days)}</td>
                                <td>{format!("{:.2}", line.showback_cost)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table></super::table::TableScroll>
            }.into_any()
        }}
        <h2>"Trend"</h2>
        <TrendChart trend=report.trend bucket=report.trend_bucket/>
        <h2>"Occupancy by weekday and hour"</h2>
        <HeatMap cells=report.heatmap zone=zone.clone()/>
    }
}

#[component]
fn ReportLine(row: ReportRow) -> impl IntoView {
    let simulated = row.simulated.then_some(" (simulated)");
    view! {
        <tr>
            <th scope="row">{row.name}</th>
            <td>{row.capacity_gpu_hours.map_or_else(|| "—".into(), hours)}</td>
            <td>{hours(row.booked_gpu_hours)}</td>
            <td>{percent(row.booking_utilization_pct)}</td>
            <td>{hours(row.occupied_gpu_hours)}{simulated}</td>
            <td>
                {hours(row.active_gpu_hours)}{simulated}
                // The exporter reports a time-sliced device as a whole.
                {row.device_level_only.then(|| view! {
                    <span class="device-level" title="Time-sliced shares: the exporter reports the whole device, not each share">
                        "device-level only"
                    </span>
                })}
            </td>
            <td>{percent(row.active_utilization_pct)}</td>
            <td>{hours(row.idle_booked_gpu_hours)}</td>
            <td>{row.lent_gpu_hours.map_or_else(|| "—".into(), hours)}</td>
            <td>{row.no_shows}</td>
            <td>{hours(row.returned_gpu_hours)}</td>
            <td>{hours(row.refused_gpu_hours)}</td>
            <td>{hours(row.waitlisted_gpu_hours)}</td>
            <td>{format!("{:.2}", crate::model::figure(row.showback_cost))}</td>
        </tr>
    }
}
