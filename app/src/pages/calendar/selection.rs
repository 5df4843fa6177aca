//! A selected window in one calendar column (a day and a kind): from the
//! slot where the drag (or shift+arrow) began to where it is now.

use super::cells::Cell;

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
    pub fn max_quantity(&self, column: &[Cell]) -> i32 {
        let (first, last) = self.range();
        column
            .get(first..=last.min(column.len().saturating_sub(1)))
            .unwrap_or(&[])
            .iter()
            .map(|c| if c.bookable { c.free } else { 0 })
            .min()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(free: i32, bookable: bool) -> Cell {
        Cell { free, capacity: 4, bookable, ..Cell::default() }
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
        let column = [cell(4, true), cell(2, true), cell(3, true), cell(4, false)];
        assert_eq!(Selection::at(0, 0, 0).extend_to(2).max_quantity(&column), 2);
        assert_eq!(Selection::at(0, 0, 0).max_quantity(&column), 4);
        assert_eq!(Selection::at(0, 0, 2).extend_to(3).max_quantity(&column), 0, "a past slot blocks the window");
        assert_eq!(Selection::at(0, 0, 9).max_quantity(&column), 0, "outside the column");
    }
}
