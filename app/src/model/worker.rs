//! The provisioning worker as admins watch it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One worker process and what it last did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct WorkerProcess {
    /// `host:pid`.
    pub name: String,
    /// Talks to the in-memory simulated cluster, not a real one.
    pub simulated: bool,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    /// Set while it is the active worker (the others wait for its lock).
    pub leading_since: Option<DateTime<Utc>>,
    pub start_pass_at: Option<DateTime<Utc>>,
    pub start_pass_ms: Option<i32>,
    pub start_pass_error: Option<String>,
    pub repair_pass_at: Option<DateTime<Utc>>,
    pub repair_pass_ms: Option<i32>,
    pub repair_pass_error: Option<String>,
    pub next_wake_at: Option<DateTime<Utc>>,
    pub sweep_at: Option<DateTime<Utc>>,
    /// Orphaned namespaces the last sweep deleted.
    pub sweep_collected: Vec<String>,
    /// Managed namespaces stuck terminating: an admin must look.
    pub sweep_stuck: Vec<String>,
}

/// A booking whose session failed recently, with the cluster's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerFailure {
    pub booking_id: Uuid,
    pub at: DateTime<Utc>,
    pub reason: String,
}

/// One cluster as its worker last reported it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct ClusterHealth {
    pub name: String,
    /// The process holding its lease (or that last held it); `None`: no
    /// worker has led it yet.
    pub worker: Option<String>,
    pub pass_at: Option<DateTime<Utc>>,
    pub pass_ms: Option<i32>,
    /// The last pass that ran to its end; the lag is the time since.
    pub last_success_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    /// Since when its API server has failed every pass.
    pub unreachable_since: Option<DateTime<Utc>>,
}

/// `GET /api/v1/worker/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerStatus {
    pub now: DateTime<Utc>,
    /// The process that leads, if one has reported within the last 2 minutes.
    pub leader: Option<String>,
    /// Every process seen in the last day, the leader first.
    pub processes: Vec<WorkerProcess>,
    /// Open sessions by their first step not done, or "live" with every
    /// step done: (state, count).
    pub sessions: Vec<(String, i64)>,
    pub recent_failures: Vec<WorkerFailure>,
    /// Every cluster, by name.
    #[serde(default)]
    pub clusters: Vec<ClusterHealth>,
}
