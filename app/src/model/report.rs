//! The utilisation report managers and admins read: one row per pool, tenant
//! or user over a period, a trend over the period and a weekday x hour
//! occupancy heat map. GPU-hours are whole-GPU equivalents (a unit of a kind
//! is `1 / slices_per_gpu` of a GPU); showback cost is each kind's price per
//! unit-hour x booked units x hours.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportGroup {
    #[default]
    Pool,
    /// The cluster each pool is on now.
    Cluster,
    Tenant,
    User,
}

impl ReportGroup {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pool => "pool",
            Self::Cluster => "cluster",
            Self::Tenant => "tenant",
            Self::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pool, Self::Cluster, Self::Tenant, Self::User].into_iter().find(|g| g.as_str() == text)
    }
}

/// The query of `GET /api/v1/reports/utilization`. `from` and `to` are RFC
/// 3339 instants or dates (midnight in `tz`); the period is `[from, to)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportQuery {
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub group: ReportGroup,
    /// An IANA zone for dates, the trend's days and the heat map's hours; UTC by default.
    #[serde(default)]
    pub tz: Option<String>,
    /// Only the pools of this cluster (by name).
    #[serde(default)]
    pub cluster: Option<String>,
}

/// The page's choice of period: one anchored on `date`, or `custom` from `date` to `until` (inclusive).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeriodKind {
    Day,
    #[default]
    Week,
    Month,
    Custom,
}

impl PeriodKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Custom => "custom",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Day, Self::Week, Self::Month, Self::Custom].into_iter().find(|p| p.as_str() == text)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportRow {
    /// The pool, cluster, tenant or user; `None` on the totals row.
    pub id: Option<Uuid>,
    pub name: String,
    /// Capacity GPU-hours less blackouts; only for pools (and the totals).
    pub capacity_gpu_hours: Option<f64>,
    /// Approved, active and completed bookings, cut to the period.
    pub booked_gpu_hours: f64,
    /// Booked / capacity, in %.
    pub booking_utilization_pct: Option<f64>,
    /// Occupied: booked GPU-hours in which a pod of the session held the
    /// device (the DCGM exporter attributed it to the session; minutes
    /// Prometheus could not be read are left out).
    pub occupied_gpu_hours: f64,
    /// Active: occupied GPU-hours in which the device's engine was busy at
    /// or above the site's threshold (`UtilizationReport::active_threshold_pct`).
    #[serde(default)]
    pub active_gpu_hours: f64,
    /// Active / booked GPU-hours, in %; `None` when nothing was booked.
    #[serde(default)]
    pub active_utilization_pct: Option<f64>,
    /// GPU busy fraction x GPUs over the occupied hours.
    pub busy_gpu_hours: f64,
    /// Busy / booked GPU-hours, in %; `None` when nothing was booked.
    pub busy_utilization_pct: Option<f64>,
    /// Booked GPU-hours that were not active: booked − active.
    pub idle_booked_gpu_hours: f64,
    /// Some hours were time-sliced shares, whose occupied and active
    /// figures are the whole device's: the exporter cannot tell the shares
    /// apart ("device-level only").
    #[serde(default)]
    pub device_level_only: bool,
    /// Booked GPU-hours the pool lent to its backfill queue, which ran
    /// Jobs on them (`--kueue`, kinds with `lend_idle`); only for pools
    /// (and the totals).
    #[serde(default)]
    pub lent_gpu_hours: Option<f64>,
    /// Bookings released because their workspace was never opened and their GPUs stayed idle.
    pub no_shows: i64,
    /// Hours given back by ending early (by hand or for idleness), cut to the period.
    pub returned_gpu_hours: f64,
    /// Unmet demand: requests refused for capacity or quota.
    pub refused_gpu_hours: f64,
    /// Unmet demand: waitlist entries never admitted.
    pub waitlisted_gpu_hours: f64,
    /// Booked unit-hours x each kind's price per unit-hour, in the report's currency.
    pub showback_cost: f64,
    /// Some measured figure came from the simulated cluster.
    pub simulated: bool,
}

