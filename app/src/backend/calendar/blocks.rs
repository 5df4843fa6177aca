//! The blocks of the week and day views: each booking the viewer may see,
//! and each maintenance window, cut at midnight into one block per day and
//! lane, with overlapping blocks side by side as a calendar draws them.

use crate::model::{Blackout, BlockOwner, Booking, CalendarBlock, Day, PoolKind, UsedBar};
use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// More bookings side by side than this share the last column: past eight
/// a lane's blocks are too narrow to read, and the shade still says how
/// full it is.
const MOST_COLUMNS: u8 = 8;

/// Every block of `days`, ordered by day, lane and first slot.
pub fn blocks(
    days: &[Day],
    kinds: &[PoolKind],
    bookings: &[Booking],
    blackouts: &[Blackout],
    used: &HashMap<Uuid, UsedBar>,
    step: Duration,
) -> Vec<CalendarBlock> {
    let mut out = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        for b in bookings.iter().filter(|b| b.kind == kind.kind) {
            let block = CalendarBlock {
                kind: k,
                owner: if b.mine { BlockOwner::Mine } else { BlockOwner::Others },
                name: (!b.mine).then(|| b.user_name.clone()).flatten(),
                units: b.quantity,
                // Notes and pages are the owner's: others see occupancy.
                note: b
                    .mine
                    .then(|| b.note.as_deref().map(str::trim).unwrap_or_default().to_string())
                    .filter(|n| !n.is_empty()),
                state: b.state.as_str().to_string(),
                booking: b.mine.then_some(b.id),
                ..CalendarBlock::default()
            };
            let mut first = true;
            for mut piece in cut(days, b.start, b.end, step, block) {
                if first {
                    piece.used = used.get(&b.id).cloned();
                    first = false;
                }
                out.push(piece);
            }
        }
        for m in blackouts.iter().filter(|m| m.kind.as_ref().is_none_or(|only| *only == kind.kind)) {
            let block = CalendarBlock {
                kind: k,
                owner: BlockOwner::Maintenance,
                reason: Some(m.reason.clone()),
                ..CalendarBlock::default()
            };
            out.extend(cut(days, m.start, m.end, step, block));
        }
    }
    // Blocks that start and end together are ordered by who and how many,
    // not by the order rows came in: the same week draws the same way.
    fn key(b: &CalendarBlock) -> (usize, usize, usize, std::cmp::Reverse<usize>, Option<&str>, i32) {
        (b.day, b.kind, b.slot, std::cmp::Reverse(b.slots), b.name.as_deref(), b.units)
    }
    out.sort_by(|a, b| key(a).cmp(&key(b)));
    side_by_side(&mut out);
    out
}

/// `template` on each day the window `[start, end)` covers a slot of.
fn cut(
    days: &[Day],
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    step: Duration,
    template: CalendarBlock,
) -> Vec<CalendarBlock> {
    days.iter()
        .enumerate()
        .filter_map(|(d, day)| {
            // The slots are in order: the covered ones run from the first
            // that ends after `start` to the last that begins before `end`
            // (found by halving; a scan per block and day was a tenth of
            // the week's render with 500 bookings).
            let first = day.slots.partition_point(|s| s.start + step <= start);
            let last = day.slots.partition_point(|s| s.start < end).checked_sub(1).filter(|l| *l >= first)?;
            let day_start = day.slots.first()?.start;
            let day_end = day.slots.last()?.start + step;
            Some(CalendarBlock {
                day: d,
                slot: first,
                slots: last - first + 1,
                continued: start < day_start,
                continues: end > day_end,
                ..template.clone()
            })
        })
        .collect()
}

