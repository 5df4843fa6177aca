//! My bookings: live, upcoming and recent bookings as cards with a state
//! badge, the window with a countdown, and actions — cancel, extend (only
//! to ends that fit), end now — plus where the workspace link will appear.
//! A booking's own page (`/bookings/{id}`, opened from the calendar) shows
//! its one card, and asks before a destructive action without JavaScript.

mod card;
mod card_actions;

use super::confirm::Asked;
use crate::model::{ActionNotice, BookingCard, BookingState, MyBookings};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use card::Card;
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use uuid::Uuid;

/// The viewer's bookings, or only booking `only` (its page).
#[server(prefix = "/rpc", endpoint = "my_bookings", output = crate::codec::JsonText)]
pub async fn load_my_bookings(tz: String, only: Option<Uuid>) -> Result<MyBookings, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let mut page = match only {
        Some(id) => crate::backend::bookings::mine::one(&ctx.db, &principal, id, &tz).await?,
        None => crate::backend::bookings::mine::load(&ctx.db, &principal, &tz).await?,
    };
    page.simulated = ctx.mode.simulated;
    if ctx.mode.kueue {
        for card in &mut page.live {
            card.batch_queue = Some(crate::model::KUEUE_LOCAL_QUEUE.into());
        }
    }
    Ok(page)
}

#[server(prefix = "/rpc", endpoint = "bookings/cancel", output = crate::codec::JsonText)]
pub async fn cancel_booking(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let canceled = crate::backend::bookings::cancel(&ctx.db, &principal, id, "canceled in the portal").await;
    crate::rpc::act(canceled, |_| "Canceled; the capacity is free again.".into())
}

#[server(prefix = "/rpc", endpoint = "bookings/end", output = crate::codec::JsonText)]
pub async fn end_booking(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let ended = crate::backend::bookings::end_early(&ctx.db, &principal, id).await;
    crate::rpc::act(ended, |_| "Ended; the workspace will be torn down.".into())
}

#[server(prefix = "/rpc", endpoint = "bookings/extend", output = crate::codec::JsonText)]
pub async fn extend_booking(id: Uuid, end: DateTime<Utc>) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let extended = crate::backend::bookings::extend(&ctx.db, &principal, id, end).await;
    crate::rpc::act(extended, |booking| match booking.extends {
        Some(_) => "Extension requested: it waits for an admin's approval.".into(),
        None => "Extended.".into(),
    })
}

/// What a card says of its window as `now` finds it: "ends in 40 min",
/// "starts in 2 h", "ended 3 days ago" — and nothing of a window that will
/// not happen (canceled, rejected or failed before its start): it does not
/// start in 40 h.
pub(super) fn countdown_text(
    state: BookingState,
    (start, end): (DateTime<Utc>, DateTime<Utc>),
    now: DateTime<Utc>,
) -> String {
    let off = matches!(state, BookingState::Canceled | BookingState::Rejected | BookingState::Failed);
    if state.holds_capacity() && start <= now && now < end {
        format!("ends {}", relative(now, end))
    } else if off && end > now {
        String::new()
    } else if start > now {
        format!("starts {}", relative(now, start))
    } else {
        format!("ended {}", relative(now, end))
    }
}

