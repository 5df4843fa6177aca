//! What the calendar pages show: a week (or day) of one pool in the viewer's
//! time zone, with free units per slot for every kind, the bookings the
//! viewer may see, and the outcome of booking from the calendar.

use super::WaitlistEntry;
use super::{Booking, Pool, Window};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One slot (the pool's granularity) of a local day. Short field names and
/// the start in seconds: a week is some 700 slots, all sent along for
/// hydration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    #[serde(rename = "a", with = "chrono::serde::ts_seconds")]
    pub start: DateTime<Utc>,
    /// Local wall-clock start, "09:15".
    #[serde(rename = "l")]
    pub label: String,
    /// Inside the pool's booking range (after the notice, before the horizon).
    #[serde(rename = "b", default, skip_serializing_if = "std::ops::Not::not")]
    pub bookable: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Day {
    pub date: NaiveDate,
    /// "Mon 23 Nov".
    pub label: String,
    pub slots: Vec<Slot>,
}

impl Day {
    /// Slot `i`'s local start as a `datetime-local` input writes it.
    pub fn local_start(&self, i: usize) -> String {
        format!("{}T{}", self.date, self.slots.get(i).map(|s| s.label.as_str()).unwrap_or("00:00"))
    }

    /// Slot `i`'s local end: the next slot's start, or the next midnight.
    pub fn local_end(&self, i: usize) -> String {
        if i + 1 < self.slots.len() {
            self.local_start(i + 1)
        } else {
            format!("{}T00:00", self.date.succ_opt().unwrap_or(self.date))
        }
    }
}

/// What one calendar cell (a slot of one kind on one day) holds: the
/// background of its lane (how full it is), named in words for the hover
/// and screen readers. Bookings are drawn over the cells as `CalendarBlock`s.
/// Short field names: a week is some 1 300 cells, all sent along for
/// hydration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    #[serde(rename = "f")]
    pub free: i32,
    /// Units of the viewer's own bookings in this slot.
    #[serde(rename = "m", default, skip_serializing_if = "is_zero")]
    pub mine: i32,
    /// The reason of a maintenance window covering this slot (nothing is free).
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub blackout: Option<String>,
}

/// Whose time a block on the calendar is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockOwner {
    /// The viewer's own booking (or one they co-own).
    #[default]
    Mine,
    /// Someone else's: named for admins, anonymous occupancy for the rest.
    Others,
    /// A maintenance window.
    Maintenance,
}

/// One booking (or maintenance window) on one day of the week or day view:
/// a block on the time axis from its first slot that day, as tall as the
/// slots it covers there. Bookings that overlap in one lane sit side by
/// side: `column` of `columns`. Short field names, and its words made from
/// its fields rather than sent: a week may hold hundreds, all sent along
/// for hydration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CalendarBlock {
    #[serde(rename = "d")]
    pub day: usize,
    #[serde(rename = "k")]
    pub kind: usize,
    /// First slot covered on that day, and how many slots.
    #[serde(rename = "s")]
    pub slot: usize,
    #[serde(rename = "n")]
    pub slots: usize,
    #[serde(rename = "c")]
    pub column: u8,
    #[serde(rename = "cs")]
    pub columns: u8,
    #[serde(rename = "o")]
    pub owner: BlockOwner,
    /// The booker's name, shown to admins on others' bookings.
    #[serde(rename = "w", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Units booked (a booking).
    #[serde(rename = "u", default, skip_serializing_if = "is_zero")]
    pub units: i32,
    /// A maintenance window's reason.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The booking's note, its title as a calendar event's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The booking's state, for its look ("pending" is drawn dashed).
    #[serde(rename = "t", default, skip_serializing_if = "String::is_empty")]
    pub state: String,
    /// The booking the block opens (the viewer's own, or any for admins).
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub booking: Option<Uuid>,
    /// It began on an earlier day, or goes on to a later one.
    #[serde(rename = "cd", default, skip_serializing_if = "std::ops::Not::not")]
    pub continued: bool,
    #[serde(rename = "cn", default, skip_serializing_if = "std::ops::Not::not")]
    pub continues: bool,
    /// How much of its booked time was really used (begun bookings).
    #[serde(rename = "ub", default, skip_serializing_if = "Option::is_none")]
    pub used: Option<UsedBar>,
}

impl CalendarBlock {
    /// Who: "You", the booker's name (admins), "Booked", or "Maintenance".
    pub fn who(&self) -> &str {
        match self.owner {
            BlockOwner::Mine => "You",
            BlockOwner::Others => self.name.as_deref().unwrap_or("Booked"),
            BlockOwner::Maintenance => "Maintenance",
        }
    }

    /// What: "MIG 1g.24gb ×2 · approved" (`short` is its lane's kind), or
    /// a maintenance window's reason.
    pub fn what(&self, short: &str) -> String {
        match (&self.owner, &self.reason) {
            (BlockOwner::Maintenance, reason) => reason.clone().unwrap_or_default(),
            _ => format!("{short} ×{} · {}", self.units, self.state),
        }
    }

    /// The block in words: its link's name, its tooltip, and what the grid
    /// cell under its top says.
    pub fn text(&self, short: &str) -> String {
        let title = self.note.as_ref().map(|n| format!("{n} — ")).unwrap_or_default();
        format!("{title}{} · {}", self.who(), self.what(short))
    }
}

