//! Recurring bookings: the occurrences of a series. Each keeps the first
//! window's wall-clock times in the series' zone, as a calendar's weekly
//! meeting does, so across a clock change the UTC instants move by an hour
//! and the window keeps its local times.

use super::local_time::resolve;
use super::FieldError;
use crate::model::Window;
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use chrono_tz::Tz;

/// Most occurrences one series makes: a daily slot over a long horizon.
pub const MAX_OCCURRENCES: usize = 200;

/// Longest window a series repeats: longer ones would overlap the next day's.
pub const MAX_WINDOW_HOURS: i64 = 24;

/// How a series repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    Daily,
    /// On these weekdays (at least one).
    Weekly(Vec<Weekday>),
}

/// Reads weekday names ("mon".."sun", any case); none means the first
/// window's weekday.
pub fn weekdays(names: &[String], first: Weekday) -> Result<Vec<Weekday>, FieldError> {
    let mut days = Vec::new();
    for name in names {
        // The form's names, Monday first, as chrono numbers the days.
        let day = crate::model::WEEKDAY_NAMES
            .iter()
            .position(|(short, _)| short.eq_ignore_ascii_case(name.trim()))
            .and_then(|index| Weekday::try_from(index as u8).ok())
            .ok_or_else(|| {
                FieldError::new("weekdays", format!("{name:?} is not one of mon, tue, wed, thu, fri, sat, sun"))
            })?;
        if !days.contains(&day) {
            days.push(day);
        }
    }
    if days.is_empty() {
        days.push(first);
    }
    days.sort_by_key(|d| d.num_days_from_monday());
    Ok(days)
}

/// Every occurrence of `first` under `rule` from its day through `until`
/// (both in `tz`, inclusive). The first window's day sets the times; it is
/// itself an occurrence only if the rule includes its weekday. A window a
/// clock change swallows whole (02:00–03:00 on the night clocks go forward)
/// has no occurrence that day.
pub fn occurrences(first: Window, tz: Tz, rule: &Rule, until: NaiveDate) -> Result<Vec<Window>, FieldError> {
    if first.end <= first.start {
        return Err(FieldError::new("end", "must be after start"));
    }
    if first.end - first.start > Duration::hours(MAX_WINDOW_HOURS) {
        return Err(FieldError::new("end", format!("a recurring window lasts at most {MAX_WINDOW_HOURS} hours")));
    }
    let (start, end) = (first.start.with_timezone(&tz).naive_local(), first.end.with_timezone(&tz).naive_local());
    if until < start.date() {
        return Err(FieldError::new("until", "must be on or after the first window's day"));
    }
    let days_long = (end.date() - start.date()).num_days();
    let mut windows = Vec::new();
    for day in start.date().iter_days().take_while(|d| *d <= until) {
        let included = match rule {
            Rule::Daily => true,
            Rule::Weekly(days) => days.contains(&day.weekday()),
        };
        if !included {
            continue;
        }
        let window = Window {
            start: resolve(tz, day.and_time(start.time())),
            end: resolve(tz, (day + Duration::days(days_long)).and_time(end.time())),
        };
        if window.end <= window.start {
            continue;
        }
        if windows.len() == MAX_OCCURRENCES {
            return Err(FieldError::new("until", format!("a series has at most {MAX_OCCURRENCES} occurrences")));
        }
        windows.push(window);
    }
    Ok(windows)
}

