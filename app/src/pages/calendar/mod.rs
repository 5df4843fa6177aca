//! The calendar: one pool's week or day in the viewer's time zone, free
//! units per slot for each kind side by side, the viewer's bookings as
//! blocks, and the booking panel. Server-rendered and complete without
//! JavaScript; hydrated, drag-select and the keyboard fill the panel and a
//! booking updates the grid without a reload.

mod cells;
#[cfg(test)]
mod cells_tests;
pub mod data;
mod grid;
mod keys;
mod moves;
pub mod outcome;
mod panel;
mod selection;
mod span;

use super::book::Book;
use super::url::urlencode;
use crate::model::{CalendarData, PoolChoice, SpanKind};
use crate::pages::said::Alert;
use data::{load_calendar, MoveBooking, Shared};
use grid::Grid;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;
use outcome::{Banner, MoveBanner, OutcomeBanner};
use panel::{BookingPanel, Prefill, Typed};
use selection::Selection;
use std::sync::Arc;

/// The calendar: the week or day grid, the agenda or the month
/// (`?view=`). A phone opens it as its agenda, since a week of slots is
/// too wide to read there: its browser says it is one (`Sec-CH-UA-Mobile`,
/// or "Mobi" in its user agent), decided on the server and kept by
/// hydration.
#[component]
pub fn CalendarPage() -> impl IntoView {
    let query = use_query_map();
    let phone = *SharedValue::new(on_a_phone);
    let span = Memo::new(move |_| {
        query.with(|q| match q.get("view").as_deref() {
            Some(view) => SpanKind::parse(view),
            None if phone => Some(SpanKind::Agenda),
            None => None,
        })
    });
    move || match span.get() {
        Some(kind) => view! { <span::SpanPage kind/> }.into_any(),
        None => view! { <GridPage/> }.into_any(),
    }
}

