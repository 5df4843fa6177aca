//! The week (or day) grid: time down, days across, one lane per kind inside
//! each day. Bookings are blocks on the time axis (`CalendarBlock`, side by
//! side where they overlap); each cell's shade says how full its lane is,
//! and its hover and accessible name give the exact figure. Pressing a
//! free cell and dragging selects a window; so do shift+arrows from a
//! focused cell, and Enter opens the booking panel with it. One's own
//! booking that has not begun drags to another time (its lower edge
//! resizes it), or moves with alt+arrows (alt+shift+arrows resize): the
//! server checks each change as it checks a booking. A red line marks now;
//! the label of one's own booking opens its page.

use super::cells;
use super::data::MoveBooking;
use super::keys::{first_bookable, move_by_key, on_key, Focus, MoveTo, Refocus};
use super::moves::AskedMoves;
use super::selection::Selection;
use crate::model::{CalendarData, Movable};
use chrono::{DateTime, Duration, Utc};
use leptos::prelude::*;
use std::sync::Arc;

/// A drag of one's own booking: where it was grabbed, and where it would go.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Drag {
    block: Movable,
    /// From the booking's start to the grabbed slot's.
    grab: Duration,
    /// Grabbed by its lower edge: the end moves, the start stays.
    resize: bool,
    to: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

impl Drag {
    /// Where the booking would go with the pointer over the slot at `at`.
    fn over(self, at: DateTime<Utc>, step: Duration) -> Self {
        let b = self.block;
        let to = if self.resize {
            (at + step > b.start).then_some((b.start, at + step))
        } else {
            let start = at - self.grab;
            Some((start, start + (b.end - b.start)))
        };
        Self { to, ..self }
    }
}