/// One booking's used time, drawn as a thin bar under its block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsedBar {
    /// Active unit-minutes / booked unit-minutes so far, 0–100.
    #[serde(rename = "p")]
    pub pct: u8,
    /// Booked units idle in the last sampled minute of a live booking:
    /// the ones lending or reclaim could give back (admins are shown them).
    #[serde(rename = "i", default, skip_serializing_if = "is_zero")]
    pub idle_units: i32,
    /// Whose booking, when it is not the viewer's (admins).
    #[serde(rename = "w", default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    /// The measurements came from the simulated cluster.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    pub simulated: bool,
    /// The booking has ended: its whole window counts, not time "so far".
    #[serde(rename = "e", default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
}

impl UsedBar {
    /// What the bar says in words (its accessible name and tooltip).
    pub fn text(&self) -> String {
        let whose = self.who.as_ref().map(|w| format!("{w}: ")).unwrap_or_default();
        let idle = match self.idle_units {
            0 => String::new(),
            1 => " · 1 booked unit idle now".to_string(),
            n => format!(" · {n} booked units idle now"),
        };
        let simulated = if self.simulated { " (simulated)" } else { "" };
        let so_far = if self.ended { "" } else { " so far" };
        format!("{whose}{} % of the booked time{so_far} was used{idle}{simulated}", self.pct)
    }
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindLane {
    pub kind: String,
    pub capacity: i32,
    /// "GPU" or "MIG 1g.24gb", for column headers.
    pub short: String,
    /// Its memory and one line of what fits ("24 GB · inference of an 8B
    /// model in BF16 at 8k context", `rules::fit::kind_line`); empty when
    /// the pool does not say how much memory a unit has.
    #[serde(default)]
    pub fits: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolChoice {
    pub id: Uuid,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalendarData {
    pub pools: Vec<PoolChoice>,
    pub pool: Pool,
    /// The IANA zone everything local is shown in.
    pub tz: String,
    pub now: DateTime<Utc>,
    pub kinds: Vec<KindLane>,
    pub days: Vec<Day>,
    /// `cells[day][kind][slot]`.
    pub cells: Vec<Vec<Vec<Cell>>>,
    /// The bookings and maintenance windows drawn over the cells.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<CalendarBlock>,
    /// Bookings that hold capacity in the shown range: the viewer's own in
    /// full, everyone else's as anonymous occupancy (in full for admins).
    /// Server-side only: the cells carry what the page shows.
    #[serde(skip)]
    pub bookings: Vec<Booking>,
    pub today: NaiveDate,
    pub prev: NaiveDate,
    pub next: NaiveDate,
    /// A fresh idempotency key for the booking forms of this rendering
    /// (`admission::idempotency`): submitting the same form twice books once.
    #[serde(default)]
    pub form_key: String,
    /// The viewer's own bookings in view that may still move (not begun,
    /// holding their window): the grid drags them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub movable: Vec<Movable>,
    /// The pool's cluster has failed the worker since some time: new
    /// bookings are taken, their sessions wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_down: Option<String>,
}

/// One of the viewer's bookings the grid may move or resize.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Movable {
    pub id: Uuid,
    /// Its lane: the index of its kind.
    pub kind: usize,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// What moving or resizing a booking from the calendar led to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MoveOutcome {
    /// `when`: the new window in the viewer's zone.
    Moved { when: String },
    /// Refused, and for capacity the earliest window of the new length
    /// that fits, to move to instead.
    Refused { booking: Uuid, message: String, suggestion: Option<Suggestion> },
}

/// The fields of the booking form, as posted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BookingForm {
    pub pool_id: Uuid,
    pub kind: String,
    #[serde(deserialize_with = "super::form_value::whole_number")]
    pub quantity: i32,
    /// `2026-11-23T09:15` (a `datetime-local` input, in `tz`) or RFC 3339.
    pub start: String,
    pub end: String,
    pub tz: String,
    pub mode: String,
    #[serde(default)]
    pub image: String,
    #[serde(default)]
    pub note: String,
    /// Wait for this window if it is full (or over the tenant's quota).
    #[serde(default, deserialize_with = "super::form_value::flag")]
    pub waitlist: bool,
}

/// What booking from the calendar (or a suggestion) led to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BookOutcome {
    /// `when` is the window in the viewer's zone, "Mon 23 Nov 09:15–11:00".
    Booked { booking: Booking, when: String },
    /// Refused for a reason the user can act on: a field, or capacity (then
    /// `suggestion` is the earliest window of the same length that fits).
    /// `can_wait`: refused for capacity or quota, so the same request may join the waitlist.
    Refused {
        field: Option<String>,
        message: String,
        suggestion: Option<Suggestion>,
        form: BookingForm,
        can_wait: bool,
    },
    /// On the waitlist for exactly the asked window.
    Waitlisted { entry: WaitlistEntry, when: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub window: Window,
    pub when: String,
}

/// A short name for a resource kind: `nvidia.com/gpu` → "GPU",
/// `nvidia.com/mig-1g.24gb` → "MIG 1g.24gb".
pub fn short_kind(kind: &str) -> String {
    match kind.strip_prefix("nvidia.com/") {
        Some("gpu") => "GPU".into(),
        Some(rest) => match rest.strip_prefix("mig-") {
            Some(profile) => format!("MIG {profile}"),
            None => rest.to_string(),
        },
        None => kind.to_string(),
    }
}
