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

use super::block::block;
use super::data::MoveBooking;
use super::keys::{cell_id, first_bookable, move_by_key, on_key, MoveTo, Refocus};
use super::moves::AskedMoves;
use super::selection::Selection;
use crate::model::{BlockOwner, CalendarBlock, CalendarData, Movable};
use chrono::{DateTime, Duration, Utc};
use leptos::prelude::*;
use std::collections::HashMap;
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
            document.get_element_by_id(&cell_id(start.0, start.1, start.2)),
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
    // Each cell's blocks, found once rather than by a scan per cell (a week
    // has 96 rows of cells and may have hundreds of blocks).
    let mut starting = HashMap::<(usize, usize, usize), Vec<CalendarBlock>>::new();
    for b in &data.blocks {
        starting.entry((b.day, b.kind, b.slot)).or_default().push(b.clone());
    }
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
    let body = (0..rows)
        .map(|i| {
            let label = data.days.iter().find_map(|d| d.slots.get(i)).map(|s| s.label.clone()).unwrap_or_default();
            let hour_start = label.ends_with(":00");
            let tds =
                data.days
                    .iter()
                    .enumerate()
                    .map(|(d, day)| {
                        (0..kinds)
                            .map(|k| {
                                let Some(cell) = data.cells[d][k].get(i).cloned() else {
                                    return view! { <td class="slot gap"></td> }.into_any();
                                };
                                let slot = day.slots[i].clone();
                                let capacity = data.kinds[k].capacity;
                                let short = data.kinds[k].short.clone();
                                let now_at = now_line(slot.start, step, data.now);
                                // The blocks whose top is this cell: drawn from here down.
                                let here = starting.get(&(d, k, i)).map(Vec::as_slice).unwrap_or_default();
                                // The cell in words: its name, and its tooltip on hover and
                                // focus (`style/calendar.scss`).
                                let words = format!(
                                    "{} {}, {}: {} of {} free{}{}",
                                    day.label,
                                    slot.label,
                                    data.kinds[k].short,
                                    cell.free,
                                    capacity,
                                    match (&cell.blackout, cell.mine > 0) {
                                        (Some(reason), _) => format!(", closed for maintenance: {reason}"),
                                        (None, true) => format!(", yours: {}", cell.mine),
                                        (None, false) => String::new(),
                                    },
                                    if now_at.is_some() { ", now" } else { "" },
                                );
                                let named = here.iter().any(|b| b.owner != BlockOwner::Maintenance);
                                // A cell where bookings start is named by its content: its
                                // words, then each block's (an aria-label would hide the
                                // blocks' visible text from the name); the others by an
                                // aria-label.
                                let aria = (!named).then(|| words.clone());
                                let base = format!(
                                    "slot free-{}{}{}{}{}",
                                    level(cell.free, capacity),
                                    if cell.blackout.is_some() { " blackout" } else { "" },
                                    if slot.bookable { "" } else { " past" },
                                    if cell.mine > 0 { " mine" } else { "" },
                                    // Where in the slot the line runs, as a class (the
                                    // site's CSP refuses inline styles): 5 % steps.
                                    now_at.map(|at| format!(" now now-at-{}", at / 5 * 5)).unwrap_or_default(),
                                );
                                let bookable = slot.bookable && cell.free > 0;
                                // One's own booking under this slot that may still move, and
                                // whether its lower edge (the resize handle) is here.
                                let at = slot.start;
                                let own = data.movable.iter().find(|m| m.kind == k && m.start <= at && at < m.end).copied();
                                let edge = own.is_some_and(|m| m.end <= at + step);
                                let class = move || {
                                    let selected = selection.get().is_some_and(|s| s.contains(d, k, i));
                                    let target = drag.get().and_then(|g| g.to.filter(|_| g.block.kind == k))
                                        .is_some_and(|(from, to)| from <= at && at < to);
                                    format!(
                                        "{base}{}{}{}",
                                        if own.is_some() { " movable" } else { "" },
                                        if selected { " selected" } else { "" },
                                        if target { " move-target" } else { "" }
                                    )
                                };
                                view! {
                    <td
                        id=cell_id(d, k, i)
                        class=class
                        aria-label=aria
                        aria-selected=move || selection.get().is_some_and(|s| s.contains(d, k, i)).to_string()
                        tabindex=move || if focus.get() == (d, k, i) { "0" } else { "-1" }
                        on:pointerdown=move |ev| {
                            // A press on a booking's link opens it; it starts no selection.
                            if on_link(&ev) { return; }
                            if let Some(block) = own {
                                ev.prevent_default();
                                focus.set((d, k, i));
                                let resize = on_class(&ev, "resize-handle");
                                // Grabbed where it is drawn; as long as it was last placed.
                                drag.set(Some(Drag { block: asked.current(block), grab: at - block.start, resize, to: None }));
                                return;
                            }
                            if !bookable { return; }
                            ev.prevent_default();
                            focus.set((d, k, i));
                            selection.set(Some(Selection::at(d, k, i)));
                            dragging.set(true);
                        }
                        on:pointerover=move |_| {
                            if let Some(moving) = drag.get_untracked().filter(|g| g.block.kind == k) {
                                drag.set(Some(moving.over(at, step)));
                                return;
                            }
                            if dragging.get_untracked() {
                                selection.update(|s| if let Some(s) = s.as_mut() {
                                    if s.day == d && s.kind == k { *s = s.extend_to(i); }
                                });
                            }
                        }
                        on:keydown=move |ev| {
                            if let Some(block) = own.filter(|_| ev.alt_key()) {
                                move_by_key(&ev, asked.current(block), step, send_move, refocus);
                                return;
                            }
                            on_key(ev, (d, k, i), focus, selection, (spread, on_choose))
                        }
                    >
                        {named.then(|| view! { <span class="cell-words">{words}</span> })}
                        {here.iter().map(|b| block(b, &short)).collect_view()}
                        {edge.then(|| view! { <span class="resize-handle" title="Drag to change the end" aria-hidden="true"></span> })}
                    </td>
                }.into_any()
                            })
                            .collect_view()
                    })
                    .collect_view();
            view! {
                <tr class:hour=hour_start>
                    // Every row is named for screen readers; only the hours show.
                    <th scope="row" class="time">
                        {if hour_start || i == 0 {
                            view! { <span>{label}</span> }.into_any()
                        } else {
                            view! { <span class="visually-hidden">{label}</span> }.into_any()
                        }}
                    </th>
                    {tds}
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="calendar-scroll" id="calendar-scroll">
            // Its cells are grid cells by the table's role (no role on each).
            <table class=format!("calendar {} days-{}", row_height(rows), data.days.len()) role="grid"
                aria-label="Bookings and free units per slot; select a window to book">
                <thead>
                    <tr><th rowspan="2" scope="col" class="time">"Time"</th>{head_days}</tr>
                    <tr>{head_kinds}</tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
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

/// Where "now" falls inside a slot starting at `start`, in percent of its
/// height; `None` when it falls outside (the week view's red line).
fn now_line(start: DateTime<Utc>, step: Duration, now: DateTime<Utc>) -> Option<i64> {
    let into = now - start;
    (into >= Duration::zero() && into < step).then(|| into.num_seconds() * 100 / step.num_seconds().max(1))
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

/// How full a cell's lane is drawn: "all" free, "ok" (some booked),
/// "low" (a quarter or less free), or "none".
fn level(free: i32, capacity: i32) -> &'static str {
    if free <= 0 {
        "none"
    } else if free >= capacity {
        "all"
    } else if free * 4 <= capacity {
        "low"
    } else {
        "ok"
    }
}
