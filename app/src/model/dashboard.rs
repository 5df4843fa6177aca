//! A tenant's dashboard: its live sessions with their measured GPU use, the
//! week's GPU-hours against its budget, and what is booked next.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Minutes of each live session's busy and memory series (the API's last hour).
pub const SPARK_MINUTES: usize = 60;

/// A booking as the dashboard lists it, live or upcoming.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookingLine {
    pub booking_id: Uuid,
    pub pool: String,
    pub kind: String,
    pub quantity: i32,
    pub owner: String,
    /// The window in the viewer's zone.
    pub when: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveSession {
    #[serde(flatten)]
    pub booking: BookingLine,
    /// Busy fraction (0-1) per minute, oldest first; `None` where nothing was measured.
    pub busy: Vec<Option<f32>>,
    /// Memory used (MiB) per minute, oldest first.
    pub memory_mib: Vec<Option<f32>>,
    /// "Idle for 35 min (below 5 %)" when the GPUs stayed below the pool's
    /// threshold for its idle minutes.
    pub idle: Option<String>,
    pub simulated: bool,
    /// Each device's engine busy and memory over the dashboard's range.
    #[serde(default)]
    pub devices: Vec<super::DeviceChart>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetLine {
    pub pool: String,
    pub kind: String,
    /// GPU-hours (whole-GPU equivalent) booked this ISO week (pool's zone):
    /// `BookingState::BOOKED`, as the reports count them.
    pub booked_hours: f64,
    /// GPU-hours this week waiting for approval: not booked yet, but the
    /// weekly budget counts them with the booked ones.
    #[serde(default)]
    pub waiting_hours: f64,
    /// GPU-hours the GPUs were measured busy this week.
    pub busy_hours: f64,
    /// The weekly budget, when the tenant has one for this pool and kind.
    pub budget_hours: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpcomingLine {
    #[serde(flatten)]
    pub booking: BookingLine,
    pub state: String,
}

/// `GET /api/v1/tenants/{slug}/dashboard`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dashboard {
    pub tenant: String,
    pub tenant_name: String,
    /// Other tenants the viewer may open.
    pub others: Vec<String>,
    pub live: Vec<LiveSession>,
    pub budget: Vec<BudgetLine>,
    pub upcoming: Vec<UpcomingLine>,
    /// Some figure came from the simulated cluster.
    pub simulated: bool,
    /// Said when the database holds `make run`'s made-up history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo_history: Option<String>,
    /// The zone its times are in.
    pub zone: String,
    /// The time axis of the live sessions' device charts.
    #[serde(default)]
    pub axis: super::ChartAxis,
    /// The one cluster whose pools it shows, if the reader chose one.
    #[serde(default)]
    pub cluster: Option<String>,
    /// Every cluster, to choose from.
    #[serde(default)]
    pub clusters: Vec<String>,
}
