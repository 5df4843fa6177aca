//! Where one's moves have put a booking, ahead of the calendar's data.
//! The grid is drawn again only when its data is fetched after a move's
//! answer; a second move made before that (a resize, then alt+down at once)
//! must start from where the first left the booking, not from the drawn
//! block, or it quietly undoes the first.

use crate::model::{Movable, MoveOutcome};
use crate::rpc::RpcError;
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use uuid::Uuid;

type Window = (DateTime<Utc>, DateTime<Utc>);

/// The last window asked for one booking, and the windows it has left
/// since: while the grid still draws one of those, the booking is at `to`.
#[derive(Clone, Debug, PartialEq)]
struct Asked {
    id: Uuid,
    left: Vec<Window>,
    to: Window,
}

/// Held by the page, so it outlives the grid that each fetch rebuilds.
#[derive(Clone, Copy)]
pub struct AskedMoves(RwSignal<Option<Asked>>);

impl Default for AskedMoves {
    fn default() -> Self {
        Self(RwSignal::new(None))
    }
}

impl AskedMoves {
    /// The booking as the viewer last placed it: the drawn block, unless a
    /// move of it was asked since this drawing.
    pub fn current(self, drawn: Movable) -> Movable {
        self.0.with_untracked(|asked| placed(asked.as_ref(), drawn))
    }

    /// A move of `from` (the booking as `current` gave it) to `to` is sent.
    pub fn ask(self, from: Movable, to: Window) {
        self.0.update(|asked| *asked = Some(asking(asked.take(), from, to)));
    }

    /// A move was answered: a refusal (or a failure) leaves the booking
    /// where the next drawing shows it, so what was asked is forgotten.
    pub fn answered(self, answer: &Result<MoveOutcome, RpcError>) {
        if !matches!(answer, Ok(MoveOutcome::Moved { .. })) {
            self.0.set(None);
        }
    }
}

fn placed(asked: Option<&Asked>, drawn: Movable) -> Movable {
    match asked {
        Some(a) if a.id == drawn.id && a.left.contains(&(drawn.start, drawn.end)) => {
            Movable { start: a.to.0, end: a.to.1, ..drawn }
        }
        _ => drawn,
    }
}

fn asking(before: Option<Asked>, from: Movable, to: Window) -> Asked {
    let was = (from.start, from.end);
    let mut left = match before {
        // A chain of moves: every window on the way has been left.
        Some(a) if a.id == from.id && a.to == was => a.left,
        _ => Vec::new(),
    };
    left.push(was);
    // Moved back to a window it had left: that one is where it is again.
    left.retain(|w| *w != to);
    Asked { id: from.id, left, to }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 7, h, m, 0).unwrap()
    }

    fn block(start: DateTime<Utc>, end: DateTime<Utc>) -> Movable {
        Movable { id: Uuid::nil(), kind: 0, start, end }
    }

    #[test]
    fn a_second_move_before_the_grid_is_drawn_again_starts_where_the_first_left_it() {
        let drawn = block(at(12, 0), at(13, 0));
        // Resized to 13:45; the grid still draws 12:00-13:00.
        let asked = asking(None, drawn, (at(12, 0), at(13, 45)));
        let now = placed(Some(&asked), drawn);
        assert_eq!((now.start, now.end), (at(12, 0), at(13, 45)));
        // Alt+down from there; the grid has meanwhile drawn the resize.
        let asked = asking(Some(asked), now, (at(12, 15), at(14, 0)));
        let resized = block(at(12, 0), at(13, 45));
        assert_eq!(placed(Some(&asked), resized).end, at(14, 0));
        assert_eq!(placed(Some(&asked), drawn).start, at(12, 15));
        // Once the grid draws where it was asked to go, the drawing is the truth.
        let there = block(at(12, 15), at(14, 0));
        assert_eq!(placed(Some(&asked), there), there);
        // So is any other window: moved by someone else meanwhile.
        let elsewhere = block(at(9, 0), at(10, 0));
        assert_eq!(placed(Some(&asked), elsewhere), elsewhere);
    }

    #[test]
    fn a_move_back_to_where_it_was_leaves_the_drawing_in_charge() {
        let drawn = block(at(12, 0), at(13, 0));
        let asked = asking(None, drawn, (at(14, 0), at(15, 0)));
        let back = asking(Some(asked), block(at(14, 0), at(15, 0)), (at(12, 0), at(13, 0)));
        assert_eq!(placed(Some(&back), drawn), drawn);
        assert_eq!(placed(Some(&back), block(at(14, 0), at(15, 0))).start, at(12, 0));
    }

    #[test]
    fn another_booking_is_not_touched() {
        let asked = asking(None, block(at(12, 0), at(13, 0)), (at(14, 0), at(15, 0)));
        let other = Movable { id: Uuid::from_u128(7), ..block(at(12, 0), at(13, 0)) };
        assert_eq!(placed(Some(&asked), other), other);
    }
}