/// Columns for blocks sorted by day, lane and first slot: each takes the
/// first column free at its start; a group of blocks that overlap one
/// another, directly or through others, shares its number of columns.
fn side_by_side(blocks: &mut [CalendarBlock]) {
    let mut group_start = 0;
    // Where each column of the current group is busy until (slot index).
    let mut ends: Vec<usize> = Vec::new();
    for i in 0..=blocks.len() {
        let new_group = match blocks.get(i) {
            None => true,
            Some(b) => {
                let prev = group_start < i;
                prev && {
                    let g = &blocks[group_start];
                    (g.day, g.kind) != (b.day, b.kind) || ends.iter().all(|&end| end <= b.slot)
                }
            }
        };
        if new_group {
            let columns = (ends.len() as u8).clamp(1, MOST_COLUMNS);
            for b in &mut blocks[group_start..i] {
                b.columns = columns;
            }
            group_start = i;
            ends.clear();
        }
        let Some(b) = blocks.get_mut(i) else { break };
        let end = b.slot + b.slots;
        let column = match ends.iter().position(|&e| e <= b.slot) {
            Some(c) => {
                ends[c] = end;
                c
            }
            None => {
                ends.push(end);
                ends.len() - 1
            }
        };
        b.column = (column as u8).min(MOST_COLUMNS - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(day: usize, kind: usize, slot: usize, slots: usize) -> CalendarBlock {
        CalendarBlock { day, kind, slot, slots, ..CalendarBlock::default() }
    }

    fn layout(mut blocks: Vec<CalendarBlock>) -> Vec<(u8, u8)> {
        side_by_side(&mut blocks);
        blocks.iter().map(|b| (b.column, b.columns)).collect()
    }

    #[test]
    fn overlapping_blocks_sit_side_by_side_and_the_rest_take_the_whole_lane() {
        // 0–4 and 2–6 overlap; 6–8 follows them alone; another lane is apart.
        let blocks = vec![block(0, 0, 0, 4), block(0, 0, 2, 4), block(0, 0, 6, 2), block(0, 1, 1, 2)];
        assert_eq!(layout(blocks), vec![(0, 2), (1, 2), (0, 1), (0, 1)]);
    }

    #[test]
    fn a_group_chained_through_a_long_block_shares_its_columns() {
        // A long block 0–10 overlaps two short ones that do not overlap
        // each other: both short ones take the second column.
        let blocks = vec![block(0, 0, 0, 10), block(0, 0, 1, 2), block(0, 0, 5, 2)];
        assert_eq!(layout(blocks), vec![(0, 2), (1, 2), (1, 2)]);
    }

    #[test]
    fn past_eight_side_by_side_the_last_column_is_shared() {
        let blocks = (0..10).map(|_| block(2, 0, 0, 4)).collect();
        let columns = layout(blocks);
        assert!(columns.iter().all(|&(c, n)| c < 8 && n == 8), "{columns:?}");
        assert_eq!(columns[9], (7, 8));
    }

    #[test]
    fn a_window_over_midnight_is_a_block_on_each_day_marked_as_continuing() {
        use chrono::TimeZone;
        let step = Duration::hours(6);
        let day = |n: i64| {
            let start = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() + Duration::days(n);
            Day {
                date: start.date_naive(),
                label: String::new(),
                slots: (0..4)
                    .map(|i| crate::model::Slot { start: start + step * i, label: String::new(), bookable: true })
                    .collect(),
            }
        };
        let days = [day(0), day(1)];
        let from = days[0].slots[3].start;
        let pieces = cut(&days, from, from + Duration::hours(12), step, CalendarBlock::default());
        assert_eq!(pieces.len(), 2);
        assert_eq!((pieces[0].day, pieces[0].slot, pieces[0].slots), (0, 3, 1));
        assert!(!pieces[0].continued && pieces[0].continues);
        assert_eq!((pieces[1].day, pieces[1].slot, pieces[1].slots), (1, 0, 1));
        assert!(pieces[1].continued && !pieces[1].continues);
    }

    #[test]
    fn a_window_off_the_slots_covers_every_slot_it_touches_and_none_outside_the_days() {
        use chrono::TimeZone;
        let step = Duration::minutes(15);
        let start = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let days = [Day {
            date: start.date_naive(),
            label: String::new(),
            slots: (0..96)
                .map(|i| crate::model::Slot { start: start + step * i, label: String::new(), bookable: true })
                .collect(),
        }];
        let at = |minutes: i64| start + Duration::minutes(minutes);
        let span = |from: i64, to: i64| {
            cut(&days, at(from), at(to), step, CalendarBlock::default())
                .iter()
                .map(|b| (b.slot, b.slots))
                .collect::<Vec<_>>()
        };
        // 09:10–09:50 touches 09:00, 09:15, 09:30 and 09:45.
        assert_eq!(span(550, 590), vec![(36, 4)]);
        // Ending on a slot's start leaves that slot out.
        assert_eq!(span(540, 600), vec![(36, 4)]);
        // Before the day, after it, and a window of no length between two slots.
        assert_eq!(span(-120, -60), vec![]);
        assert_eq!(span(1500, 1560), vec![]);
        assert_eq!(span(555, 555), vec![]);
        // From before the day into its first slot.
        assert_eq!(span(-30, 5), vec![(0, 1)]);
    }
}
