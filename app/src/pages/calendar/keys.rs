//! The calendar's keyboard: arrows move the focus from cell to cell,
//! shift+arrows grow the selection, Enter books it; alt+arrows move one's
//! own booking (with shift: resize it), and the focus follows it.

use super::selection::Selection;
use crate::model::{CalendarData, Movable};
use chrono::{DateTime, Duration, Utc};
use leptos::prelude::*;

/// One's booking and the window it is asked to move to.
pub(super) type MoveTo = (Movable, (DateTime<Utc>, DateTime<Utc>));

/// The cell (kind, slot start) a keyboard move left its booking at: the
/// grid, rebuilt with the moved booking, gives it the focus back.
#[derive(Clone, Copy)]
pub struct Refocus(pub RwSignal<Option<(usize, DateTime<Utc>)>>);

/// Where keyboard focus sits: (day, kind, slot).
pub type Focus = (usize, usize, usize);

/// Alt+up/down moves one's booking a slot earlier or later; with shift, its
/// end only (a slot shorter or longer). The focus follows the booking.
pub(super) fn move_by_key(
    ev: &leptos::ev::KeyboardEvent,
    block: Movable,
    step: Duration,
    send_move: Callback<MoveTo>,
    refocus: Option<Refocus>,
) {
    let delta = match ev.key().as_str() {
        "ArrowUp" => -step,
        "ArrowDown" => step,
        _ => return,
    };
    ev.prevent_default();
    let to = if ev.shift_key() { (block.start, block.end + delta) } else { (block.start + delta, block.end + delta) };
    if to.1 <= to.0 {
        return;
    }
    if let Some(refocus) = refocus {
        refocus.0.set(Some((block.kind, to.0)));
    }
    send_move.run((block, to));
}

pub fn cell_id(day: usize, kind: usize, slot: usize) -> String {
    format!("cell-{day}-{kind}-{slot}")
}

/// Where the grid opens: the first slot that can be booked, but not before
/// the working day starts (07:00) on the first day that has one; a
/// calendar opens on the morning, not at midnight.
pub(super) fn first_bookable(data: &CalendarData) -> Option<Focus> {
    data.days.iter().enumerate().find_map(|(d, day)| {
        let morning = day.slots.iter().position(|s| s.bookable && s.label.as_str() >= "07:00");
        morning.or_else(|| day.slots.iter().position(|s| s.bookable)).map(|i| (d, 0, i))
    })
}

/// Arrows move the focus; shift+up/down grow or shrink the selection in the
/// focused column; Enter books the selection, or the pool's default length
/// from the focused slot (as a click does).
pub(super) fn on_key(
    ev: leptos::ev::KeyboardEvent,
    (d, k, i): Focus,
    focus: RwSignal<Focus>,
    selection: RwSignal<Option<Selection>>,
    (spread, on_choose): (Callback<Selection, Selection>, Callback<Selection>),
) {
    let target = match ev.key().as_str() {
        "ArrowUp" => Some((d, k, i.saturating_sub(1))),
        "ArrowDown" => Some((d, k, i + 1)),
        "ArrowLeft" => Some(if k > 0 { (d, k - 1, i) } else { (d.saturating_sub(1), k, i) }),
        "ArrowRight" => Some((d, k + 1, i)),
        "Enter" | " " => {
            ev.prevent_default();
            let chosen = selection
                .get_untracked()
                .filter(|s| s.contains(d, k, i) && s.anchor != s.head)
                .unwrap_or_else(|| spread.run(Selection::at(d, k, i)));
            selection.set(Some(chosen));
            on_choose.run(chosen);
            None
        }
        _ => None,
    };
    let Some((nd, nk, ni)) = target else { return };
    ev.prevent_default();
    if !move_focus(nd, nk, ni) {
        // Past the last kind of a day: on to the next day's first kind.
        if ev.key() == "ArrowRight" && move_focus(d + 1, 0, i) {
            focus.set((d + 1, 0, i));
        }
        return;
    }
    focus.set((nd, nk, ni));
    if ev.shift_key() && nd == d && nk == k {
        selection.update(|s| {
            let current = s.filter(|s| s.day == d && s.kind == k).unwrap_or(Selection::at(d, k, i));
            *s = Some(current.extend_to(ni));
        });
    }
}

/// Focuses a cell if it exists.
fn move_focus(day: usize, kind: usize, slot: usize) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let element = leptos::tachys::dom::document()
            .get_element_by_id(&cell_id(day, kind, slot))
            .and_then(|e| e.dyn_into::<leptos::web_sys::HtmlElement>().ok());
        if let Some(element) = element {
            let _ = element.focus();
            return true;
        }
        false
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (day, kind, slot);
        false
    }
}