#[component]
pub fn Grid(
    data: Arc<CalendarData>,
    selection: RwSignal<Option<Selection>>,
    /// Called with the final selection when a drag ends or Enter is pressed.
    on_choose: Callback<Selection>,
    /// Moves or resizes one of the viewer's bookings.
    moving: ServerAction<MoveBooking>,
) -> impl IntoView {
    let dragging = RwSignal::new(false);
    let drag = RwSignal::new(None::<Drag>);
    let tz = data.tz.clone();
    // Blocks are taken as the viewer last placed them (see `moves`).
    let asked = use_context::<AskedMoves>().unwrap_or_default();
    let send_move = Callback::new(move |(block, (start, end)): MoveTo| {
        if (start, end) != (block.start, block.end) {
            asked.ask(block, (start, end));
            let (start, end) = (start.to_rfc3339(), end.to_rfc3339());
            moving.dispatch(MoveBooking { id: block.id, start, end, tz: tz.clone() });
        }
    });
    let refocus = use_context::<Refocus>();
    // A click (no drag) books the pool's default length from where it fell.
    let click_slots = (data.pool.default_booking_minutes / data.pool.rules.granularity_minutes.max(1)).max(1) as usize;
    let spread = {
        let data = data.clone();
        Callback::new(move |s: Selection| {
            let (Some(column), Some(day)) = (data.cells.get(s.day).and_then(|d| d.get(s.kind)), data.days.get(s.day))
            else {
                return s;
            };
            s.spread(click_slots, column, &day.slots)
        })
    };
    // Back where a keyboard move left the booking, else at the first slot
    // that can still be booked rather than at midnight.
    let moved_to = refocus.and_then(|r| r.0.get_untracked()).and_then(|(k, at)| {
        data.days
            .iter()
            .enumerate()
            .find_map(|(d, day)| day.slots.iter().position(|s| s.start == at).map(|i| (d, k, i)))
    });
    let start = moved_to.or_else(|| first_bookable(&data)).unwrap_or((0, 0, 0));
    let focus = RwSignal::new(start);
    // The grid scrolls inside its own box to that slot, under its sticky
    // heads; the page itself stays where it is.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let document = leptos::tachys::dom::document();
        let (Some(cell), Some(scroll)) = (
            document.get_element_by_id(&super::keys::cell_id(start.0, start.1, start.2)),
            document.get_element_by_id("calendar-scroll"),
        ) else {
            return;
        };
        let heads =
            document.query_selector("table.calendar thead").ok().flatten().map_or(0.0, |h| h.client_height() as f64);
        let offset = cell.get_bounding_client_rect().top() - scroll.get_bounding_client_rect().top();
        scroll.set_scroll_top((f64::from(scroll.scroll_top()) + offset - heads) as i32);
        if moved_to.is_some() {
            use leptos::wasm_bindgen::JsCast;
            if let Ok(cell) = cell.dyn_into::<leptos::web_sys::HtmlElement>() {
                let _ = cell.focus_with_options(&{
                    let options = leptos::web_sys::FocusOptions::new();
                    options.set_prevent_scroll(true);
                    options
                });
            }
        }
    });
    let rows = data.days.iter().map(|d| d.slots.len()).max().unwrap_or(0);
    let kinds = data.kinds.len();
    // A drag ends where the button is released, in the grid or outside it;
    // the window hears that release.
    #[cfg(feature = "hydrate")]
    {
        let finish_drag = move || {
            if let Some(moved) = drag.get_untracked() {
                drag.set(None);
                if let Some(to) = moved.to {
                    send_move.run((moved.block, to));
                }
                return;
            }
            if dragging.get_untracked() {
                dragging.set(false);
                if let Some(s) = selection.get_untracked() {
                    let s = spread.run(s);
                    selection.set(Some(s));
                    on_choose.run(s);
                }
            }
        };
        let handle = window_event_listener(leptos::ev::pointerup, move |_| finish_drag());
        on_cleanup(move || handle.remove());
    }
    let step = Duration::minutes(i64::from(data.pool.rules.granularity_minutes.max(1)));
    let head_days = data
        .days
        .iter()
        .map(|day| {
            let today = day.date == data.today;
            view! {
                <th scope="colgroup" colspan=kinds.to_string() class="day-head" class:today=today
                    aria-current=today.then_some("date")>{day.label.clone()}</th>
            }
        })
        .collect_view();
    let head_kinds = data
        .days
        .iter()
        .map(|_| {
            data.kinds
                .iter()
                .map(|k| {
                    view! {
                        <th scope="col" class="kind-head" title=k.kind.clone()>{k.short.clone()}</th>
                    }
                })
                .collect_view()
        })
        .collect_view();
    // The cells are HTML written at once (`cells`); the table hears what
    // happens in them, and `marks` draws what the signals say on them.
    // The page keeps the body written last (`cells::Written`).
    let body = expect_context::<cells::Written>().body(&data, step, start);
    #[cfg(feature = "hydrate")]
    marks(&data, selection, drag, focus);
    let hit = {
        let data = data.clone();
        move |ev: &leptos::ev::Event| target_cell(ev).and_then(|at| Some((at, cells::facts(&data, at, step)?)))
    };
    let (hit_over, hit_key) = (hit.clone(), hit.clone());
    view! {
        <div class="calendar-scroll" id="calendar-scroll">
            // Its cells are grid cells by the table's role (no role on each).
            <table class=format!("calendar {} days-{}", row_height(rows), data.days.len()) role="grid"
                aria-label="Bookings and free units per slot; select a window to book"
                on:pointerdown=move |ev| {
                    let Some(((d, k, i), cell)) = hit(&ev) else { return };
                    // A press on a booking's link opens it; it starts no selection.
                    if on_link(&ev) { return; }
                    if let Some(block) = cell.own {
                        ev.prevent_default();
                        focus.set((d, k, i));
                        let resize = on_class(&ev, "resize-handle");
                        // Grabbed where it is drawn; as long as it was last placed.
                        drag.set(Some(Drag { block: asked.current(block), grab: cell.at - block.start, resize, to: None }));
                        return;
                    }
                    if !cell.bookable { return; }
                    ev.prevent_default();
                    focus.set((d, k, i));
                    selection.set(Some(Selection::at(d, k, i)));
                    dragging.set(true);
                }
                on:pointerover=move |ev| {
                    let Some(((d, k, i), cell)) = hit_over(&ev) else { return };
                    if let Some(moving) = drag.get_untracked().filter(|g| g.block.kind == k) {
                        drag.set(Some(moving.over(cell.at, step)));
                        return;
                    }
                    if dragging.get_untracked() {
                        selection.update(|s| if let Some(s) = s.as_mut() {
                            if s.day == d && s.kind == k { *s = s.extend_to(i); }
                        });
                    }
                }
                on:keydown=move |ev| {
                    let Some((at, cell)) = hit_key(&ev) else { return };
                    if let Some(block) = cell.own.filter(|_| ev.alt_key()) {
                        move_by_key(&ev, asked.current(block), step, send_move, refocus);
                        return;
                    }
                    on_key(ev, at, focus, selection, (spread, on_choose))
                }
            >
                <thead>
                    <tr><th rowspan="2" scope="col" class="time">"Time"</th>{head_days}</tr>
                    <tr>{head_kinds}</tr>
                </thead>
                <tbody inner_html=body></tbody>
            </table>
        </div>
    }
}