fn on_a_phone() -> bool {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>().is_some_and(|parts| {
            let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default();
            header("sec-ch-ua-mobile") == "?1" || header("user-agent").contains("Mobi")
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        leptos::prelude::window().navigator().user_agent().is_ok_and(|agent| agent.contains("Mobi"))
    }
}

/// Day, week, month or agenda of the same pool and date.
#[component]
fn ViewSwitch(pool: uuid::Uuid, date: chrono::NaiveDate, tz: String, current: &'static str) -> impl IntoView {
    let views = [("day", "Day"), ("week", "Week"), ("month", "Month"), ("agenda", "Agenda")];
    view! {
        <nav class="view-switch" id="view-switch" aria-label="Calendar views">
            {views.map(|(view, label)| {
                let href = format!("/calendar?pool={pool}&date={date}&view={view}&tz={}", urlencode(&tz));
                view! {
                    <a class="button secondary" id=format!("view-{view}") href=href
                        aria-current=(view == current).then_some("page")>{label}</a>
                }
            }).collect_view()}
        </nav>
    }
}

/// Another pool, in the same view.
#[component]
fn PoolPicker(pools: Vec<PoolChoice>, current: uuid::Uuid, view: &'static str, tz: String) -> impl IntoView {
    let find = format!("/find?pool={current}");
    view! {
        <Form method="GET" action="/calendar" attr:class="inline-form pool-picker">
            <label>"Pool "
                <select name="pool" id="pool-picker">
                    {pools.iter().map(|p| view! { <option value=p.id.to_string() selected=p.id == current>{p.name.clone()}</option> }).collect_view()}
                </select>
            </label>
            <input type="hidden" name="view" value=view/>
            <input type="hidden" name="tz" value=tz.clone()/>
            <button class="button secondary" type="submit">"Show"</button>
            <span class="muted">"Times in " {tz} " · " <a href=find>"Find a slot"</a></span>
        </Form>
    }
}

#[component]
fn GridPage() -> impl IntoView {
    let query = use_query_map();
    let book = ServerAction::<Book>::new();
    let moving = ServerAction::<MoveBooking>::new();
    provide_context(keys::Refocus(RwSignal::new(None)));
    let asked = moves::AskedMoves::default();
    provide_context(asked);
    Effect::new(move |_| {
        if let Some(answer) = moving.value().get() {
            asked.answered(&answer);
        }
    });
    let params = move || {
        query.with(|q| {
            (
                q.get("pool"),
                q.get("date").and_then(|d| d.parse().ok()),
                if q.get("view").as_deref() == Some("day") { 1u32 } else { 7 },
            )
        })
    };
    // Created with the page, outside the calendar's data: what was typed
    // survives a booking's reload (and a script-less post's redirect).
    let typed = Typed::new(&query.with_untracked(Prefill::from_query));
    let calendar = Resource::new(
        move || (params(), super::viewer_zone(&query), book.version().get() + moving.version().get()),
        |((pool, date, days), tz, _)| async move {
            load_calendar(pool, date, days, tz).await.map(|data| Shared(Arc::new(data)))
        },
    );
    provide_context(cells::Written::new());
    let banner = move || book.value().get().map(Banner::answered).or_else(|| query.with(Banner::from_query));
    // The newer of the two answers is shown: a booking clears a move's, and
    // a move a booking's.
    Effect::new(move |_| {
        if book.version().get() > 0 {
            moving.value().set(None);
        }
    });
    Effect::new(move |_| {
        if moving.version().get() > 0 {
            book.value().set(None);
        }
    });
    let moved = move || moving.value().get().and_then(Result::ok);
    // Created with the page, not inside the calendar's view (see
    // `approvals::Waiting`); the booking panel shows this pool's lines.
    provide_context(crate::pages::QuotaUse::tracking(move || book.version().get()));
    view! {
        <Transition fallback=|| view! { <p class="loading">"Loading the calendar…"</p> }>
            {move || calendar.get().map(|result| match result {
                Ok(Shared(data)) => view! { <CalendarView data book banner=banner() typed moving moved=moved()/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load the calendar: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn CalendarView(
    data: Arc<CalendarData>,
    book: ServerAction<Book>,
    banner: Option<Banner>,
    typed: Typed,
    moving: ServerAction<MoveBooking>,
    moved: Option<crate::model::MoveOutcome>,
) -> impl IntoView {
    let selection = RwSignal::new(None::<Selection>);
    let on_choose = Callback::new(move |_s: Selection| {
        #[cfg(feature = "hydrate")]
        // Focus "Book": a second Enter books the window the keyboard chose.
        if let Some(panel) = leptos::tachys::dom::document().get_element_by_id("book-submit") {
            use leptos::wasm_bindgen::JsCast;
            if let Ok(panel) = panel.dyn_into::<leptos::web_sys::HtmlElement>() {
                let _ = panel.focus();
            }
        }
    });
    let prefill = match &banner {
        Some(Banner::Refused { form, .. }) => Prefill {
            kind: Some(form.kind.clone()),
            quantity: Some(form.quantity),
            start: Some(form.start.clone()),
            end: Some(form.end.clone()),
            mode: Some(form.mode.clone()),
            image: Some(form.image.clone()),
            note: Some(form.note.clone()),
            refused: banner.as_ref().and_then(Banner::refused_field),
        },
        _ => Prefill::default(),
    };
    let pool = data.pool.clone();
    let days = data.days.len();
    let view_name = if days == 1 { "day" } else { "week" };
    let link = {
        let (pool, tz) = (pool.id, data.tz.clone());
        move |date: chrono::NaiveDate, view: &str| {
            format!("/calendar?pool={pool}&date={date}&view={view}&tz={}", urlencode(&tz))
        }
    };
    let shown = match (data.days.first(), data.days.last()) {
        (Some(first), Some(last)) if days > 1 => format!("{} – {}", first.label, last.label),
        (Some(first), _) => first.label.clone(),
        _ => String::new(),
    };
    let first_date = data.days.first().map(|d| d.date).unwrap_or(data.today);
    let (prev, today, next, tz) = (data.prev, data.today, data.next, data.tz.clone());
    let tz_banner = tz.clone();
    view! {
        <section class="page-head calendar-head">
            <h1>{pool.name.clone()} <span class="muted">" · " {shown}</span></h1>
            <nav class="cal-nav" aria-label="Calendar navigation">
                <a class="button secondary" id="prev" href=link(prev, view_name)>"‹ Previous"</a>
                <a class="button secondary" id="today" href=link(today, view_name)>"Today"</a>
                <a class="button secondary" id="next" href=link(next, view_name)>"Next ›"</a>
            </nav>
        </section>
        <ViewSwitch pool=pool.id date=first_date tz=tz.clone() current=view_name/>
        <PoolPicker pools=data.pools.clone() current=pool.id view=view_name tz/>
        {data.cluster_down.clone().map(|text| view! { <p class="cluster-note warning" role="note" id="cluster-down">{text}</p> })}
        {banner.map(|banner| view! { <OutcomeBanner banner action=book tz=tz_banner.clone() key=data.form_key.clone()/> })}
        {moved.map(|outcome| view! { <MoveBanner outcome action=moving tz=tz_banner/> })}
        <Legend/>
        <div class="calendar-layout">
            <Grid data=data.clone() selection on_choose moving/>
            <BookingPanel data=data.clone() selection action=book prefill typed/>
        </div>
    }
}

/// The key: a line of swatches, and how to use the grid folded under it.
#[component]
fn Legend() -> impl IntoView {
    view! {
        <div class="legend" id="legend">
            <ul class="key" aria-label="Key">
                <li><span class="swatch free-all"></span>"Free"</li>
                <li><span class="swatch free-ok"></span>"Some booked"</li>
                <li><span class="swatch free-low"></span>"Almost full"</li>
                <li><span class="swatch free-none"></span>"Full"</li>
                <li><span class="swatch block-mine"></span>"Yours"</li>
                <li><span class="swatch block-others"></span>"Others'"</li>
                <li><span class="swatch block-pending"></span>"Waiting for approval"</li>
                <li><span class="swatch blackout"></span>"Maintenance"</li>
                <li><span class="swatch past"></span>"Cannot be booked"</li>
                <li><span class="swatch now-mark"></span>"Now"</li>
                <li><span class="used-bar swatch-bar"><span class="used-fill fill-50"></span></span>"Time really used"</li>
            </ul>
            <details class="how-to">
                <summary>"How to book here"</summary>
                <p>
                    "Drag across free time, or click it for the pool's default length; with the keyboard, arrows "
                    "move, shift+arrows select, Enter books. Hover or focus a slot for the exact number free. "
                    "Drag your booking to move it and its lower edge to resize it (alt+arrows, alt+shift+arrows); "
                    "its label opens it."
                </p>
            </details>
        </div>
    }
}
