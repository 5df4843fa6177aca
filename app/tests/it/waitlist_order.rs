//! Waitlist ordering: entries decided in the order they joined through the
//! admission ledger, against brute-force references on random schedules.

use app::rules::capacity::{Ledger, Usage};
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

fn at(slot: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::minutes(15 * slot)
}

fn usage_at(usages: &[Usage], slot: i64) -> i32 {
    usages.iter().filter(|u| u.start <= at(slot) && at(slot) < u.end).map(|u| u.quantity).sum()
}

fn usages(max: usize) -> impl Strategy<Value = Vec<Usage>> {
    // Few distinct shapes, so identical entries (where FIFO is strict) are common.
    prop::collection::vec((0i64..6, 1i64..5, 1i32..3), 0..max).prop_map(|v| {
        v.into_iter().map(|(s, len, q)| Usage { start: at(s * 2), end: at(s * 2 + len * 2), quantity: q }).collect()
    })
}

/// What promotion does with one kind's waiting entries.
fn promote(capacity: i32, held: &[Usage], entries: &[Usage]) -> Vec<bool> {
    let mut ledger = Ledger::new(capacity, held.to_vec());
    entries
        .iter()
        .map(|&entry| {
            let fits = ledger.check(entry).is_ok();
            if fits {
                ledger.take(entry);
            }
            fits
        })
        .collect()
}

proptest! {
    #[test]
    fn each_entry_is_admitted_exactly_when_it_fits_after_the_earlier_ones(
        capacity in 1i32..6, held in usages(6), entries in usages(12),
    ) {
        let admitted = promote(capacity, &held, &entries);
        let mut taken = held.clone();
        for (entry, &was) in entries.iter().zip(&admitted) {
            // Brute force: every slot of its window has room after what was taken before it.
            let slots = (entry.end - entry.start).num_minutes() / 15;
            let first = (entry.start - at(0)).num_minutes() / 15;
            let fits = (first..first + slots).all(|s| usage_at(&taken, s) + entry.quantity <= capacity);
            prop_assert_eq!(was, fits);
            if fits {
                taken.push(*entry);
            }
        }
        // Nothing admitted breaks capacity where the held bookings did not already.
        for slot in 0..40 {
            let before = usage_at(&held, slot);
            prop_assert!(usage_at(&taken, slot) <= capacity.max(before));
        }
    }

    #[test]
    fn identical_entries_are_admitted_first_come_first_served(
        capacity in 1i32..6, held in usages(6), entries in usages(12),
    ) {
        let admitted = promote(capacity, &held, &entries);
        for (i, a) in entries.iter().enumerate() {
            for (j, b) in entries.iter().enumerate().skip(i + 1) {
                if a == b {
                    prop_assert!(admitted[i] || !admitted[j], "entry {j} admitted before the identical entry {i}");
                }
            }
        }
        // A skipped entry would still not fit once promotion is over: no room is left unused.
        let mut ledger = Ledger::new(capacity, held.clone());
        for (entry, &was) in entries.iter().zip(&admitted) {
            if was {
                ledger.take(*entry);
            }
        }
        for (entry, &was) in entries.iter().zip(&admitted) {
            prop_assert!(was || ledger.check(*entry).is_err());
        }
    }
}