/// The rule in words, for cards and the audit log: "weekly on Mon, Wed
/// until Sun 20 Dec 2026, 09:00–12:00 Europe/Berlin".
pub fn describe(first: Window, tz: Tz, rule: &Rule, until: NaiveDate) -> String {
    let (start, end) = (first.start.with_timezone(&tz), first.end.with_timezone(&tz));
    let how = match rule {
        Rule::Daily => "daily".to_string(),
        Rule::Weekly(days) => {
            let names: Vec<String> = days.iter().map(|d| d.to_string()).collect();
            format!("weekly on {}", names.join(", "))
        }
    };
    format!(
        "{how} until {}, {}–{} {}",
        until.format("%a %d %b %Y"),
        start.format("%H:%M"),
        end.format("%H:%M"),
        tz.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, NaiveDate, TimeZone, Utc};

    fn at(tz: Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        tz.with_ymd_and_hms(y, m, d, h, min, 0).single().unwrap().with_timezone(&Utc)
    }

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    /// Each occurrence as local "date start–end" and its length in minutes.
    fn local(windows: &[Window], tz: Tz) -> Vec<String> {
        windows
            .iter()
            .map(|w| {
                let (s, e) = (w.start.with_timezone(&tz), w.end.with_timezone(&tz));
                format!(
                    "{} {}–{} {}",
                    s.format("%a %m-%d"),
                    s.format("%H:%M"),
                    e.format("%H:%M"),
                    (w.end - w.start).num_minutes()
                )
            })
            .collect()
    }

    #[test]
    fn a_weekly_slot_keeps_its_wall_clock_times_across_the_autumn_clock_change() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let first = Window { start: at(tz, 2026, 10, 19, 9, 0), end: at(tz, 2026, 10, 19, 12, 0) };
        let rule = Rule::Weekly(vec![Weekday::Mon, Weekday::Wed]);
        let found = occurrences(first, tz, &rule, date(2026, 11, 2)).unwrap();
        assert_eq!(
            local(&found, tz),
            [
                "Mon 10-19 09:00–12:00 180",
                "Wed 10-21 09:00–12:00 180",
                "Mon 10-26 09:00–12:00 180",
                "Wed 10-28 09:00–12:00 180",
                "Mon 11-02 09:00–12:00 180",
            ]
        );
        // Before the change 09:00 is 07:00 UTC; after it, 08:00 UTC.
        assert_eq!(found[0].start, Utc.with_ymd_and_hms(2026, 10, 19, 7, 0, 0).unwrap());
        assert_eq!(found[2].start, Utc.with_ymd_and_hms(2026, 10, 26, 8, 0, 0).unwrap());
    }

    #[test]
    fn a_daily_night_slot_across_the_spring_clock_change_is_an_hour_shorter_that_night() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        // 22:00 to 06:00 the next morning; clocks go forward at 02:00 on 28 March 2027.
        let first = Window { start: at(tz, 2027, 3, 26, 22, 0), end: at(tz, 2027, 3, 27, 6, 0) };
        let found = occurrences(first, tz, &Rule::Daily, date(2027, 3, 28)).unwrap();
        assert_eq!(
            local(&found, tz),
            ["Fri 03-26 22:00–06:00 480", "Sat 03-27 22:00–06:00 420", "Sun 03-28 22:00–06:00 480"]
        );
    }

    #[test]
    fn a_time_the_clock_skips_lands_late_by_the_gap_and_a_repeated_one_is_the_first() {
        let tz: Tz = "America/New_York".parse().unwrap();
        // 02:30 does not exist on 14 March 2027 (02:00 → 03:00): 03:30 EDT.
        let first = Window { start: at(tz, 2027, 3, 13, 2, 30), end: at(tz, 2027, 3, 13, 4, 0) };
        let found = occurrences(first, tz, &Rule::Daily, date(2027, 3, 14)).unwrap();
        assert_eq!(local(&found, tz), ["Sat 03-13 02:30–04:00 90", "Sun 03-14 03:30–04:00 30"]);
        // 01:30 happens twice on 7 November 2027: the first (EDT, 05:30 UTC).
        let first = Window { start: at(tz, 2027, 11, 6, 1, 30), end: at(tz, 2027, 11, 6, 3, 0) };
        let found = occurrences(first, tz, &Rule::Daily, date(2027, 11, 7)).unwrap();
        assert_eq!(found[1].start, Utc.with_ymd_and_hms(2027, 11, 7, 5, 30, 0).unwrap());
        assert_eq!(local(&found, tz)[1], "Sun 11-07 01:30–03:00 150");
    }

    #[test]
    fn a_window_the_clock_change_swallows_has_no_occurrence_that_day() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let first = Window { start: at(tz, 2027, 3, 27, 2, 0), end: at(tz, 2027, 3, 27, 3, 0) };
        let found = occurrences(first, tz, &Rule::Daily, date(2027, 3, 29)).unwrap();
        assert_eq!(local(&found, tz), ["Sat 03-27 02:00–03:00 60", "Mon 03-29 02:00–03:00 60"]);
    }

    #[test]
    fn the_first_day_sets_the_times_and_counts_only_if_the_rule_includes_it() {
        let tz: Tz = "UTC".parse().unwrap();
        let first = Window { start: at(tz, 2026, 11, 24, 9, 0), end: at(tz, 2026, 11, 24, 10, 0) }; // a Tuesday
        let found = occurrences(first, tz, &Rule::Weekly(vec![Weekday::Thu]), date(2026, 12, 3)).unwrap();
        assert_eq!(local(&found, tz), ["Thu 11-26 09:00–10:00 60", "Thu 12-03 09:00–10:00 60"]);
        assert_eq!(weekdays(&[], Weekday::Tue).unwrap(), [Weekday::Tue]);
        assert_eq!(
            weekdays(&["FRI".into(), "mon".into(), "fri".into()], Weekday::Tue).unwrap(),
            [Weekday::Mon, Weekday::Fri]
        );
        assert_eq!(weekdays(&["monday".into()], Weekday::Tue).unwrap_err().field, "weekdays");
    }

    #[test]
    fn bad_series_are_refused_naming_the_field() {
        let tz: Tz = "UTC".parse().unwrap();
        let first = Window { start: at(tz, 2026, 11, 24, 9, 0), end: at(tz, 2026, 11, 24, 10, 0) };
        assert_eq!(occurrences(first, tz, &Rule::Daily, date(2026, 11, 23)).unwrap_err().field, "until");
        let long = Window { start: first.start, end: first.start + Duration::hours(25) };
        assert_eq!(occurrences(long, tz, &Rule::Daily, date(2026, 12, 1)).unwrap_err().field, "end");
        let err = occurrences(first, tz, &Rule::Daily, date(2027, 11, 1)).unwrap_err();
        assert_eq!((err.field.as_str(), err.reason.as_str()), ("until", "a series has at most 200 occurrences"));
        assert_eq!(
            describe(first, tz, &Rule::Weekly(vec![Weekday::Mon, Weekday::Wed]), date(2026, 12, 20)),
            "weekly on Mon, Wed until Sun 20 Dec 2026, 09:00–10:00 UTC"
        );
    }
}
