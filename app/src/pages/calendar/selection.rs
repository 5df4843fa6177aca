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
