//! Admins only: which worker process leads, its last passes and next
//! wake-up, sessions by state, recent failures with the cluster's answer,
//! and what the sweep found.

use crate::model::{Clock, ClusterHealth, WorkerProcess, WorkerStatus};
use crate::rpc::RpcError;
use chrono::{DateTime, Utc};
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "admin/worker", output = crate::codec::JsonText)]
pub async fn load_worker_status() -> Result<WorkerStatus, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::sessions::status::status(&ctx.db, &principal).await?)
}

fn at(clock: &Clock, value: Option<DateTime<Utc>>) -> String {
    value.map(|v| clock.when(v)).unwrap_or_else(|| "never".into())
}

fn pass(clock: &Clock, at_: Option<DateTime<Utc>>, ms: Option<i32>, error: Option<String>) -> impl IntoView {
    let took = ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default();
    view! {
        {at(clock, at_)} {took}
        {error.map(|e| view! { <br/> <span class="refused">{e}</span> })}
    }
}

/// An open session by its first step not done, or "live" with every step
/// done (`sessions::status`), in words.
fn session_state(state: &str) -> &str {
    match state {
        "live" => "Live, workspace ready",
        "working" => "Starting, waiting for the cluster",
        "pending" => "Waiting to start",
        "failed" => "Stopped at a failed step",
        other => other,
    }
}

/// How far behind a cluster's worker is, in words.
fn lag(behind: chrono::Duration) -> String {
    match behind.num_seconds().max(0) {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

#[component]
pub fn WorkerPage() -> impl IntoView {
    let status = Resource::new(|| (), |_| load_worker_status());
    view! {
        <section class="page-head"><h1>"Worker"</h1></section>
        <Transition fallback=|| view! { <p class="loading">"Loading the worker's reports…"</p> }>
            {move || status.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                Ok(status) => view! { <StatusView status clock/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load the worker status: ", err),
            })}
        </Transition>
    }
}

#[component]
fn StatusView(status: WorkerStatus, clock: Clock) -> impl IntoView {
    let simulated = status.processes.first().is_some_and(|p| p.simulated);
    let leader = match &status.leader {
        Some(name) => format!("{name} leads"),
        None => "No worker has led in the last 2 minutes: nothing starts or ends sessions.".into(),
    };
    // Made before the page's view: the table's box takes it whole.
    let processes = view! {
        <table class="bookings" id="worker-processes">
            <thead><tr><th>"Process"</th><th>"Last start pass"</th><th>"Last repair pass"</th><th>"Next wake-up"</th><th>"Last sweep"</th></tr></thead>
            <tbody>
                {status.processes.into_iter().map(|p: WorkerProcess| {
                    let clock = &clock;
                    view! {
                    <tr>
                        <td>{p.name.clone()} <br/> <span class="muted">{if p.leading_since.is_some() { "leading" } else { "waiting" }}
                            " · seen " {clock.when(p.heartbeat_at)}</span></td>
                        <td>{pass(clock, p.start_pass_at, p.start_pass_ms, p.start_pass_error)}</td>
                        <td>{pass(clock, p.repair_pass_at, p.repair_pass_ms, p.repair_pass_error)}</td>
                        <td>{at(clock, p.next_wake_at)}</td>
                        <td>{at(clock, p.sweep_at)} <br/>
                            <span class="muted">{format!("{} orphans collected", p.sweep_collected.len())}</span>
                            {(!p.sweep_stuck.is_empty()).then(|| view! { <br/> <span class="refused">"stuck terminating: " {p.sweep_stuck.join(", ")}</span> })}
                        </td>
                    </tr>
                }}).collect_view()}
            </tbody>
        </table>
    };
    view! {
        <p class=if status.leader.is_some() { "outcome ok" } else { "outcome refused" } id="worker-leader">
            {leader} " · cluster: " <strong id="cluster-mode">{if simulated { "simulated (in memory)" } else { "real" }}</strong>
        </p>
        <p class="muted zone-note">"Times in " {clock.tz.clone()}</p>
        <super::table::TableScroll label="Worker processes">{processes}</super::table::TableScroll>
        <h2>"Clusters"</h2>
        <table class="bookings stacked" id="worker-clusters">
            <thead><tr><th>"Cluster"</th><th>"Led by"</th><th>"Last pass"</th><th>"Last success"</th></tr></thead>
            <tbody>
                {status.clusters.into_iter().map(|c: ClusterHealth| {
                    let lag = c.last_success_at.map(|at| format!(" ({} behind)", lag(status.now - at)));
                    view! {
                        <tr id=format!("worker-cluster-{}", c.name)>
                            <td data-label="Cluster"><strong>{c.name.clone()}</strong>
                                {c.unreachable_since.map(|since| view! {
                                    <br/> <span class="refused">"unreachable since " {clock.when(since)}</span>
                                })}</td>
                            <td data-label="Led by">{c.worker.unwrap_or_else(|| "no worker yet".into())}</td>
                            <td data-label="Last pass">{pass(&clock, c.pass_at, c.pass_ms, c.error)}</td>
                            <td data-label="Last success">{at(&clock, c.last_success_at)} {lag}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <h2>"Sessions by state"</h2>
        <ul id="session-states">
            {if status.sessions.is_empty() { Some(view! { <li>"No session is open."</li> }) } else { None }}
            {status.sessions.into_iter().map(|(state, count)| view! {
                <li data-state=state.clone()>{session_state(&state)} ": " {count}</li>
            }).collect_view()}
        </ul>
        <h2>"Failures in the last 7 days"</h2>
        <ul id="worker-failures">
            {if status.recent_failures.is_empty() { Some(view! { <li>"None."</li> }) } else { None }}
            {status.recent_failures.into_iter().map(|f| view! {
                <li>{clock.when(f.at)} " · booking " <code>{f.booking_id.to_string()}</code> ": " {f.reason}</li>
            }).collect_view()}
        </ul>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_session_with_every_step_done_reads_as_live() {
        assert_eq!(super::session_state("live"), "Live, workspace ready");
        assert_eq!(super::session_state("working"), "Starting, waiting for the cluster");
    }
}