/// The cell an event happened in (on it or on what it holds), by its id.
fn target_cell(ev: &leptos::ev::Event) -> Option<Focus> {
    use leptos::wasm_bindgen::JsCast;
    let element = ev.target()?.dyn_into::<leptos::web_sys::Element>().ok()?;
    let cell = element.closest("td.slot").ok()??;
    let at = cell.id().strip_prefix("cell-")?.split('-').map(|n| n.parse::<usize>().ok()).collect::<Vec<_>>();
    match at.as_slice() {
        [Some(d), Some(k), Some(i)] => Some((*d, *k, *i)),
        _ => None,
    }
}

/// What the signals say, drawn on the cells: the selection ("selected",
/// `aria-selected`), where a dragged booking would go ("move-target") and
/// which cell the keyboard reaches (`tabindex`). Each effect undoes what
/// it drew before.
#[cfg(feature = "hydrate")]
fn marks(
    data: &CalendarData,
    selection: RwSignal<Option<Selection>>,
    drag: RwSignal<Option<Drag>>,
    focus: RwSignal<Focus>,
) {
    use super::keys::cell_id;
    use leptos::tachys::dom::document;
    let each = |ids: &[String], f: &dyn Fn(&leptos::web_sys::Element)| {
        for id in ids {
            if let Some(cell) = document().get_element_by_id(id) {
                f(&cell);
            }
        }
    };
    let column_length: Vec<Vec<usize>> = data.cells.iter().map(|day| day.iter().map(Vec::len).collect()).collect();
    Effect::new(move |drawn: Option<Vec<String>>| {
        each(&drawn.unwrap_or_default(), &|cell| {
            let _ = cell.class_list().remove_1("selected");
            let _ = cell.set_attribute("aria-selected", "false");
        });
        let ids: Vec<String> = selection
            .get()
            .map(|s| {
                let (first, last) = s.range();
                let length = column_length.get(s.day).and_then(|d| d.get(s.kind)).copied().unwrap_or(0);
                (first..=last.min(length.saturating_sub(1))).map(|i| cell_id(s.day, s.kind, i)).collect()
            })
            .unwrap_or_default();
        each(&ids, &|cell| {
            let _ = cell.class_list().add_1("selected");
            let _ = cell.set_attribute("aria-selected", "true");
        });
        ids
    });
    let starts: Vec<Vec<DateTime<Utc>>> =
        data.days.iter().map(|day| day.slots.iter().map(|s| s.start).collect()).collect();
    Effect::new(move |drawn: Option<Vec<String>>| {
        each(&drawn.unwrap_or_default(), &|cell| {
            let _ = cell.class_list().remove_1("move-target");
        });
        let ids: Vec<String> = drag
            .get()
            .and_then(|g| g.to.map(|to| (g.block.kind, to)))
            .map(|(k, (from, to))| {
                starts
                    .iter()
                    .enumerate()
                    .flat_map(|(d, day)| {
                        day.iter()
                            .enumerate()
                            .filter(move |(_, at)| from <= **at && **at < to)
                            .map(move |(i, _)| cell_id(d, k, i))
                    })
                    .collect()
            })
            .unwrap_or_default();
        each(&ids, &|cell| {
            let _ = cell.class_list().add_1("move-target");
        });
        ids
    });
    Effect::new(move |before: Option<Focus>| {
        let now = focus.get();
        if let Some((d, k, i)) = before.filter(|b| *b != now) {
            each(&[cell_id(d, k, i)], &|cell| {
                let _ = cell.set_attribute("tabindex", "-1");
            });
        }
        each(&[cell_id(now.0, now.1, now.2)], &|cell| {
            let _ = cell.set_attribute("tabindex", "0");
        });
        now
    });
}

fn on_link(ev: &leptos::ev::PointerEvent) -> bool {
    use leptos::wasm_bindgen::JsCast;
    ev.target().and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok()).is_some_and(|e| e.tag_name() == "A")
}

fn on_class(ev: &leptos::ev::PointerEvent, class: &str) -> bool {
    use leptos::wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
        .is_some_and(|e| e.class_list().contains(class))
}

/// How tall a slot's row is drawn: a day stays about a screen and a half
/// tall whatever the pool's granularity (a class: `style/calendar.scss`).
fn row_height(slots_a_day: usize) -> &'static str {
    match slots_a_day {
        0..=24 => "rows-hours",
        25..=48 => "rows-halves",
        49..=96 => "rows-quarters",
        _ => "rows-fine",
    }
}
