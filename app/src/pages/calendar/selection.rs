//! A selected window in one calendar column (a day and a kind): from the
//! slot where the drag (or shift+arrow) began to where it is now.

use crate::model::{Cell, Slot};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub day: usize,
    pub kind: usize,
    pub anchor: usize,
    pub head: usize,
}

impl Selection {
    pub fn at(day: usize, kind: usize, slot: usize) -> Self {
        Self { day, kind, anchor: slot, head: slot }
    }

    /// First and last selected slot, inclusive.
    pub fn range(&self) -> (usize, usize) {
        (self.anchor.min(self.head), self.anchor.max(self.head))
    }

    pub fn contains(&self, day: usize, kind: usize, slot: usize) -> bool {
        let (first, last) = self.range();
        self.day == day && self.kind == kind && (first..=last).contains(&slot)
    }

    /// Moves the moving end to `slot` in the same column.
    pub fn extend_to(self, slot: usize) -> Self {
        Self { head: slot, ..self }
    }

    /// A click's window: from a single slot on, up to `slots` slots (the
    /// pool's default length), cut short where the column stops being free
    /// and bookable, as a calendar's quick event. A drawn selection stays.
    pub fn spread(self, slots: usize, column: &[Cell], times: &[Slot]) -> Self {
        if self.anchor != self.head {
            return self;
        }
        let open = |i: usize| column.get(i).is_some_and(|c| c.free > 0) && times.get(i).is_some_and(|s| s.bookable);
        let last = (self.anchor..self.anchor + slots.max(1)).take_while(|&i| open(i)).last().unwrap_or(self.anchor);
        self.extend_to(last)
    }

    /// The most units free in every selected slot, or 0 when any selected
    /// slot cannot be booked.
    pub fn max_quantity(&self, column: &[Cell], slots: &[Slot]) -> i32 {
        let (first, last) = self.range();
        if last >= column.len() || last >= slots.len() {
            return 0;
        }
        (first..=last).map(|i| if slots[i].bookable { column[i].free } else { 0 }).min().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(cells: &[(i32, bool)]) -> (Vec<Cell>, Vec<Slot>) {
        let at = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        cells
            .iter()
            .map(|(free, bookable)| {
                (
                    Cell { free: *free, ..Cell::default() },
                    Slot { start: at, label: "00:00".into(), bookable: *bookable },
                )
            })
            .unzip()
    }

    #[test]
    fn a_selection_spans_both_directions_within_its_column() {
        let s = Selection::at(2, 1, 10).extend_to(7);
        assert_eq!(s.range(), (7, 10));
        assert!(s.contains(2, 1, 7) && s.contains(2, 1, 10));
        assert!(!s.contains(2, 0, 8) && !s.contains(3, 1, 8) && !s.contains(2, 1, 11));
    }

    #[test]
    fn a_click_spreads_to_the_default_length_within_what_is_free() {
        let (cells, slots) = column(&[(1, false), (2, true), (2, true), (2, true), (2, true), (2, true), (0, true)]);
        // An hour of 15-minute slots from slot 1.
        assert_eq!(Selection::at(0, 0, 1).spread(4, &cells, &slots).range(), (1, 4));
        // Cut short where nothing is free, and at the column's end.
        assert_eq!(Selection::at(0, 0, 3).spread(4, &cells, &slots).range(), (3, 5));
        assert_eq!(Selection::at(0, 0, 5).spread(8, &cells[..6], &slots[..6]).range(), (5, 5));
        // A drawn window is kept as drawn.
        assert_eq!(Selection::at(0, 0, 1).extend_to(2).spread(4, &cells, &slots).range(), (1, 2));
    }

    #[test]
    fn only_what_is_free_across_the_whole_window_is_offered() {
        let (cells, slots) = column(&[(4, true), (2, true), (3, true), (4, false)]);
        assert_eq!(Selection::at(0, 0, 0).extend_to(2).max_quantity(&cells, &slots), 2);
        assert_eq!(Selection::at(0, 0, 0).max_quantity(&cells, &slots), 4);
        assert_eq!(
            Selection::at(0, 0, 2).extend_to(3).max_quantity(&cells, &slots),
            0,
            "a past slot blocks the window"
        );
        assert_eq!(Selection::at(0, 0, 9).max_quantity(&cells, &slots), 0, "outside the column");
    }
}
