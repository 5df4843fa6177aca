//! The calendar's longer views: an agenda (the coming bookings of one pool,
//! day by day; the default on phones) and a month (each day's share booked
//! and the viewer's own bookings), both in the viewer's zone.

use super::PoolChoice;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanKind {
    Agenda,
    Month,
}

impl SpanKind {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "agenda" => Some(Self::Agenda),
            "month" => Some(Self::Month),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalendarSpan {
    pub kind: SpanKind,
    pub pools: Vec<PoolChoice>,
    pub pool: PoolChoice,
    /// The IANA zone everything is shown in.
    pub tz: String,
    /// "November 2026", or the agenda's days ("Fri 27 Nov – Thu 10 Dec").
    pub title: String,
    pub date: NaiveDate,
    pub prev: NaiveDate,
    pub next: NaiveDate,
    pub today: NaiveDate,
    /// The agenda's days that hold bookings.
    pub agenda: Vec<AgendaDay>,
    /// The month's weeks, Monday first, days of the months beside it included.
    pub weeks: Vec<Vec<MonthDay>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgendaDay {
    pub date: NaiveDate,
    /// "Fri 27 Nov".
    pub label: String,
    pub entries: Vec<AgendaEntry>,
}

/// One booking in the agenda: the viewer's own in full (it links to its
/// page), someone else's as occupancy only (named for admins).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgendaEntry {
    pub booking: Option<Uuid>,
    /// "09:00–12:00", or with dates when it spans days.
    pub when: String,
    /// "MIG 1g.24gb ×2".
    pub what: String,
    /// The note or "Your booking"; "Booked by Ada Lovelace"; "Booked".
    pub title: String,
    pub state: String,
    pub mine: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MonthDay {
    pub date: NaiveDate,
    pub day: u32,
    pub in_month: bool,
    pub today: bool,
    /// Before today: nothing can be booked.
    pub past: bool,
    /// Booked GPU-hours / capacity GPU-hours of the day, 0–100.
    pub booked_pct: u8,
    /// The viewer's own bookings that day: "09:00 LoRA on the 8B".
    pub mine: Vec<String>,
}
