//! Recurring bookings: a series request, what each occurrence would meet,
//! and what was booked.

use super::{Booking, Mode};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repeat {
    Daily,
    Weekly,
}

super::booking::booking_request! {
    /// `POST /series/preview` and `POST /series`: the first window and how it repeats.
    pub struct NewSeries {
        pub repeat: Repeat,
        /// Weekly: "mon".."sun"; none means the first window's weekday.
        #[serde(default)]
        pub weekdays: Vec<String>,
        /// The last day an occurrence may start on, in `time_zone`; within the pool's horizon.
        pub until: NaiveDate,
        /// The zone whose wall clock the series keeps; the pool's when left out.
        #[serde(default)]
        pub time_zone: Option<String>,
        /// `POST /series` only: book exactly these occurrences (their starts),
        /// all or none. Left out: every occurrence that fits.
        #[serde(default)]
        pub occurrences: Option<Vec<DateTime<Utc>>>,
    }
}

/// The portal's recurring-booking form as posted: wall-clock text in the
/// viewer's zone, read into a `NewSeries` by the backend. One type for the
/// preview and the booking, and what an idempotency key stands for. Every
/// field is text: the form's values are flattened into the server fn's
/// arguments, and a flattened query string knows no numbers (serde_qs), so
/// the units are read, with a field's refusal, where the rest are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesForm {
    /// "<pool id>|<kind>": one select for both.
    pub pool: String,
    pub quantity: String,
    pub mode: String,
    /// The first day, "2026-11-30".
    pub date: String,
    /// Wall-clock start and end, "09:00"; the end must be after the start.
    pub from: String,
    pub to: String,
    pub repeat: String,
    #[serde(default)]
    pub weekdays: Vec<String>,
    pub until: String,
    /// The viewer's zone; empty when the page was drawn before it was known.
    #[serde(default)]
    pub tz: String,
}

/// One occurrence and whether the normal rules admit it now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Occurrence {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub fits: bool,
    /// Why it would be refused, as a single booking's refusal says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// The booker already holds a booking of this pool and kind over it
    /// (booked earlier, say from this same series): the page does not offer
    /// it again.
    #[serde(default)]
    pub held: bool,
}

/// What a series would book, written nowhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPlan {
    pub rule: String,
    pub time_zone: String,
    pub occurrences: Vec<Occurrence>,
}

/// What `POST /series` booked, and the occurrences it left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookedSeries {
    pub id: Uuid,
    pub rule: String,
    pub bookings: Vec<Booking>,
    pub left_out: Vec<Occurrence>,
}

/// The series form's preview: each occurrence in the viewer's zone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPreview {
    pub rule: String,
    pub lines: Vec<OccurrenceLine>,
    /// The form's fields as posted (name, value), for the book form to repeat.
    #[serde(default)]
    pub form: Vec<(String, String)>,
}

/// Weekdays as the form names them (value, label), Monday first.
pub const WEEKDAY_NAMES: [(&str, &str); 7] =
    [("mon", "Mon"), ("tue", "Tue"), ("wed", "Wed"), ("thu", "Thu"), ("fri", "Fri"), ("sat", "Sat"), ("sun", "Sun")];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OccurrenceLine {
    pub start: DateTime<Utc>,
    /// "Mon 30 Nov 09:00–12:00"
    pub when: String,
    pub fits: bool,
    pub refusal: Option<String>,
    /// Already the booker's (see `Occurrence::held`).
    #[serde(default)]
    pub held: bool,
}
