//! Tenants, their quotas per pool+kind, and how much of each they use.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A tenant as admins list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tenant {
    pub slug: String,
    pub name: String,
    /// Member emails, sorted.
    pub members: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTenant {
    pub slug: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantPatch {
    pub name: String,
}

/// The limits of one tenant in one pool+kind; `None` is no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TenantQuota {
    /// Most units the tenant's bookings may hold at any one instant.
    pub max_units: Option<i32>,
    /// Most unit-hours the tenant may book in one ISO week of the pool's time zone.
    pub gpu_hours_per_week: Option<f64>,
}

/// One row of `PUT /api/v1/tenants/{slug}/quotas`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaEntry {
    pub pool_id: Uuid,
    pub kind: String,
    #[serde(default)]
    pub max_units: Option<i32>,
    #[serde(default)]
    pub gpu_hours_per_week: Option<f64>,
}

/// Which quota limit a request broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaLimit {
    MaxUnits,
    GpuHoursPerWeek,
}

impl QuotaLimit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxUnits => "max_units",
            Self::GpuHoursPerWeek => "gpu_hours_per_week",
        }
    }
}

/// A tenant's quota in one pool+kind next to what it uses now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuotaUsage {
    pub pool_id: Uuid,
    pub pool: String,
    pub kind: String,
    pub max_units: Option<i32>,
    pub gpu_hours_per_week: Option<f64>,
    /// Units the tenant's bookings hold right now.
    pub units_now: i32,
    /// Unit-hours booked in the current ISO week of the pool's time zone.
    pub hours_this_week: f64,
    /// Start of that week (RFC 3339).
    pub week_start: chrono::DateTime<chrono::Utc>,
}

/// `GET /api/v1/tenants/{slug}/usage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TenantUsage {
    pub tenant: String,
    pub quotas: Vec<QuotaUsage>,
}

/// One pool+kind a quota can be set for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuotaTarget {
    pub pool_id: Uuid,
    pub pool: String,
    pub kind: String,
    /// The units the pool has of the kind: a limit above it never binds.
    pub capacity: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TenantsPage {
    pub tenants: Vec<(Tenant, TenantUsage)>,
    pub targets: Vec<QuotaTarget>,
}
