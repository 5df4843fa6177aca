//! Peak, admission, free steps and next-free against brute-force references on
//! random interval sets.

use app::model::Window;
use app::rules::capacity::{fits, free_steps, next_free, peak_usage, Usage};
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

fn at(slot: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::minutes(15 * slot)
}

fn window(a: i64, b: i64) -> Window {
    Window { start: at(a), end: at(b) }
}

/// Usage at one instant, by definition: the sum over windows containing it.
fn usage_at(usages: &[Usage], t: DateTime<Utc>) -> i32 {
    usages.iter().filter(|u| u.start <= t && t < u.end).map(|u| u.quantity).sum()
}

/// Reference peak: check every slot of the window one by one (all inputs are slot-aligned).
fn brute_peak(usages: &[Usage], a: i64, b: i64) -> i32 {
    (a..b).map(|s| usage_at(usages, at(s))).max().unwrap_or(0)
}

fn usages_strategy() -> impl Strategy<Value = Vec<Usage>> {
    prop::collection::vec((0i64..40, 1i64..12, 1i32..4), 0..25)
        .prop_map(|v| v.into_iter().map(|(s, len, q)| Usage { start: at(s), end: at(s + len), quantity: q }).collect())
}

proptest! {
    #[test]
    fn peak_matches_brute_force(usages in usages_strategy(), a in 0i64..50, len in 1i64..20) {
        prop_assert_eq!(peak_usage(&usages, window(a, a + len)), brute_peak(&usages, a, a + len));
    }

    #[test]
    fn admission_keeps_every_instant_within_capacity(
        requests in prop::collection::vec((0i64..40, 1i64..12, 1i32..4), 1..40),
        capacity in 1i32..6,
    ) {
        let mut admitted: Vec<Usage> = Vec::new();
        for (s, len, q) in requests {
            let candidate = Usage { start: at(s), end: at(s + len), quantity: q };
            let admit = fits(&admitted, capacity, window(s, s + len), q);
            // Reference: admitting must not push any instant over capacity, and a
            // refusal must mean some instant really would overflow.
            let mut with = admitted.clone();
            with.push(candidate);
            let would_fit = (s..s + len).all(|slot| usage_at(&with, at(slot)) <= capacity);
            prop_assert_eq!(admit, would_fit);
            if admit {
                admitted = with;
            }
        }
        for slot in 0..60 {
            prop_assert!(usage_at(&admitted, at(slot)) <= capacity);
        }
    }

    #[test]
    fn free_steps_cover_the_window_and_match_each_slot(
        usages in usages_strategy(), a in 0i64..50, len in 1i64..20, capacity in 0i32..10,
    ) {
        let steps = free_steps(&usages, capacity, window(a, a + len));
        prop_assert_eq!(steps.first().map(|s| s.start), Some(at(a)));
        prop_assert_eq!(steps.last().map(|s| s.end), Some(at(a + len)));
        for pair in steps.windows(2) {
            prop_assert_eq!(pair[0].end, pair[1].start);
            prop_assert_ne!(pair[0].free, pair[1].free, "equal neighbours must be merged");
        }
        for slot in a..a + len {
            let step = steps.iter().find(|s| s.start <= at(slot) && at(slot) < s.end).unwrap();
            prop_assert_eq!(step.free, capacity - usage_at(&usages, at(slot)));
        }
    }

    #[test]
    fn next_free_is_the_earliest_fitting_slot(
        usages in usages_strategy(), earliest in 0i64..30, len in 1i64..8, q in 1i32..4, capacity in 1i32..6,
    ) {
        let latest = 70;
        let found = next_free(&usages, capacity, q, Duration::minutes(15 * len), at(earliest), at(latest), Duration::minutes(15));
        let reference = (earliest..=latest - len)
            .find(|&s| (s..s + len).all(|slot| usage_at(&usages, at(slot)) + q <= capacity))
            .map(|s| window(s, s + len));
        prop_assert_eq!(found, reference);
    }
}

#[test]
fn back_to_back_full_bookings_both_fit_inside_a_longer_span() {
    let capacity = 4;
    let first = Usage { start: at(0), end: at(4), quantity: 4 };
    // The sum of overlapping bookings would be 4 + 4 = 8 > 4; the peak is 4.
    assert!(fits(&[first], capacity, window(4, 8), 4));
    let second = Usage { start: at(4), end: at(8), quantity: 4 };
    assert_eq!(peak_usage(&[first, second], window(0, 8)), 4);
    assert!(!fits(&[first, second], capacity, window(3, 5), 1));
}
