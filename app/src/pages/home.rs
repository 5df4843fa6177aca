use super::overview::load_overview;
use crate::model::{Booking, Clock, Overview, PoolSummary, Principal, Role};
use crate::pages::said::{Alert, Empty};
use leptos::prelude::*;

/// Anonymous visitors are asked to sign in; signed-in users without a tenant
/// are told to ask an admin; everyone else sees their pools.
#[component]
pub fn HomePage() -> impl IntoView {
    let me = super::shared().me;
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || me.get().map(|result| match result {
                Ok(Some(principal)) if can_book(&principal) => view! {
                    {principal.is_admin().then(|| view! { <super::approvals::WaitingSummary/> })}
                    <PoolsOverview/>
                }.into_any(),
                Ok(Some(_)) => view! { <AskYourAdmin/> }.into_any(),
                Ok(None) => view! { <Welcome/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load your account: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Suspense>
    }
}

fn can_book(principal: &Principal) -> bool {
    !principal.tenants.is_empty() || principal.role == Role::Admin
}

#[component]
fn Welcome() -> impl IntoView {
    view! {
        <section class="welcome">
            <h1>"Book GPU time like a meeting room"</h1>
            <p>"Pick a window, get an isolated workspace with your GPUs when it starts."</p>
            <a class="button" href="/signin" id="welcome-signin">"Sign in"</a>
        </section>
    }
}

#[component]
fn AskYourAdmin() -> impl IntoView {
    view! {
        <section class="panel ask-admin" id="ask-your-admin">
            <h1>"You are signed in, but not in any team yet"</h1>
            <p>"Bookings belong to a team (tenant). Ask your Berth admin to add you to one — or to the identity-provider group that grants it — then sign in again."</p>
        </section>
    }
}

/// Pools and the coming week's bookings. The refresh button re-asks the server
/// without a page reload once the page has hydrated.
#[component]
fn PoolsOverview() -> impl IntoView {
    let overview = Resource::new(|| (), |_| load_overview());
    view! {
        <section class="page-head">
            <h1>"Pools and bookings"</h1>
            <button class="button" on:click=move |_| overview.refetch()>"Refresh"</button>
        </section>
        <Suspense fallback=|| view! { <p class="loading">"Loading pools…"</p> }>
            {move || overview.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                Ok(data) => view! { <OverviewView data clock/> }.into_any(),
                Err(err) => view! {
                    <Alert>"Could not load pools: " {err.to_string()}</Alert>
                }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn OverviewView(data: Overview, clock: Clock) -> impl IntoView {
    let names: Vec<(uuid::Uuid, String)> = data.pools.iter().map(|p| (p.pool.id, p.pool.name.clone())).collect();
    let pool_name = move |id| names.iter().find(|(pid, _)| *pid == id).map(|(_, n)| n.clone()).unwrap_or_default();
    let timeline = view! { <super::timeline::WeekTimeline data=data.clone() clock=clock.clone()/> };
    view! {
        <p class="muted">"As of " {clock.when(data.now)} " · times in " {clock.tz.clone()}</p>
        // The cards' pool names are third-level headings under this one.
        <h2 class="visually-hidden">"Pools"</h2>
        {if data.pools.is_empty() {
            view! { <Empty>"No pools yet. An admin creates them with the API or " <code>"berth seed-demo"</code> "."</Empty> }.into_any()
        } else {
            data.pools.into_iter().map(|summary| view! { <PoolCard summary/> }).collect_view().into_any()
        }}
        <h2>"The week across pools"</h2>
        {timeline}
        <h2>"Bookings this week"</h2>
        {if data.bookings.is_empty() {
            view! { <Empty id="no-bookings">"Nothing booked in the next seven days."</Empty> }.into_any()
        } else {
            view! {
                <super::table::TableScroll label="Bookings this week">
                <table class="bookings">
                    <thead><tr><th>"Pool"</th><th>"Kind"</th><th>"Units"</th><th>"From"</th><th>"Until"</th><th>"State"</th></tr></thead>
                    <tbody>
                        {data.bookings.into_iter().map(|b| view! { <BookingRow pool=pool_name(b.pool_id) booking=b clock=clock.clone()/> }).collect_view()}
                    </tbody>
                </table>
                </super::table::TableScroll>
            }.into_any()
        }}
    }
}

#[component]
fn PoolCard(summary: PoolSummary) -> impl IntoView {
    let pool = summary.pool;
    view! {
        <article class="pool-card">
            <h3>{pool.name.clone()}</h3>
            <a class="button secondary open-calendar" href=format!("/calendar?pool={}", pool.id)>"Open calendar"</a>
            <p class="muted">{pool.gpu_model.clone()} " · " {pool.description.clone()}</p>
            <p>{if pool.requires_approval { "Bookings need an admin's approval." } else { "Bookings are confirmed at once." }}</p>
            <ul class="kinds">
                {summary.kinds.into_iter().map(|k| {
                    let detail = pool.kinds.iter().find(|d| d.kind == k.kind).cloned();
                    view! {
                        <li class="kind">
                            <code>{k.kind.clone()}</code>
                            <span class="free">{k.free_now} " of " {k.capacity} " free now"</span>
                            {detail.map(|d| view! {
                                <span class="muted">{d.vram_gb_per_unit} " GB VRAM · " {d.replicas_per_unit} " time-slice replicas per unit"</span>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </article>
    }
}

#[component]
fn BookingRow(pool: String, booking: Booking, clock: Clock) -> impl IntoView {
    view! {
        <tr>
            <td>{pool}</td>
            <td><code>{booking.kind}</code></td>
            <td>{booking.quantity}</td>
            <td>{clock.when(booking.start)}</td>
            <td>{clock.when(booking.end)}</td>
            <td><span class=format!("badge state-{}", booking.state.as_str())>{booking.state.as_str()}</span></td>
        </tr>
    }
}
