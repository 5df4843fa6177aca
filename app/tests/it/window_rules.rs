//! Window validation edge cases.

use app::model::{PoolRules, Window};
use app::rules::window::{validate_extension, validate_new};
use app::rules::FieldError;
use chrono::{DateTime, Duration, TimeZone, Utc};
use chrono_tz::{Asia::Kathmandu, Europe::Berlin};

fn utc(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, h, m, 0).unwrap()
}

fn rules() -> PoolRules {
    PoolRules { granularity_minutes: 15, max_booking_minutes: 120, horizon_days: 14, min_notice_minutes: 0 }
}

fn check(now: DateTime<Utc>, start: DateTime<Utc>, end: DateTime<Utc>, quantity: i32) -> Result<(), FieldError> {
    validate_new(&rules(), 4, now, Window { start, end }, quantity)
}

fn field_of(result: Result<(), FieldError>) -> String {
    result.expect_err("must be refused").field
}

#[test]
fn a_window_may_start_in_the_current_slot() {
    assert_eq!(check(utc(10, 7), utc(10, 0), utc(11, 0), 1), Ok(()));
}

#[test]
fn a_window_before_the_current_slot_is_in_the_past() {
    let err = check(utc(10, 7), utc(9, 45), utc(11, 0), 1).unwrap_err();
    assert_eq!((err.field.as_str(), err.reason.as_str()), ("start", "is in the past"));
}

#[test]
fn minimum_notice_is_enforced_from_the_next_boundary() {
    let rules = PoolRules { min_notice_minutes: 60, ..rules() };
    let now = utc(10, 7);
    let ok = Window { start: utc(11, 15), end: utc(12, 0) };
    let early = Window { start: utc(11, 0), end: utc(12, 0) };
    assert_eq!(validate_new(&rules, 4, now, ok, 1), Ok(()));
    assert!(validate_new(&rules, 4, now, early, 1).unwrap_err().reason.contains("notice"));
}

#[test]
fn zero_and_negative_lengths_are_refused_on_end() {
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(10, 0), 1)), "end");
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(9, 0), 1)), "end");
}

#[test]
fn unaligned_start_or_end_is_refused() {
    assert_eq!(field_of(check(utc(8, 0), utc(10, 5), utc(11, 0), 1)), "start");
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(10, 50), 1)), "end");
    let second = utc(10, 0) + Duration::seconds(1);
    assert_eq!(field_of(check(utc(8, 0), second, utc(11, 0), 1)), "start");
}

#[test]
fn quantity_must_be_between_one_and_capacity() {
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(11, 0), 0)), "quantity");
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(11, 0), -2)), "quantity");
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(11, 0), 5)), "quantity");
    assert_eq!(check(utc(8, 0), utc(10, 0), utc(11, 0), 4), Ok(()));
}

#[test]
fn max_length_is_inclusive() {
    assert_eq!(check(utc(8, 0), utc(10, 0), utc(12, 0), 1), Ok(()));
    assert_eq!(field_of(check(utc(8, 0), utc(10, 0), utc(12, 15), 1)), "end");
}

#[test]
fn horizon_limits_the_end() {
    let now = utc(8, 0);
    let last = now + Duration::days(14);
    assert_eq!(check(now, last - Duration::hours(1), last, 1), Ok(()));
    let beyond = check(now, last - Duration::minutes(45), last + Duration::minutes(15), 1);
    assert!(beyond.unwrap_err().reason.contains("horizon"));
}

#[test]
fn touching_windows_are_each_valid() {
    assert_eq!(check(utc(8, 0), utc(10, 0), utc(11, 0), 1), Ok(()));
    assert_eq!(check(utc(8, 0), utc(11, 0), utc(12, 0), 1), Ok(()));
}

#[test]
fn spring_forward_window_is_measured_in_real_time() {
    // 01:00–04:00 Berlin wall clock on 2026-03-29 is only two real hours.
    let start = Berlin.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap().with_timezone(&Utc);
    let end = Berlin.with_ymd_and_hms(2026, 3, 29, 4, 0, 0).unwrap().with_timezone(&Utc);
    assert_eq!(end - start, Duration::hours(2));
    let now = start - Duration::days(1);
    assert_eq!(validate_new(&rules(), 4, now, Window { start, end }, 1), Ok(()));
}

#[test]
fn fall_back_window_is_measured_in_real_time() {
    // 01:00–03:00 Berlin wall clock on 2026-10-25 is three real hours: over the 2 h limit.
    let start = Berlin.with_ymd_and_hms(2026, 10, 25, 1, 0, 0).unwrap().with_timezone(&Utc);
    let end = Berlin.with_ymd_and_hms(2026, 10, 25, 3, 0, 0).unwrap().with_timezone(&Utc);
    assert_eq!(end - start, Duration::hours(3));
    let now = start - Duration::days(1);
    let err = validate_new(&rules(), 4, now, Window { start, end }, 1).unwrap_err();
    assert_eq!(err.field, "end");
}

#[test]
fn local_quarter_hours_are_aligned_in_a_plus_0545_zone() {
    let start = Kathmandu.with_ymd_and_hms(2026, 11, 23, 9, 15, 0).unwrap().with_timezone(&Utc);
    let end = Kathmandu.with_ymd_and_hms(2026, 11, 23, 10, 45, 0).unwrap().with_timezone(&Utc);
    assert_eq!(validate_new(&rules(), 4, utc(0, 0), Window { start, end }, 1), Ok(()));
}

#[test]
fn extension_must_move_the_end_later_and_respect_limits() {
    let current = Window { start: utc(10, 0), end: utc(11, 0) };
    let now = utc(10, 30);
    assert_eq!(validate_extension(&rules(), now, current, utc(11, 30)), Ok(()));
    assert_eq!(field_of(validate_extension(&rules(), now, current, utc(11, 0))), "end");
    assert_eq!(field_of(validate_extension(&rules(), now, current, utc(12, 15))), "end");
    assert_eq!(field_of(validate_extension(&rules(), now, current, utc(11, 10))), "end");
    let ended = validate_extension(&rules(), utc(11, 0), current, utc(11, 30));
    assert!(ended.unwrap_err().reason.contains("already ended"));
}
