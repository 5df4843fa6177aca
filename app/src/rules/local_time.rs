//! Local time, in one place (issue 47): every time a person reads or types
//! is wall-clock time in a zone — theirs (Settings, else the browser's) or a
//! pool's — and this module is the only one that turns a zone name into a
//! zone, a local date into its midnight, a typed local time into an
//! instant, or a window into the words a page shows.

use crate::model::{Clock, Window};
use crate::rules::FieldError;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

/// The zone for a name, UTC when the name is unknown (stored names are
/// checked when saved; a page's zone may come from a browser).
pub fn zone(name: &str) -> Tz {
    name.parse().unwrap_or(Tz::UTC)
}

/// Exactly a zone name (as the OpenAPI document lists them), or nothing or
/// empty (UTC); anything else is refused, naming `field`.
pub fn checked_zone(field: &str, name: Option<&str>) -> Result<Tz, FieldError> {
    match name.filter(|t| !t.is_empty()) {
        None => Ok(Tz::UTC),
        Some(name) => name.parse().map_err(|_| FieldError::new(field, "not an IANA time zone (e.g. Europe/Berlin)")),
    }
}

/// The instant a local day starts. Where a zone skips midnight (a DST
/// change at 00:00), the day starts at the first instant that exists.
/// Any zone: the quotas' weeks are counted with it too.
pub fn local_midnight<Z: TimeZone>(tz: Z, date: NaiveDate) -> DateTime<Utc> {
    let mut at = date.and_hms_opt(0, 0, 0).expect("midnight exists");
    // No zone skips more than a few hours; a day always has an instant.
    for _ in 0..48 {
        if let Some(local) = tz.from_local_datetime(&at).earliest() {
            return local.with_timezone(&Utc);
        }
        at += Duration::minutes(30);
    }
    Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0).expect("midnight exists"))
}

/// A typed time: RFC 3339 as is, or local wall-clock time in `tz`
/// ("2026-11-23T09:15"). A time that a clock change skips is refused; one
/// it repeats means the first.
pub fn parse_local(field: &'static str, text: &str, tz: &str) -> Result<DateTime<Utc>, FieldError> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        let at = at.with_timezone(&Utc);
        crate::rules::window::check_in_range(field, at)?;
        return Ok(at);
    }
    let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| FieldError::new(field, "must be a date and time like 2026-11-23T09:15"))?;
    // Checked before the zone is applied: near chrono's limits that would overflow.
    crate::rules::window::check_date_in_range(field, local.date())?;
    local_instant(field, local, zone(tz))
}

/// The instant of the wall-clock time `local` in `tz`: refused when a clock
/// change skips it, the first when one repeats it.
pub fn local_instant(field: &str, local: NaiveDateTime, tz: Tz) -> Result<DateTime<Utc>, FieldError> {
    tz.from_local_datetime(&local)
        .earliest()
        .map(|at| at.with_timezone(&Utc))
        .ok_or_else(|| FieldError::new(field, format!("does not exist in {} (the clocks change then)", tz.name())))
}

/// A wall-clock time in `tz` as an instant. A time a clock change repeats
/// is the first of the two; one it skips is read with the offset in force
/// before the change (RFC 5545, 3.3.5), so it lands as late as the gap is long.
pub fn resolve(tz: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&local).earliest() {
        Some(at) => at.with_timezone(&Utc),
        None => {
            let before = tz.offset_from_utc_datetime(&(local - Duration::days(1))).fix();
            Utc.from_utc_datetime(&(local - Duration::seconds(i64::from(before.local_minus_utc()))))
        }
    }
}

/// How far around now a page's clock knows its zone's offsets (tokens last
/// a year at most; the audit log keeps 400 days).
const CLOCK_DAYS: i64 = 800;