/// "in 2 h 5 min", "3 days ago": how far `at` is from `now`.
pub fn relative(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    let minutes = (at - now).num_minutes();
    let span = minutes.unsigned_abs();
    let text = match span {
        0 => return "now".into(),
        1..=59 => format!("{span} min"),
        60..=2879 => match span % 60 {
            0 => format!("{} h", span / 60),
            m => format!("{} h {m} min", span / 60),
        },
        _ => format!("{} days", span / 1440),
    };
    if minutes > 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

#[component]
pub fn MyBookingsPage() -> impl IntoView {
    view! { <BookingsView only=Signal::stored(None)/> }
}

#[component]
pub fn BookingPage() -> impl IntoView {
    let params = use_params_map();
    // An id that is no UUID is a booking that is not found (nil never is one).
    let only = Signal::derive(move || params.with(|p| p.get("id").map(|id| id.parse::<Uuid>().unwrap_or_default())));
    view! { <BookingsView only/> }
}

/// My bookings, or (`only`) one booking's page.
#[component]
fn BookingsView(only: Signal<Option<Uuid>>) -> impl IntoView {
    let query = use_query_map();
    let cancel = ServerAction::<CancelBooking>::new();
    let end = ServerAction::<EndBooking>::new();
    let extend = ServerAction::<ExtendBooking>::new();
    let leave = ServerAction::<super::waitlist::LeaveWaitlist>::new();
    let share = super::sharing::SharingActions::new();
    let cancel_series = ServerAction::<crate::pages::series::CancelRestOfSeries>::new();
    // A refused address changes nothing: the cards are not drawn anew over
    // what was typed beside its sentence.
    let shared = crate::pages::notice::deeds(share.add);
    let versions = move || {
        let sharing = (shared.get(), share.remove.version().get(), cancel_series.version().get());
        (cancel.version().get(), end.version().get(), extend.version().get(), leave.version().get(), sharing)
    };
    let tz = move || super::viewer_zone(&query);
    let live = super::shared().live;
    let data = Resource::new(
        move || (versions(), live.get(), tz(), only.get()),
        |(_, _, tz, only)| load_my_bookings(tz, only),
    );
    // The newest answer of any of the actions, in the order they came.
    let last = RwSignal::new(None::<ActionNotice>);
    let answers = [cancel.value(), end.value(), extend.value(), leave.value(), share.add.value(), share.remove.value()];
    for value in answers.into_iter().chain([cancel_series.value()]) {
        Effect::new(move |_| {
            if let Some(Ok(notice)) = value.get() {
                last.set(Some(notice).filter(at_top));
            }
        });
    }
    let notice =
        move || last.get().or_else(|| query.with(|q| ActionNotice::from_query(|key| q.get(key)))).filter(at_top);
    let ready = announce_ready(data);
    let actions = Actions { cancel, end, extend, leave, share, cancel_series };
    provide_context(super::QuotaUse::tracking(move || cancel.version().get() + end.version().get()));
    let single = only.get_untracked().is_some();
    // Asked on a booking's page by a script-less "Cancel" (see `confirm`).
    let asked = move || query.with(|q| q.get("confirm").and_then(|a| Asked::parse(&a))).filter(|_| single);
    // Sent here by "Open workspace" on the simulated cluster (`/bookings/{id}/open`).
    let opened = move || single && query.with(|q| q.get("opened").is_some());
    view! {
        <section class="page-head">
            <h1>{if single { "Booking" } else { "My bookings" }}</h1>
            {single.then(|| view! { <a class="button secondary" href="/bookings">"My bookings"</a> })}
            <a class="button secondary" href="/calendar">"Book more"</a>
            <a class="button secondary" href="/series">"Book a recurring slot"</a>
        </section>
        {move || notice().map(|n| view! {
            <div class=if n.ok { "outcome ok" } else { "outcome refused" } role="status" id="notice">{n.message}</div>
        })}
        {move || ready.get().map(|message| view! { <div class="outcome ok" role="status" id="ready-notice">{message}</div> })}
        <super::QuotaSummary/>
        <Transition fallback=|| view! { <p class="loading">"Loading your bookings…"</p> }>
            {move || data.get().map(|result| match result {
                Ok(page) if single => view! {
                    <OneCard page actions asked=asked() opened=opened()/>
                    {only.get_untracked().map(|id| view! { <super::device_chart::SessionChartsPanel id/> })}
                }.into_any(),
                Ok(page) => view! { <Sections page actions/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
    }
}

/// "Your workspace on lab-h100 is ready", once a live booking's workspace
/// becomes ready while the page is open (as a spawn page says so), not for
/// what was ready when the page loaded.
fn announce_ready(data: Resource<Result<MyBookings, RpcError>>) -> RwSignal<Option<String>> {
    let message = RwSignal::new(None::<String>);
    let seen = StoredValue::new(None::<Vec<Uuid>>);
    Effect::new(move |_| {
        let Some(Ok(page)) = data.get() else { return };
        let ready: Vec<&BookingCard> = page
            .live
            .iter()
            .filter(|card| card.booking.state == BookingState::Active)
            .filter(|card| card.session.as_ref().is_some_and(|s| s.workspace_url.is_some()))
            .collect();
        let newly = seen.with_value(|seen| {
            seen.as_ref().and_then(|seen| ready.iter().find(|card| !seen.contains(&card.booking.id)).copied())
        });
        if let Some(card) = newly {
            let simulated = if page.simulated { " (simulated: no workspace runs)" } else { "" };
            message
                .set(Some(format!("Your workspace on {} is ready{simulated}: open it from its card.", card.pool_name)));
        }
        seen.set_value(Some(ready.iter().map(|card| card.booking.id).collect()));
    });
    message
}

#[derive(Clone, Copy)]
pub(super) struct Actions {
    pub(super) cancel: ServerAction<CancelBooking>,
    pub(super) end: ServerAction<EndBooking>,
    pub(super) extend: ServerAction<ExtendBooking>,
    pub(super) leave: ServerAction<crate::pages::waitlist::LeaveWaitlist>,
    pub(super) share: crate::pages::sharing::SharingActions,
    pub(super) cancel_series: ServerAction<crate::pages::series::CancelRestOfSeries>,
}

/// The server's clock renders the page; once hydrated, countdowns tick.
fn ticking(server_now: DateTime<Utc>) -> ReadSignal<DateTime<Utc>> {
    let now = RwSignal::new(server_now);
    #[cfg(feature = "hydrate")]
    {
        let offset = server_now - Utc::now();
        let tick = move || now.set(Utc::now() + offset);
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(30)) {
            on_cleanup(move || handle.clear());
        }
    }
    now.read_only()
}

/// A booking's own page: its card, whatever its state.
#[component]
fn OneCard(page: MyBookings, actions: Actions, asked: Option<Asked>, opened: bool) -> impl IntoView {
    let now = ticking(page.now);
    let simulated = page.simulated;
    let me = page.me.clone();
    let card = page.live.into_iter().chain(page.upcoming).chain(page.past).next();
    // What "Open workspace" would have opened, had the cluster been real.
    let would_open = card
        .as_ref()
        .and_then(|c| c.session.as_ref())
        .and_then(|s| s.workspace_url.clone())
        .filter(|_| opened && simulated);
    view! {
        {would_open.map(|url| view! {
            <section class="panel" role="status" id="simulated-workspace">
                <h2>"No workspace runs: this is a simulated cluster"</h2>
                <p>"The worker provisioned this booking's session in its in-memory API server, so every step is real "
                    "but nothing runs. On a real cluster, " <strong>"Open workspace"</strong> " would take you to "
                    <code>{url}</code> " with a one-time code for its gate."</p>
            </section>
        })}
        <p class="muted">"Times in " {page.tz.clone()} "."</p>
        {card.map(|card| view! { <div class="cards single"><Card card now actions simulated me asked/></div> })}
    }
}

#[component]
fn Sections(page: MyBookings, actions: Actions) -> impl IntoView {
    let simulated = page.simulated;
    let me = page.me.clone();
    let now = ticking(page.now);
    let section = move |title: &'static str, id: &'static str, cards: Vec<BookingCard>, empty: &'static str| {
        let me = me.clone();
        view! {
            <section class="card-section" id=id>
                <h2>{title}</h2>
                {if cards.is_empty() {
                    view! { <Empty>{empty}</Empty> }.into_any()
                } else {
                    view! { <div class="cards compact">{cards.into_iter().map(|card| view! { <Card card now actions simulated me=me.clone() asked=None/> }).collect_view()}</div> }.into_any()
                }}
            </section>
        }
    };
    view! {
        <p class="muted">"Times in " {page.tz.clone()} "."</p>
        {section("Live now", "live", page.live, "Nothing running right now.")}
        {section("Upcoming", "upcoming", page.upcoming, "Nothing booked ahead. Pick a window on the calendar.")}
        <crate::pages::waitlist::WaitlistSection lines=page.waitlist leave=actions.leave/>
        {section("Ended, canceled or rejected (30 days)", "past", page.past, "No bookings ended, canceled or rejected in the last 30 days.")}
    }
}

/// Whether a notice is said at the page's top: all but a refused field
/// said beside it in its card (a share form's address).
fn at_top(notice: &ActionNotice) -> bool {
    notice.at.is_none() || notice.field.is_none()
}

#[cfg(test)]
mod tests {
    use super::{countdown_text, relative};
    use crate::model::BookingState;
    use chrono::{Duration, TimeZone, Utc};

    #[test]
    fn a_window_that_will_not_happen_counts_nothing_down() {
        let now = Utc::now();
        let window = (now + Duration::hours(40), now + Duration::hours(42));
        assert_eq!(countdown_text(BookingState::Approved, window, now), "starts in 40 h");
        for off in [BookingState::Canceled, BookingState::Rejected, BookingState::Failed] {
            assert_eq!(countdown_text(off, window, now), "", "{off:?}");
        }
        let past = (now - Duration::hours(5), now - Duration::hours(3));
        assert_eq!(countdown_text(BookingState::Completed, past, now), "ended 3 h ago");
    }

    #[test]
    fn countdowns_read_naturally() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
        assert_eq!(relative(now, now + Duration::minutes(45)), "in 45 min");
        assert_eq!(relative(now, now + Duration::minutes(125)), "in 2 h 5 min");
        assert_eq!(relative(now, now + Duration::hours(3)), "in 3 h");
        assert_eq!(relative(now, now - Duration::days(3)), "3 days ago");
        assert_eq!(relative(now, now), "now");
    }
}
