//! The reader's clock (issue 47): their zone's name and its offsets from
//! UTC over the times a page may show, so that the server and the browser
//! write an instant the same way in that zone (the browser build has no
//! zone database; `rules::local_time::clock` makes one on the server).

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// The IANA zone, as a page names it once.
    pub tz: String,
    /// From each instant (Unix seconds) on, the zone's offset from UTC in
    /// seconds, sorted; the first also covers everything before it.
    pub offsets: Vec<(i64, i32)>,
    /// The zone is the reader's own (Settings): the browser's zone does not
    /// replace it once the page hydrates.
    #[serde(default)]
    pub own: bool,
}

impl Default for Clock {
    fn default() -> Self {
        Clock { tz: "UTC".into(), offsets: vec![(0, 0)], own: false }
    }
}

impl Clock {
    /// `at` on this clock.
    pub fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        let seconds = at.timestamp();
        let offset = self
            .offsets
            .iter()
            .take_while(|(from, _)| *from <= seconds)
            .last()
            .or(self.offsets.first())
            .map_or(0, |(_, offset)| *offset);
        at.with_timezone(&FixedOffset::east_opt(offset).unwrap_or(FixedOffset::east_opt(0).expect("UTC")))
    }

    /// "Sat 28 Nov 2026 16:00": a moment as pages write it (the zone is
    /// named once per page, `tz`).
    pub fn when(&self, at: DateTime<Utc>) -> String {
        self.local(at).format("%a %d %b %Y %H:%M").to_string()
    }

    /// A window as pages write it ("Fri 27 Nov 09:00–12:00"; see
    /// `window_text`).
    pub fn window(&self, window: crate::model::Window) -> String {
        window_text(self.local(window.start), self.local(window.end))
    }

    /// `text` with every RFC 3339 instant in it written as `when` does: the
    /// reasons Berth records ("extended to 2026-11-28T16:00:00+00:00") read
    /// in the reader's zone.
    pub fn localize(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let (mut out, mut copied, mut i) = (String::with_capacity(text.len()), 0, 0);
        while i + 20 <= bytes.len() {
            let looks = bytes[i..i + 4].iter().all(u8::is_ascii_digit) && bytes[i + 4] == b'-' && bytes[i + 10] == b'T';
            let end = bytes[i..]
                .iter()
                .position(|b| !(b.is_ascii_digit() || b"-:T.Z+".contains(b)))
                .map_or(bytes.len(), |n| i + n);
            // The longest that parses: a reason may go on with ':' or '.'.
            let found = (i + 20..=end)
                .rev()
                .filter(|_| looks)
                .find_map(|to| DateTime::parse_from_rfc3339(&text[i..to]).ok().map(|at| (to, at)));
            match found {
                Some((to, at)) => {
                    out.push_str(&text[copied..i]);
                    out.push_str(&self.when(at.with_timezone(&Utc)));
                    (copied, i) = (to, to);
                }
                None => i += text[i..].chars().next().map_or(1, char::len_utf8),
            }
        }
        out.push_str(&text[copied..]);
        out
    }
}

/// A window between two local times: "Mon 23 Nov 09:15–11:00", or with
/// both dates when it spans midnight, and each date's year when it is not
/// this year's. The one writer of that text, for the server
/// (`rules::local_time::local_window`) and the browser (`Clock`).
pub fn window_text(start: DateTime<FixedOffset>, end: DateTime<FixedOffset>) -> String {
    let day = |at: DateTime<FixedOffset>| day_text(at.date_naive());
    if start.date_naive() == end.date_naive() {
        format!("{} {}–{}", day(start), start.format("%H:%M"), end.format("%H:%M"))
    } else {
        format!("{} {} – {} {}", day(start), start.format("%H:%M"), day(end), end.format("%H:%M"))
    }
}

/// A date as pages write it: "Mon 23 Nov", and "Mon 23 Nov 2027" outside
/// the current year (a date with no year reads as this year's).
pub fn day_text(date: NaiveDate) -> String {
    day_text_in(date, chrono::Utc::now().year())
}

/// `day_text` in the year `this_year`.
pub fn day_text_in(date: NaiveDate, this_year: i32) -> String {
    match date.year() == this_year {
        true => date.format("%a %d %b").to_string(),
        false => date.format("%a %d %b %Y").to_string(),
    }
}

/// What a decision or an audit entry was about, named as a person reads it:
/// "Ada Lovelace's booking on lab-h100, Fri 27 Nov 09:00–12:00".
pub fn booking_phrase(owner: &str, extension: bool, pool: &str, window: &str) -> String {
    let what = if extension { "extension" } else { "booking" };
    format!("{owner}'s {what} on {pool}, {window}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_outside_this_year_shows_its_year() {
        let date = NaiveDate::from_ymd_opt(2027, 12, 8).unwrap();
        assert_eq!(day_text_in(date, 2027), "Wed 08 Dec");
        assert_eq!(day_text_in(date, 2026), "Wed 08 Dec 2027");
        let at = |d: u32, h: u32| {
            chrono::NaiveDate::from_ymd_opt(2130, 1, d).unwrap().and_hms_opt(h, 0, 0).unwrap().and_utc().fixed_offset()
        };
        assert_eq!(window_text(at(2, 9), at(2, 12)), "Mon 02 Jan 2130 09:00–12:00");
        assert_eq!(window_text(at(2, 9), at(3, 12)), "Mon 02 Jan 2130 09:00 – Tue 03 Jan 2130 12:00");
    }

    #[test]
    fn recorded_instants_read_on_the_clock() {
        let berlin = Clock { tz: "Europe/Berlin".into(), offsets: vec![(0, 3600)], own: false };
        assert_eq!(
            berlin.localize("extended to 2026-11-28T16:00:00+00:00 by ada"),
            "extended to Sat 28 Nov 2026 17:00 by ada"
        );
        assert_eq!(
            berlin.localize("from 2026-11-28T16:00:00Z to 2026-11-28T17:30:00.5Z: why."),
            "from Sat 28 Nov 2026 17:00 to Sat 28 Nov 2026 18:30: why."
        );
        for plain in ["no time here", "2026-11-28 is a date", "ünïcode 2026-11-28T16:00:00+0", ""] {
            assert_eq!(berlin.localize(plain), plain);
        }
    }
}
