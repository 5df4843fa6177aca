//! My bookings and "find a slot", as the pages show them.

use super::{Booking, Suggestion};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// An end a booking can be extended to, with its local label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndOption {
    pub end: DateTime<Utc>,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookingCard {
    pub booking: Booking,
    pub pool_name: String,
    /// The window in the viewer's zone.
    pub when: String,
    /// Later ends that fit (empty when the booking cannot be extended).
    pub extend_to: Vec<EndOption>,
    /// For a pending booking: who may approve it.
    pub approvers: Vec<String>,
    /// What the worker last reported, once it has worked on this booking.
    #[serde(default)]
    pub session: Option<super::SessionStatus>,
    /// For a failed booking: why, in words the user can act on.
    #[serde(default)]
    pub failure: Option<String>,
    /// Its extension request, where the pool requires approval: waiting, or
    /// rejected with the admin's comment.
    #[serde(default)]
    pub extension: Option<String>,
    /// An admin's decision on the booking with their comment ("Rejected: …").
    #[serde(default)]
    pub decision: Option<String>,
    /// Idle reclaim: the warning while its GPUs sit idle, or why it was released.
    #[serde(default)]
    pub idle: Option<String>,
    /// Someone dropped out of the live session: who, and what the worker
    /// removed before the token changed.
    #[serde(default)]
    pub access_note: Option<String>,
    /// An occurrence of a recurring series: its rule in words.
    #[serde(default)]
    pub series_rule: Option<String>,
    /// With Kueue on, the LocalQueue of a live session that batch Jobs go to.
    #[serde(default)]
    pub batch_queue: Option<String>,
    /// What outlives the window and what does not, for a booking that has
    /// not ended: "Your home … is kept until …; everything else … ends at …".
    #[serde(default)]
    pub persistence: Option<String>,
    /// The same person's next booking that takes this session over when the
    /// window ends: "Continues into your booking of …".
    #[serde(default)]
    pub continues_into: Option<String>,
    /// What ending it now keeps and deletes, for the End-now dialog: "Your
    /// home (…) is kept until …; the workspace and everything else in its
    /// namespace are deleted now."
    #[serde(default)]
    pub home_note: Option<String>,
    /// One step of the pool's granularity later, when that is free: the
    /// card's quick "+1 h" (labelled with the step).
    #[serde(default)]
    pub extend_by: Option<EndOption>,
    /// Maintenance the booking was kept inside, for a booking that has not
    /// ended: when, why, and what to do.
    #[serde(default)]
    pub maintenance: Option<String>,
    /// Its cluster's API server has failed the worker since some time:
    /// "Cluster east unreachable since …".
    #[serde(default)]
    pub cluster_down: Option<String>,
    /// How it was booked, when not in the portal: "via claude-code 1.2.0
    /// with the API token “laptop”".
    #[serde(default)]
    pub booked_via: Option<String>,
}

/// The LocalQueue of every session when Kueue is on (`berth serve --kueue`):
/// Jobs labelled `kueue.x-k8s.io/queue-name: session` run on the booked units.
pub const KUEUE_LOCAL_QUEUE: &str = "session";

/// The LocalQueue of a pool's backfill, in the namespace its admin names:
/// preemptible Jobs there run on idle booked units of lending kinds.
pub const KUEUE_BACKFILL_QUEUE: &str = "backfill";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MyBookings {
    pub now: DateTime<Utc>,
    pub tz: String,
    pub live: Vec<BookingCard>,
    pub upcoming: Vec<BookingCard>,
    /// The last 30 days.
    pub past: Vec<BookingCard>,
    /// The worker runs against the in-memory simulated cluster.
    #[serde(default)]
    pub simulated: bool,
    /// The principal's waitlist entries whose window has not ended.
    #[serde(default)]
    pub waitlist: Vec<super::WaitlistLine>,
    /// The viewer's address: a co-owner may remove only themselves.
    #[serde(default)]
    pub me: String,
}

/// Which cluster the worker provisions on, as the server tells the pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMode {
    /// No real cluster: sessions exist only in the in-memory API server.
    pub simulated: bool,
    /// Each session also gets Kueue quota (`--kueue`).
    #[serde(default)]
    pub kueue: bool,
}

/// What an action on a booking (cancel, extend, end) led to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionNotice {
    pub ok: bool,
    pub message: String,
    /// The field a refusal is about, which its form marks beside the input.
    #[serde(default)]
    pub field: Option<crate::model::FieldError>,
    /// The id of the page's section that shows it, beside the form it
    /// answers (a pool's maintenance windows); none: the page's top.
    #[serde(default)]
    pub at: Option<String>,
}

impl ActionNotice {
    /// An outcome about no field in particular.
    pub fn said(ok: bool, message: impl Into<String>) -> Self {
        Self { ok, message: message.into(), field: None, at: None }
    }

    /// The notice a script-less post came back with in its page's query
    /// (`notice`, `notice_ok`, `notice_field` with `notice_reason`, and
    /// `notice_at`).
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let field = get("notice_field")
            .map(|field| crate::model::FieldError::new(field, get("notice_reason").unwrap_or_default()));
        let (ok, at) = (get("notice_ok").as_deref() == Some("1"), get("notice_at"));
        get("notice").map(|message| Self { ok, message, field, at })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundSlots {
    pub pool_id: Uuid,
    pub pool_name: String,
    pub kind: String,
    pub quantity: i32,
    pub tz: String,
    pub windows: Vec<Suggestion>,
}

/// "Find a slot" as the page asks: every field optional (defaults fill the
/// form), local times in `tz`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FindQuery {
    pub pool: Option<Uuid>,
    pub kind: Option<String>,
    pub quantity: Option<i32>,
    pub duration_minutes: Option<i64>,
    pub earliest: Option<String>,
    pub latest: Option<String>,
    pub tz: String,
}

/// The "find a slot" page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindPage {
    pub pools: Vec<super::Pool>,
    pub pool: super::Pool,
    pub tz: String,
    /// The form's values, filled with defaults where the query had none.
    pub kind: String,
    pub quantity: i32,
    pub duration_minutes: i64,
    pub earliest: String,
    pub latest: String,
    /// The answer, once the form was sent; `Err` is a refusal to show.
    pub found: Option<Result<FoundSlots, String>>,
    /// A fresh idempotency key for this rendering's booking forms.
    #[serde(default)]
    pub form_key: String,
}
