//! Tenant quotas against brute force: the concurrency limit against the
//! units held slot by slot, the weekly limit against unit-minutes summed slot
//! by slot inside weeks found by walking local dates; ISO weeks across DST.

use app::model::{QuotaLimit, TenantQuota, Window};
use app::rules::capacity::Usage;
use app::rules::quota::{check, iso_week_of, iso_weeks, unit_minutes};
use chrono::{DateTime, Datelike, Duration, TimeZone, Utc, Weekday};
use chrono_tz::Europe::Berlin;
use proptest::prelude::*;

/// Slots of one hour from Monday 2026-03-23 00:00 Berlin (a week before DST starts).
fn at(slot: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 22, 23, 0, 0).unwrap() + Duration::hours(slot)
}

fn usage(start: i64, len: i64, quantity: i32) -> Usage {
    Usage { start: at(start), end: at(start + len), quantity }
}

fn held_at(usages: &[Usage], t: DateTime<Utc>) -> i32 {
    usages.iter().filter(|u| u.start <= t && t < u.end).map(|u| u.quantity).sum()
}

/// Reference check, one hour slot at a time; a week is an ISO year and week number in Berlin.
fn brute_check(quota: &TenantQuota, usages: &[Usage], request: Usage) -> Option<QuotaLimit> {
    let slots: Vec<DateTime<Utc>> =
        (0..).map(|h| request.start + Duration::hours(h)).take_while(|t| *t < request.end).collect();
    if let Some(max) = quota.max_units {
        let peak = slots.iter().map(|t| held_at(usages, *t)).max().unwrap_or(0);
        if peak + request.quantity > max {
            return Some(QuotaLimit::MaxUnits);
        }
    }
    if let Some(weekly) = quota.gpu_hours_per_week {
        let mut all = usages.to_vec();
        all.push(request);
        // Unit-minutes per ISO week, summing every hour slot of the span.
        let mut per_week: std::collections::HashMap<chrono::IsoWeek, i64> = Default::default();
        for h in -24 * 14..24 * 35 {
            let slot = at(h);
            *per_week.entry(slot.with_timezone(&Berlin).iso_week()).or_default() += i64::from(held_at(&all, slot)) * 60;
        }
        let limit = (weekly * 60.0).round() as i64;
        if slots.iter().any(|t| per_week[&t.with_timezone(&Berlin).iso_week()] > limit) {
            return Some(QuotaLimit::GpuHoursPerWeek);
        }
    }
    None
}

fn usages_strategy() -> impl Strategy<Value = Vec<Usage>> {
    prop::collection::vec((0i64..400, 1i64..60, 1i32..4), 0..12)
        .prop_map(|v| v.into_iter().map(|(s, len, q)| usage(s, len, q)).collect())
}

fn quota_strategy() -> impl Strategy<Value = TenantQuota> {
    (prop::option::of(1i32..8), prop::option::of(0u32..300))
        .prop_map(|(max_units, hours)| TenantQuota { max_units, gpu_hours_per_week: hours.map(f64::from) })
}

proptest! {
    #[test]
    fn quota_check_matches_brute_force(
        quota in quota_strategy(),
        usages in usages_strategy(),
        (start, len, quantity) in (0i64..400, 1i64..100, 1i32..4),
    ) {
        let request = usage(start, len, quantity);
        let decided = check(&quota, 1, &usages, request, &Berlin).err().map(|refusal| refusal.limit);
        prop_assert_eq!(decided, brute_check(&quota, &usages, request));
    }

    #[test]
    fn a_refusal_reports_what_is_used_and_left(
        quota in quota_strategy(),
        usages in usages_strategy(),
        (start, len, quantity) in (0i64..400, 1i64..100, 1i32..4),
    ) {
        let request = usage(start, len, quantity);
        if let Err(refusal) = check(&quota, 1, &usages, request, &Berlin) {
            prop_assert!((refusal.used + refusal.left - refusal.allowed).abs() < 0.01 || refusal.used > refusal.allowed);
            if let Some(week) = refusal.week {
                prop_assert!((refusal.used * 60.0 - unit_minutes(&usages, week) as f64).abs() < 1.0);
            }
        }
    }

    #[test]
    fn weeks_cover_a_window_without_gaps(start in 0i64..2000, len in 1i64..800) {
        let window = Window { start: at(start), end: at(start + len) };
        let weeks = iso_weeks(window, &Berlin);
        prop_assert!(weeks[0].start <= window.start && weeks.last().unwrap().end >= window.end);
        for pair in weeks.windows(2) {
            prop_assert_eq!(pair[0].end, pair[1].start);
        }
        for week in &weeks {
            let local = week.start.with_timezone(&Berlin);
            prop_assert_eq!(local.weekday(), Weekday::Mon);
            prop_assert_eq!(local.format("%H:%M").to_string(), "00:00");
        }
    }
}

#[test]
fn the_week_dst_starts_in_has_167_hours_and_the_one_it_ends_in_169() {
    let spring = iso_week_of(Utc.with_ymd_and_hms(2026, 3, 29, 12, 0, 0).unwrap(), &Berlin);
    assert_eq!(spring.start, Utc.with_ymd_and_hms(2026, 3, 22, 23, 0, 0).unwrap());
    assert_eq!(spring.end, Utc.with_ymd_and_hms(2026, 3, 29, 22, 0, 0).unwrap());
    assert_eq!((spring.end - spring.start).num_hours(), 167);
    let autumn = iso_week_of(Utc.with_ymd_and_hms(2026, 10, 25, 12, 0, 0).unwrap(), &Berlin);
    assert_eq!((autumn.end - autumn.start).num_hours(), 169);
}

#[test]
fn sunday_night_local_belongs_to_the_week_that_ends_at_monday_midnight() {
    // 23:30 Sunday in Berlin is 21:30 UTC in summer: still the old week.
    let sunday = Utc.with_ymd_and_hms(2026, 6, 14, 21, 30, 0).unwrap();
    let monday = Utc.with_ymd_and_hms(2026, 6, 14, 22, 0, 0).unwrap();
    assert_eq!(iso_week_of(sunday, &Berlin).end, monday);
    assert_eq!(iso_week_of(monday, &Berlin).start, monday);
}

#[test]
fn a_weekly_refusal_names_the_week_and_the_hours_left() {
    let quota = TenantQuota { max_units: None, gpu_hours_per_week: Some(10.0) };
    let booked = [usage(0, 8, 1)];
    let refusal = check(&quota, 1, &booked, usage(30, 3, 1), &Berlin).unwrap_err();
    assert_eq!((refusal.limit, refusal.used, refusal.left), (QuotaLimit::GpuHoursPerWeek, 8.0, 2.0));
    assert!(refusal.explain().contains("2 left"), "{}", refusal.explain());
    assert!(check(&quota, 1, &booked, usage(30, 2, 1), &Berlin).is_ok());
}

#[test]
fn a_weekly_quota_counts_a_slice_as_its_share_of_a_gpu() {
    // Four 1g.24gb slices fill a GPU: 10 GPU-hours are 40 slice-hours.
    let quota = TenantQuota { max_units: None, gpu_hours_per_week: Some(10.0) };
    let booked = [usage(0, 8, 4)]; // 32 slice-hours = 8 GPU-hours
    let refusal = check(&quota, 4, &booked, usage(30, 3, 4), &Berlin).unwrap_err();
    assert_eq!((refusal.used, refusal.left), (8.0, 2.0));
    assert!(check(&quota, 4, &booked, usage(30, 2, 4), &Berlin).is_ok());
}