/// The clock of `tz` (unknown: UTC) around `now`: its offsets from UTC and
/// every change of them within `CLOCK_DAYS` either side.
pub fn clock(tz: &str, now: DateTime<Utc>) -> Clock {
    let zone = zone(tz);
    let offset = |at: DateTime<Utc>| zone.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc();
    let (mut at, end) = (now - Duration::days(CLOCK_DAYS), now + Duration::days(CLOCK_DAYS));
    let mut offsets = vec![(at.timestamp(), offset(at))];
    while at < end {
        let next = at + Duration::hours(6);
        if offset(next) != offsets.last().map_or(0, |(_, o)| *o) {
            // The change lies in (at, next]: halve to the second.
            let (mut lo, mut hi) = (at, next);
            while hi - lo > Duration::seconds(1) {
                let mid = lo + (hi - lo) / 2;
                if offset(mid) == offset(lo) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            offsets.push((hi.timestamp(), offset(hi)));
        }
        at = next;
    }
    Clock { tz: zone.name().to_string(), offsets, own: false }
}

/// A window in `tz`: "Mon 23 Nov 09:15–11:00", or with both dates when it
/// spans midnight.
pub fn local_window(window: Window, tz: &str) -> String {
    let zone = zone(tz);
    crate::model::window_text(
        window.start.with_timezone(&zone).fixed_offset(),
        window.end.with_timezone(&zone).fixed_offset(),
    )
}

/// An instant in `tz` as a page shows it: "Sat 28 Nov 16:00" (with the
/// year outside this one).
pub fn local_moment(at: DateTime<Utc>, tz: &str) -> String {
    let local = at.with_timezone(&zone(tz));
    format!("{} {}", crate::model::day_text(local.date_naive()), local.format("%H:%M"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_times_are_read_in_the_viewers_zone() {
        let at = parse_local("start", "2026-11-23T09:15", "Europe/Berlin").unwrap();
        assert_eq!(at.to_rfc3339(), "2026-11-23T08:15:00+00:00");
        let kathmandu = parse_local("start", "2026-11-23T09:15:00", "Asia/Kathmandu").unwrap();
        assert_eq!(kathmandu.to_rfc3339(), "2026-11-23T03:30:00+00:00");
        let utc = parse_local("end", "2026-11-23T09:15:00Z", "Europe/Berlin").unwrap();
        assert_eq!(utc.to_rfc3339(), "2026-11-23T09:15:00+00:00");
        // Unknown zones read as UTC.
        assert_eq!(
            parse_local("start", "2026-11-23T09:15", "Nowhere").unwrap().to_rfc3339(),
            "2026-11-23T09:15:00+00:00"
        );
    }

    #[test]
    fn skipped_times_are_refused_and_repeated_ones_mean_the_first() {
        let skipped = parse_local("start", "2026-03-29T02:30", "Europe/Berlin").unwrap_err();
        assert_eq!(skipped.field, "start");
        assert!(skipped.reason.contains("clocks change"), "{}", skipped.reason);
        let repeated = parse_local("end", "2026-10-25T02:30", "Europe/Berlin").unwrap();
        assert_eq!(repeated.to_rfc3339(), "2026-10-25T00:30:00+00:00", "the first 02:30 (still summer time)");
        let garbage = parse_local("end", "tomorrow", "UTC").unwrap_err();
        assert_eq!((garbage.field.as_str(), garbage.reason.contains("like")), ("end", true));
    }

    #[test]
    fn local_midnights_follow_the_zone_including_dst_days() {
        let berlin = zone("Europe/Berlin");
        let day = |d| NaiveDate::from_ymd_opt(2026, 3, d).unwrap();
        assert_eq!(local_midnight(berlin, day(29)).to_rfc3339(), "2026-03-28T23:00:00+00:00");
        // The spring-forward day is 23 hours long.
        assert_eq!(local_midnight(berlin, day(30)) - local_midnight(berlin, day(29)), Duration::hours(23));
        assert_eq!(zone("Not/AZone"), Tz::UTC);
        // Chile springs forward at midnight; that day starts at 01:00.
        let santiago = zone("America/Santiago");
        let skipped = NaiveDate::from_ymd_opt(2024, 9, 8).unwrap();
        let start = local_midnight(santiago, skipped);
        assert_eq!(start.with_timezone(&santiago).format("%H:%M").to_string(), "01:00");
    }

    #[test]
    fn a_clock_writes_each_instant_as_its_zone_does_across_both_changes() {
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 12, 0, 0).unwrap();
        let berlin = clock("Europe/Berlin", now);
        assert_eq!(berlin.tz, "Europe/Berlin");
        let tz = zone("Europe/Berlin");
        // Every hour for a year and a half, on either side of each change.
        let mut at = now - Duration::days(400);
        while at < now + Duration::days(400) {
            let expected = at.with_timezone(&tz).format("%a %d %b %Y %H:%M").to_string();
            assert_eq!(berlin.when(at), expected, "{at}");
            at += Duration::minutes(37);
        }
        let spring = Utc.with_ymd_and_hms(2027, 3, 28, 1, 0, 0).unwrap();
        assert_eq!(berlin.when(spring - Duration::seconds(1)), "Sun 28 Mar 2027 01:59");
        assert_eq!(berlin.when(spring), "Sun 28 Mar 2027 03:00");
        assert_eq!(clock("Nowhere", now), Clock { tz: "UTC".into(), offsets: clock("UTC", now).offsets, own: false });
        assert_eq!(Clock::default().when(now), "Fri 27 Nov 2026 12:00");
    }

    #[test]
    fn zones_are_checked_where_a_person_names_one_and_windows_read_in_it() {
        assert_eq!(checked_zone("tz", None).unwrap(), Tz::UTC);
        assert_eq!(checked_zone("tz", Some("")).unwrap(), Tz::UTC);
        assert_eq!(checked_zone("tz", Some("Europe/Berlin")).unwrap(), chrono_tz::Europe::Berlin);
        assert_eq!(checked_zone("tz", Some("Mars/Olympus")).unwrap_err().field, "tz");
        assert!(checked_zone("tz", Some(" UTC")).is_err(), "exactly a name");
        let at = |h| Utc.with_ymd_and_hms(2026, 11, 28, h, 0, 0).unwrap();
        let window = Window { start: at(8), end: at(11) };
        assert_eq!(local_window(window, "Europe/Berlin"), "Sat 28 Nov 09:00–12:00");
        assert_eq!(
            local_window(Window { start: at(8), end: at(23) }, "Europe/Berlin"),
            "Sat 28 Nov 09:00 – Sun 29 Nov 00:00"
        );
        assert_eq!(local_moment(at(15), "Europe/Berlin"), "Sat 28 Nov 16:00");
    }
}
