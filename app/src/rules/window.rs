//! Whether a requested window and quantity are acceptable in a pool, before
//! any capacity is looked at. Instants are UTC; alignment is to the Unix epoch,
//! which matches local slot boundaries in every zone whose offset is a multiple
//! of the granularity (all zones for 15 min).

use super::capacity::{align_down, align_up};
use super::FieldError;
use crate::model::{PoolRules, Window};
use chrono::{DateTime, Datelike, Duration, Utc};

pub fn granularity(rules: &PoolRules) -> Duration {
    Duration::minutes(i64::from(rules.granularity_minutes.max(1)))
}

/// The earliest start a new booking may have at `now`: the current slot when
/// no notice is required, else the first slot boundary after the notice.
pub fn earliest_start(rules: &PoolRules, now: DateTime<Utc>) -> DateTime<Utc> {
    let step = granularity(rules);
    if rules.min_notice_minutes <= 0 {
        align_down(now, step)
    } else {
        align_up(now + Duration::minutes(i64::from(rules.min_notice_minutes)), step)
    }
}

/// The latest end any window may have at `now`.
pub fn horizon_end(rules: &PoolRules, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(i64::from(rules.horizon_days))
}

fn check_quantity(quantity: i32, capacity: i32) -> Result<(), FieldError> {
    if quantity < 1 {
        return Err(FieldError::new("quantity", "must be at least 1"));
    }
    if quantity > capacity {
        return Err(FieldError::new(
            "quantity",
            format!("is more than the {} this kind has", crate::model::counted(capacity, "unit", "units")),
        ));
    }
    Ok(())
}

fn check_aligned(field: &'static str, at: DateTime<Utc>, rules: &PoolRules) -> Result<(), FieldError> {
    if align_down(at, granularity(rules)) != at {
        return Err(FieldError::new(field, format!("must be on a {}-minute boundary", rules.granularity_minutes)));
    }
    Ok(())
}

/// Timestamps outside years 1970–9999 are refused before they reach the
/// database, whose range is narrower than what JSON can carry.
pub fn check_in_range(field: &'static str, at: DateTime<Utc>) -> Result<(), FieldError> {
    let year = at.year();
    if (1970..=9999).contains(&year) {
        Ok(())
    } else {
        Err(FieldError::new(field, "must be between the years 1970 and 9999"))
    }
}

/// A calendar day someone asked to see: the same years as timestamps, so
/// that the days after it can always be computed.
pub fn check_date_in_range(field: &'static str, date: chrono::NaiveDate) -> Result<(), FieldError> {
    if (1970..=9999).contains(&date.year()) {
        Ok(())
    } else {
        Err(FieldError::new(field, "must be between the years 1970 and 9999"))
    }
}

/// The longest duration anyone may ask about: a year (pools cap bookings lower).
pub const MAX_DURATION_MINUTES: i64 = 366 * 24 * 60;

/// A length in minutes from user input, as a `Duration` (which panics on
/// overflow if built unchecked).
pub fn duration_minutes(field: &'static str, minutes: i64) -> Result<chrono::Duration, FieldError> {
    if (1..=MAX_DURATION_MINUTES).contains(&minutes) {
        Ok(chrono::Duration::minutes(minutes))
    } else {
        Err(FieldError::new(
            field,
            format!("must be between 1 minute and {}", crate::model::duration_text(MAX_DURATION_MINUTES)),
        ))
    }
}

/// A window must not be empty; checked before anything asks the database
/// about it (PostgreSQL refuses ranges whose end precedes their start).
pub fn check_not_empty(window: Window) -> Result<(), FieldError> {
    check_in_range("start", window.start)?;
    check_in_range("end", window.end)?;
    if window.end <= window.start {
        return Err(FieldError::new("end", "must be after the start"));
    }
    Ok(())
}

/// Checks an end against the pool's length limit and horizon.
fn check_end(rules: &PoolRules, now: DateTime<Utc>, window: Window) -> Result<(), FieldError> {
    check_not_empty(window)?;
    check_aligned("end", window.end, rules)?;
    let max = Duration::minutes(i64::from(rules.max_booking_minutes));
    if window.end - window.start > max {
        return Err(FieldError::new(
            "end",
            format!(
                "is too far after the start: the pool books at most {} at a time",
                crate::model::duration_text(i64::from(rules.max_booking_minutes))
            ),
        ));
    }
    if window.end > horizon_end(rules, now) {
        return Err(FieldError::new(
            "end",
            format!("is beyond the pool's booking horizon of {} days", rules.horizon_days),
        ));
    }
    Ok(())
}

/// Validates a new booking's quantity and window at `now`.
pub fn validate_new(
    rules: &PoolRules,
    capacity: i32,
    now: DateTime<Utc>,
    window: Window,
    quantity: i32,
) -> Result<(), FieldError> {
    check_quantity(quantity, capacity)?;
    check_aligned("start", window.start, rules)?;
    let earliest = earliest_start(rules, now);
    if window.start < earliest {
        let reason = if window.start < align_down(now, granularity(rules)) {
            "is in the past".to_string()
        } else {
            format!("needs {} minutes' notice", rules.min_notice_minutes)
        };
        return Err(FieldError::new("start", reason));
    }
    check_end(rules, now, window)
}

/// Validates moving a booking's end from `current.end` to `new_end` at `now`.
pub fn validate_extension(
    rules: &PoolRules,
    now: DateTime<Utc>,
    current: Window,
    new_end: DateTime<Utc>,
) -> Result<(), FieldError> {
    if current.end <= now {
        return Err(FieldError::new("end", "the booking's window has already ended"));
    }
    if new_end <= current.end {
        return Err(FieldError::new("end", "must be later than the current end"));
    }
    check_end(rules, now, Window { start: current.start, end: new_end })
}
