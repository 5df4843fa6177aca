//! `/dashboard`: a tenant's live sessions with sparklines of the last hour's
//! measured GPU use and memory, an idle badge, the week's GPU-hours against
//! its budget, and the next bookings. Server-rendered SVG: no JavaScript needed.

use crate::model::{BudgetLine, Dashboard, LiveSession, SPARK_MINUTES};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "dashboard", output = crate::codec::JsonText)]
pub async fn load_dashboard(tenant: Option<String>, tz: String) -> Result<Dashboard, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::backend::reports::dashboard::load(&ctx.db, &principal, tenant.as_deref(), &tz).await?)
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let query = use_query_map();
    let data = Resource::new(
        move || (query.with(|q| q.get("tenant")), super::viewer_zone(&query)),
        |(tenant, tz)| load_dashboard(tenant, tz),
    );
    view! {
        <Transition fallback=|| view! { <p class="loading">"Loading the dashboard…"</p> }>
            {move || data.get().map(|loaded| match loaded {
                Ok(dashboard) => view! { <DashboardView dashboard/> }.into_any(),
                Err(err) => view! {
                    <h1>"Dashboard"</h1>
                    <p class="error" role="alert">{err.to_string()}</p>
                }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn DashboardView(dashboard: Dashboard) -> impl IntoView {
    let Dashboard { tenant, tenant_name, others, live, budget, upcoming, simulated, zone } = dashboard;
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
        <p class="muted" id="dashboard-zone">"Times in " {zone} "."</p>
        {simulated.then(|| view! {
            <p class="warning" id="dashboard-simulated">"GPU use below is simulated: the cluster is the simulated one."</p>
        })}
        <h2>"Live sessions"</h2>
        {if live.is_empty() {
            view! { <p class="empty">"No session is running now."</p> }.into_any()
        } else {
            view! {
                <table class="bookings" id="live-sessions">
                    <thead><tr>
                        <th scope="col">"Pool"</th><th scope="col">"GPUs"</th><th scope="col">"Who"</th><th scope="col">"When"</th>
                        <th scope="col">"GPU busy, last hour"</th><th scope="col">"Memory, last hour"</th><th scope="col">"Status"</th>
                    </tr></thead>
                    <tbody>{live.into_iter().map(|s| view! { <LiveRow session=s/> }).collect_view()}</tbody>
                </table>
            }.into_any()
        }}
        <h2>"This week"</h2>
        <BudgetTable lines=budget/>
        <h2>"Upcoming"</h2>
        {if upcoming.is_empty() {
            view! { <p class="empty">"Nothing booked ahead."</p> }.into_any()
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

/// A line through the measured minutes, scaled to `top`; gaps break it.
fn sparkline(values: &[Option<f32>], top: f32, class: &'static str, label: String) -> impl IntoView {
    let (w, h) = (120.0_f32, 30.0_f32);
    let step = w / (SPARK_MINUTES.max(2) - 1) as f32;
    let mut runs: Vec<Vec<String>> = vec![Vec::new()];
    for (i, value) in values.iter().enumerate() {
        match value {
            Some(v) => {
                let y = h - 2.0 - (v / top.max(f32::EPSILON)).clamp(0.0, 1.0) * (h - 4.0);
                runs.last_mut().expect("never empty").push(format!("{:.1},{y:.1}", i as f32 * step));
            }
            None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
            None => {}
        }
    }
    let aria = label.clone();
    view! {
        <svg class=format!("sparkline {class}") viewBox=format!("0 0 {w} {h}") role="img" aria-label=aria>
            <title>{label}</title>
            {runs.into_iter().filter(|r| r.len() > 1).map(|r| view! { <polyline points=r.join(" ")/> }).collect_view()}
        </svg>
    }
}

#[component]
fn LiveRow(session: LiveSession) -> impl IntoView {
    let measured = session.busy.iter().flatten().count();
    let latest_busy = session.busy.iter().rev().flatten().next().copied();
    let busy_label = match latest_busy {
        Some(b) => format!("GPU busy {:.0} % now; {measured} of the last {SPARK_MINUTES} minutes measured", b * 100.0),
        None => "no GPU use measured in the last hour".to_string(),
    };
    let memory_top = session.memory_mib.iter().flatten().fold(1.0_f32, |a, b| a.max(*b));
    let latest_memory = session.memory_mib.iter().rev().flatten().next().copied();
    let memory_label = match latest_memory {
        Some(m) => {
            format!("{:.1} GiB GPU memory used now, at most {:.1} GiB in the hour", m / 1024.0, memory_top / 1024.0)
        }
        None => "no memory use measured in the last hour".to_string(),
    };
    let simulated = session.simulated.then_some(" (simulated)");
    let line = session.booking;
    view! {
        <tr class="live-session" data-booking=line.booking_id.to_string()>
            <td>{line.pool}</td>
            <td>{crate::model::short_kind(&line.kind)} " ×" {line.quantity}</td>
            <td>{line.owner}</td>
            <td>{line.when}</td>
            <td>{sparkline(&session.busy, 1.0, "busy", busy_label)}
                " " {latest_busy.map(|b| format!("{:.0} %", b * 100.0))}{simulated}</td>
            <td>{sparkline(&session.memory_mib, memory_top, "memory", memory_label)}
                " " {latest_memory.map(|m| format!("{:.1} GiB", m / 1024.0))}</td>
            <td>{match session.idle {
                Some(text) => view! { <span class="idle-badge">{text}</span> }.into_any(),
                None => view! { <span class="muted">"in use"</span> }.into_any(),
            }}</td>
        </tr>
    }
}

#[component]
fn BudgetTable(lines: Vec<BudgetLine>) -> impl IntoView {
    use crate::model::figure_text;
    if lines.is_empty() {
        return view! { <p class="empty">"Nothing booked this week, and no weekly budget."</p> }.into_any();
    }
    view! {
        <table class="bookings" id="week-budget">
            <thead><tr>
                <th scope="col">"Pool"</th><th scope="col">"Kind"</th><th scope="col">"Booked (GPU-hours, whole-GPU equivalent)"</th>
                <th scope="col">"Busy (measured)"</th><th scope="col">"Weekly budget"</th>
            </tr></thead>
            <tbody>
                {lines.into_iter().map(|l| {
                    let budget = match l.budget_hours {
                        Some(b) => format!(
                            "{} of {} ({:.0} %)",
                            figure_text(l.booked_hours),
                            figure_text(b),
                            if b > 0.0 { l.booked_hours / b * 100.0 } else { 100.0 }
                        ),
                        None => "no budget set".to_string(),
                    };
                    view! {
                        <tr>
                            <td>{l.pool}</td>
                            <td>{crate::model::short_kind(&l.kind)}</td>
                            <td>{figure_text(l.booked_hours)}</td>
                            <td>{figure_text(l.busy_hours)}</td>
                            <td>{budget}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
