//! From what the API or the page asks to the report's `[from, to)` in UTC:
//! dates are midnights in the report's zone, so a day across a DST change
//! is 23 or 25 hours long.

use crate::model::PeriodKind;
use crate::rules::local_time::local_midnight;
use crate::rules::FieldError;
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Utc};
use chrono_tz::Tz;

/// Longest period one report covers.
pub const MAX_DAYS: i64 = 400;

/// An API bound: an RFC 3339 instant, or a date meaning its midnight in `tz`.
pub fn instant(field: &str, text: &str, tz: &Tz) -> Result<DateTime<Utc>, FieldError> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map(|date| local_midnight(*tz, date))
        .map_err(|_| FieldError::new(field, "must be a date (2026-11-01) or an RFC 3339 time"))
}

/// Checks `from < to` and the longest span.
pub fn checked(from: DateTime<Utc>, to: DateTime<Utc>) -> Result<(DateTime<Utc>, DateTime<Utc>), FieldError> {
    if to <= from {
        return Err(FieldError::new("to", "must be after from"));
    }
    if (to - from).num_days() > MAX_DAYS {
        return Err(FieldError::new("to", format!("a report covers at most {MAX_DAYS} days")));
    }
    Ok((from, to))
}

/// The first and the day after the last local date of a page's period.
pub fn dates(
    kind: PeriodKind,
    anchor: NaiveDate,
    until: Option<NaiveDate>,
) -> Result<(NaiveDate, NaiveDate), FieldError> {
    let next =
        |d: NaiveDate| d.checked_add_days(Days::new(1)).ok_or_else(|| FieldError::new("date", "is out of range"));
    match kind {
        PeriodKind::Day => Ok((anchor, next(anchor)?)),
        PeriodKind::Week => {
            let monday = anchor - Days::new(u64::from(anchor.weekday().num_days_from_monday()));
            Ok((monday, monday + Days::new(7)))
        }
        PeriodKind::Month => {
            let first = anchor.with_day(1).expect("day 1 exists");
            Ok((
                first,
                first.checked_add_months(Months::new(1)).ok_or_else(|| FieldError::new("date", "is out of range"))?,
            ))
        }
        PeriodKind::Custom => {
            let last = until.ok_or_else(|| FieldError::new("until", "a custom period needs its last day"))?;
            if last < anchor {
                return Err(FieldError::new("until", "must not be before the first day"));
            }
            Ok((anchor, next(last)?))
        }
    }
}

/// The same period one step earlier or later (custom periods move by their length).
pub fn step(
    kind: PeriodKind,
    anchor: NaiveDate,
    until: Option<NaiveDate>,
    forward: bool,
) -> (NaiveDate, Option<NaiveDate>) {
    let shift = |d: NaiveDate, days: u64| if forward { d + Days::new(days) } else { d - Days::new(days) };
    match kind {
        PeriodKind::Day => (shift(anchor, 1), None),
        PeriodKind::Week => (shift(anchor, 7), None),
        PeriodKind::Month => {
            let months = Months::new(1);
            let moved = if forward { anchor.checked_add_months(months) } else { anchor.checked_sub_months(months) };
            (moved.unwrap_or(anchor), None)
        }
        PeriodKind::Custom => {
            let last = until.unwrap_or(anchor);
            let days = (last - anchor).num_days().unsigned_abs() + 1;
            (shift(anchor, days), Some(shift(last, days)))
        }
    }
}

/// The settled months a report reads from the roll-ups, `[from, to)`; empty
/// (`from == to`, both the period's end) when there are none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl Settled {
    pub(super) fn none(end: DateTime<Utc>) -> Self {
        Settled { from: end, to: end }
    }

    /// The same months as dates (the first days of the first and of the
    /// month after the last).
    pub fn months(&self) -> (NaiveDate, NaiveDate) {
        (self.from.date_naive(), self.to.date_naive())
    }
}

/// Hours since the Unix epoch, as the booking's generated columns hold them.
pub(super) fn epoch_hours(at: DateTime<Utc>) -> f64 {
    at.timestamp_micros() as f64 / 3.6e9
}

#[cfg(test)]
mod tests {
    use crate::backend::reports::period::*;

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_day_across_the_autumn_change_lasts_25_hours() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let (first, after) = dates(PeriodKind::Day, date("2026-10-25"), None).unwrap();
        assert_eq!((local_midnight(tz, after) - local_midnight(tz, first)).num_hours(), 25);
    }

    #[test]
    fn weeks_start_on_monday_and_months_on_the_first() {
        assert_eq!(
            dates(PeriodKind::Week, date("2026-11-26"), None).unwrap(),
            (date("2026-11-23"), date("2026-11-30"))
        );
        assert_eq!(
            dates(PeriodKind::Month, date("2026-02-14"), None).unwrap(),
            (date("2026-02-01"), date("2026-03-01"))
        );
        assert_eq!(
            dates(PeriodKind::Custom, date("2026-02-14"), Some(date("2026-02-16"))).unwrap(),
            (date("2026-02-14"), date("2026-02-17"))
        );
        assert_eq!(dates(PeriodKind::Custom, date("2026-02-14"), Some(date("2026-02-13"))).unwrap_err().field, "until");
    }

    #[test]
    fn steps_move_by_the_period() {
        assert_eq!(step(PeriodKind::Month, date("2026-01-31"), None, true).0, date("2026-02-28"));
        assert_eq!(
            step(PeriodKind::Custom, date("2026-02-14"), Some(date("2026-02-16")), false),
            (date("2026-02-11"), Some(date("2026-02-13")))
        );
    }

    #[test]
    fn api_bounds_are_dates_or_instants() {
        let tz: Tz = "America/New_York".parse().unwrap();
        assert_eq!(instant("from", "2026-11-01", &tz).unwrap().to_rfc3339(), "2026-11-01T04:00:00+00:00");
        assert_eq!(instant("from", "2026-11-01T10:00:00Z", &tz).unwrap().to_rfc3339(), "2026-11-01T10:00:00+00:00");
        assert_eq!(instant("to", "yesterday", &tz).unwrap_err().field, "to");
        let at = instant("from", "2026-11-01", &Tz::UTC).unwrap();
        assert_eq!(checked(at, at).unwrap_err().field, "to");
        assert!(checked(at, at + chrono::Duration::days(401)).is_err());
    }
}