/// One bucket of the trend chart (an hour, a day or a week in the report's zone).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    pub start: DateTime<Utc>,
    /// The bucket's start in the report's zone, as the x-axis names it
    /// ("Tue 01 Dec", "14:00" for hours).
    #[serde(default)]
    pub label: String,
    pub capacity_gpu_hours: f64,
    pub booked_gpu_hours: f64,
    pub busy_gpu_hours: f64,
}

/// Occupancy (booked / capacity) of one weekday (0 = Monday) and hour of day in the report's zone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeatCell {
    pub weekday: u8,
    pub hour: u8,
    pub occupancy_pct: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UtilizationReport {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub group: ReportGroup,
    pub time_zone: String,
    pub rows: Vec<ReportRow>,
    pub total: ReportRow,
    /// "hour", "day" or "week".
    pub trend_bucket: String,
    pub trend: Vec<TrendPoint>,
    /// 7 x 24 cells, Monday 00:00 first.
    pub heatmap: Vec<HeatCell>,
    /// Minutes in the period the sampler could not read Prometheus.
    pub gap_minutes: i64,
    /// The engine activity, in %, at or above which a device's minute is
    /// active (the worker's `--active-threshold`); `None` before anything
    /// was sampled.
    #[serde(default)]
    pub active_threshold_pct: Option<f64>,
    pub simulated: bool,
    /// Said when the database holds `make run`'s made-up history
    /// (`backend::reports::demo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo_history: Option<String>,
    /// The ISO 4217 code showback costs are in.
    #[serde(default)]
    pub currency: String,
    /// Storage the tenants' homes held in the period (issue 46), by tenant.
    #[serde(default)]
    pub storage: Vec<StorageLine>,
    /// What a GiB of home storage costs per month (30 days), in `currency`.
    #[serde(default)]
    pub storage_price_per_gib_month: f64,
    /// The one cluster whose pools and kept homes it counts, if the reader chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Every cluster, to choose from.
    #[serde(default)]
    pub clusters: Vec<String>,
}

/// Home storage one tenant's members held in the period: GiB × days, and
/// its showback at the site's price per GiB-month (30 days).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StorageLine {
    pub tenant: String,
    pub gib_days: f64,
    pub showback_cost: f64,
}

/// The column names of the report's CSV, in order (the JSON field names of
/// `ReportRow`, and the report's currency after the showback cost).
pub const REPORT_CSV_COLUMNS: [&str; 20] = [
    "id",
    "name",
    "capacity_gpu_hours",
    "booked_gpu_hours",
    "booking_utilization_pct",
    "occupied_gpu_hours",
    "active_gpu_hours",
    "active_utilization_pct",
    "busy_gpu_hours",
    "busy_utilization_pct",
    "idle_booked_gpu_hours",
    "device_level_only",
    "lent_gpu_hours",
    "no_shows",
    "returned_gpu_hours",
    "refused_gpu_hours",
    "waitlisted_gpu_hours",
    "showback_cost",
    "currency",
    "simulated",
];

/// What the Reports page shows: the report, the period as chosen, and the
/// periods before and after it for the arrows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportPage {
    pub report: UtilizationReport,
    pub period: PeriodKind,
    pub date: chrono::NaiveDate,
    pub until: Option<chrono::NaiveDate>,
    /// The period in the report's zone, as people read it.
    pub span: String,
    pub previous: (chrono::NaiveDate, Option<chrono::NaiveDate>),
    pub next: (chrono::NaiveDate, Option<chrono::NaiveDate>),
}

/// The page's query as the URL carries it; empty means the default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportPageQuery {
    pub group: String,
    pub period: String,
    pub date: String,
    pub until: String,
    pub tz: String,
    /// Only the pools of this cluster (by name); empty: every cluster.
    /// Optional, so a page loaded before clusters were a choice still asks.
    #[serde(default)]
    pub cluster: String,
}
