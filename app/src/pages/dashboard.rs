//! `/dashboard`: a tenant's live sessions with a chart per GPU or MIG
//! instance of its engine busy and memory used over a range the reader
//! picks, an idle badge, the week's GPU-hours against its budget, and the
//! next bookings. Server-rendered SVG: no JavaScript needed.

use super::device_chart::{DeviceCharts, RangePicker};
use crate::model::{BudgetLine, ChartAxis, ChartRange, Dashboard, LiveSession};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "dashboard", output = crate::codec::JsonText)]
pub async fn load_dashboard(
    tenant: Option<String>,
    tz: String,
    #[server(default)] range: String,
    #[server(default)] cluster: String,
) -> Result<Dashboard, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let asked = (tenant.as_deref(), ChartRange::parse(&range), Some(cluster.as_str()));
    Ok(crate::backend::reports::dashboard::load(&ctx.db, &principal, asked, &tz).await?)
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let query = use_query_map();
    let data = Resource::new(
        move || {
            let (tenant, range, cluster) = query
                .with(|q| (q.get("tenant"), q.get("range").unwrap_or_default(), q.get("cluster").unwrap_or_default()));
            (tenant, super::viewer_zone(&query), range, cluster)
        },
        |(tenant, tz, range, cluster)| load_dashboard(tenant, tz, range, cluster),
    );
    view! {
        <Transition fallback=|| view! { <p class="loading">"Loading the dashboard…"</p> }>
            {move || data.get().map(|loaded| match loaded {
                Ok(dashboard) => view! { <DashboardView dashboard/> }.into_any(),
                Err(err) => view! {
                    <h1>"Dashboard"</h1>
                    <Alert>{err.to_string()}</Alert>
                }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn DashboardView(dashboard: Dashboard) -> impl IntoView {
    let Dashboard {
        tenant,
        tenant_name,
        others,
        live,
        budget,
        upcoming,
        simulated,
        demo_history,
        zone,
        axis,
        cluster,
        clusters,
    } = dashboard;
    // The cluster chosen stays through the range's links, and the range through the cluster's.
    let only = cluster.as_deref().map(|c| format!("&cluster={c}")).unwrap_or_default();
    let range_link = {
        let (tenant, only) = (tenant.clone(), only.clone());
        Callback::new(move |range: ChartRange| format!("/dashboard?tenant={tenant}&range={}{only}", range.as_str()))
    };
    let cluster_link = |name: Option<&str>| {
        let only = name.map(|c| format!("&cluster={c}")).unwrap_or_default();
        format!("/dashboard?tenant={tenant}&range={}{only}", axis.range.as_str())
    };
    let cluster_picker = (clusters.len() > 1).then(|| {
        let current = cluster.clone();
        view! {
            <nav class="cal-nav" aria-label="Clusters" id="dashboard-clusters">
                <a href=cluster_link(None) aria-current=current.is_none().then_some("page")>"All clusters"</a>
                {clusters.iter().map(|name| view! {
                    <a href=cluster_link(Some(name)) aria-current=(current.as_deref() == Some(name.as_str())).then_some("page")>{name.clone()}</a>
                }).collect_view()}
            </nav>
        }
    });
    let current = axis.range;
    view! {
        <section class="page-head">
            <h1>"Dashboard · " <span id="dashboard-tenant">{tenant_name}</span> " (" {tenant} ")"</h1>
            {(!others.is_empty()).then(|| view! {
                <nav class="cal-nav" aria-label="Tenants">
                    {others.into_iter().map(|slug| view! {
                        <a href=format!("/dashboard?tenant={slug}")>{slug.clone()}</a>
                    }).collect_view()}
                </nav>
            })}
        </section>
        {cluster_picker}
        <p class="muted" id="dashboard-zone">"Times in " {zone} "."
            {cluster.map(|c| view! { " Only cluster " <strong id="dashboard-cluster">{c}</strong> "." })}</p>
        {demo_history.map(|text| view! { <p class="notice demo-data" id="dashboard-demo">{text}</p> })}
        {simulated.then(|| view! {
            <p class="warning" id="dashboard-simulated">"GPU use below is simulated: the cluster is the simulated one."</p>
        })}
        <h2>"Live sessions"</h2>
        {if live.is_empty() {
            view! { <Empty>"No session is running now."</Empty> }.into_any()
        } else {
            view! {
                <RangePicker current href=range_link/>
                <div id="live-sessions">
                    {live.into_iter().map(|s| view! { <LiveSessionView session=s axis=axis.clone()/> }).collect_view()}
                </div>
            }.into_any()
        }}
        <h2>"This week"</h2>
        <BudgetTable lines=budget/>
        <h2>"Upcoming"</h2>
        {if upcoming.is_empty() {
            view! { <Empty>"Nothing booked ahead."</Empty> }.into_any()
        } else {
            view! {
                <ul id="upcoming">
                    {upcoming.into_iter().map(|u| view! {
                        <li>{u.booking.when} " · " {u.booking.pool} " " {crate::model::short_kind(&u.booking.kind)} " ×" {u.booking.quantity}
                            " · " {u.booking.owner} " " <span class=format!("badge state-{}", u.state)>{u.state.clone()}</span></li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}
    }
}

/// One live session: what and whose, whether it idles, and a chart per device.
#[component]
fn LiveSessionView(session: LiveSession, axis: ChartAxis) -> impl IntoView {
    let line = session.booking;
    let simulated = session.simulated;
    let label = format!("{} {} ×{}, {}", line.pool, crate::model::short_kind(&line.kind), line.quantity, line.owner);
    view! {
        <section class="live-session" data-booking=line.booking_id.to_string() aria-label=label>
            <p class="live-line">
                <strong>{line.pool}</strong> " · " {crate::model::short_kind(&line.kind)} " ×" {line.quantity}
                " · " {line.owner} " · " {line.when} " · "
                {match session.idle {
                    Some(text) => view! { <span class="idle-badge">{text}</span> }.into_any(),
                    None => view! { <span class="muted">"in use"</span> }.into_any(),
                }}
            </p>
            <DeviceCharts devices=session.devices axis simulated/>
        </section>
    }
}

#[component]
fn BudgetTable(lines: Vec<BudgetLine>) -> impl IntoView {
    use crate::model::figure_text;
    if lines.is_empty() {
        return view! { <Empty>"Nothing booked this week, and no weekly budget."</Empty> }.into_any();
    }
    view! {
        <super::table::TableScroll label="This week's budget"><table class="bookings" id="week-budget">
            <thead><tr>
                <th scope="col">"Pool"</th><th scope="col">"Kind"</th><th scope="col">"Booked (GPU-hours, whole-GPU equivalent)"</th>
                <th scope="col">"Busy (measured)"</th><th scope="col">"Weekly budget"</th>
            </tr></thead>
            <tbody>
                {lines.into_iter().map(|l| {
                    // The budget counts what waits for approval with what is booked.
                    let held = l.booked_hours + l.waiting_hours;
                    let budget = match l.budget_hours {
                        Some(b) => format!(
                            "{} of {} ({:.0} %){}",
                            figure_text(held),
                            figure_text(b),
                            if b > 0.0 { held / b * 100.0 } else { 100.0 },
                            if l.waiting_hours > 0.0 { ", with those waiting" } else { "" },
                        ),
                        None => "no budget set".to_string(),
                    };
                    let waiting = (l.waiting_hours > 0.0).then(|| view! {
                        <br/><span class="muted waiting">{format!("+ {} waiting for approval", figure_text(l.waiting_hours))}</span>
                    });
                    view! {
                        <tr>
                            <td>{l.pool}</td>
                            <td>{crate::model::short_kind(&l.kind)}</td>
                            <td class="booked">{figure_text(l.booked_hours)} {waiting}</td>
                            <td>{figure_text(l.busy_hours)}</td>
                            <td>{budget}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></super::table::TableScroll>
    }
    .into_any()
}
