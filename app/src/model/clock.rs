//! The reader's clock (issue 47): their zone's name and its offsets from
//! UTC over the times a page may show, so that the server and the browser
//! write an instant the same way in that zone (the browser build has no
//! zone database; `rules::local_time::clock` makes one on the server).

use chrono::{DateTime, FixedOffset, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// The IANA zone, as a page names it once.
    pub tz: String,
    /// From each instant (Unix seconds) on, the zone's offset from UTC in
    /// seconds, sorted; the first also covers everything before it.
    pub offsets: Vec<(i64, i32)>,
}

impl Default for Clock {
    fn default() -> Self {
        Clock { tz: "UTC".into(), offsets: vec![(0, 0)] }
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
}
