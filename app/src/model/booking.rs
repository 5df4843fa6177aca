use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Lifecycle of a booking. Only `rules::state_machine::transition` moves between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BookingState {
    Pending,
    Approved,
    Active,
    Completed,
    Canceled,
    Rejected,
    Failed,
}

impl BookingState {
    pub const ALL: [BookingState; 7] =
        [Self::Pending, Self::Approved, Self::Active, Self::Completed, Self::Canceled, Self::Rejected, Self::Failed];

    /// Booked: the states every page counts as booked time (reports, the
    /// dashboard's week, the cards) — approved, running or over. A booking
    /// waiting for approval is not booked yet: it holds capacity and counts
    /// against the weekly budget, and pages name it apart.
    pub const BOOKED: [BookingState; 3] = [Self::Approved, Self::Active, Self::Completed];

    /// `states` as an SQL list for `state IN (…)`: "'approved', 'active',
    /// 'completed'" (the names are Berth's own, never input).
    pub fn sql_list(states: &[Self]) -> String {
        states.iter().map(|s| format!("'{}'", s.as_str())).collect::<Vec<_>>().join(", ")
    }

    /// States that hold capacity: the capacity invariant sums exactly these.
    pub fn holds_capacity(self) -> bool {
        matches!(self, Self::Pending | Self::Approved | Self::Active)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Active => "active",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Rejected => "rejected",
            Self::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

// A booking's state as PostgreSQL's text holds it, decoded checked: a state
// Berth does not know is a decode error, never read as some other state.
#[cfg(feature = "ssr")]
crate::model::checked_text_decode!(BookingState, "booking state");

/// `interactive`: the workspace itself gets a GPU. `inference`: the workspace has
/// none and every time-sliced slot is free for the user's own serving pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Interactive,
    Inference,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Interactive => "interactive",
            Self::Inference => "inference",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "interactive" => Some(Self::Interactive),
            "inference" => Some(Self::Inference),
            _ => None,
        }
    }
}

// Checked like the state: a mode Berth does not know is a decode error.
#[cfg(feature = "ssr")]
crate::model::checked_text_decode!(Mode, "booking mode");

/// A half-open time window `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// A booking as a reader may see it. For other users' bookings the personal
/// fields (`user_*`, `tenant`, `image`, `note`, `co_owners`) are `None` or
/// empty: occupancy only. `mine` holds for the owner and its co-owners.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Booking {
    pub id: Uuid,
    pub pool_id: Uuid,
    pub kind: String,
    pub quantity: i32,
    pub mode: Mode,
    pub state: BookingState,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub mine: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    /// For an extension request awaiting approval: the booking it would extend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<Uuid>,
    /// Who shares the booking with its owner (for those who see it in full).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub co_owners: Vec<CoOwner>,
    /// The reader is a co-owner, not the owner: they may open, extend and
    /// end it, but not cancel it or change who shares it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub co_owned: bool,
    /// The recurring series the booking is an occurrence of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Uuid>,
    /// Only in the answer to booking: what stands between the booking and
    /// its session as things are, such as its cluster being unreachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A user the owner shares a booking with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoOwner {
    pub email: String,
    pub name: String,
}

/// `POST /bookings/{id}/co-owners`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCoOwner {
    /// A member of the booking's tenant.
    pub email: String,
}

/// A booking request's fields, written once for the two requests that ask
/// for a window (`NewBooking`) or a series of them (`NewSeries`, in
/// `series`). Each keeps its own wire form with unknown fields refused,
/// which `serde(flatten)` of a shared struct would give up.
macro_rules! booking_request {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            pub pool_id: Uuid,
            pub kind: String,
            pub quantity: i32,
            /// The window (a series' first: every occurrence keeps its
            /// wall-clock times).
            pub start: DateTime<Utc>,
            pub end: DateTime<Utc>,
            pub mode: Mode,
            /// One of the pool's images; the pool's first image when left out.
            #[serde(default)]
            pub image: Option<String>,
            #[serde(default)]
            pub note: String,
            /// Tenant slug to book for; needed only by members of several tenants.
            #[serde(default)]
            pub tenant: Option<String>,
            $($(#[$field_meta])* pub $field: $ty,)*
        }
    };
}
pub(crate) use booking_request;

booking_request! {
    /// `POST /bookings`.
    pub struct NewBooking {
        /// Refused for capacity or quota: wait for exactly this window instead
        /// (`202` with the waitlist entry).
        #[serde(default)]
        pub waitlist: bool,
    }
}

/// `GET /bookings` filters. Without `from`/`to`, bookings that have not ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BookingFilter {
    pub pool_id: Option<Uuid>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    #[serde(default)]
    pub mine: bool,
}
