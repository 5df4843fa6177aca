use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A Kubernetes toleration, as the pool's session pods carry it (the
/// Kubernetes field names, so an admin can paste one from a node's taints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Equal` (the default) or `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`; none tolerates every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// Where a pool's sessions run: every pod of its sessions carries the node
/// selector (the cluster refuses pods without it) and the tolerations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
}

/// The timing rules a booking window must satisfy in one pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct PoolRules {
    /// Windows start and end on multiples of this many minutes (UTC epoch based).
    pub granularity_minutes: i32,
    pub max_booking_minutes: i32,
    /// How far ahead a window may end.
    pub horizon_days: i32,
    /// How long before its start a window must be booked; 0 lets a window start in the current slot.
    pub min_notice_minutes: i32,
}

impl Default for PoolRules {
    fn default() -> Self {
        Self { granularity_minutes: 15, max_booking_minutes: 7 * 24 * 60, horizon_days: 28, min_notice_minutes: 0 }
    }
}

/// One resource kind of a pool: whole GPUs (`nvidia.com/gpu`) or one MIG profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct PoolKind {
    pub kind: String,
    /// Physical units (GPUs or MIG slices); the capacity invariant counts these.
    pub capacity: i32,
    /// Time-slice replicas the device plugin advertises per physical unit.
    pub replicas_per_unit: i32,
    pub vram_gb_per_unit: i32,
    pub cpu_millis_per_unit: i32,
    pub memory_mib_per_unit: i32,
    pub storage_gib_per_unit: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub gpu_model: String,
    pub requires_approval: bool,
    #[serde(flatten)]
    pub rules: PoolRules,
    pub price_per_unit_hour: f64,
    /// Workspace images users may pick; the first is the default.
    pub images: Vec<String>,
    /// Tenant slugs that may book this pool; empty means every tenant.
    pub tenants: Vec<String>,
    pub kinds: Vec<PoolKind>,
    #[serde(flatten)]
    pub placement: Placement,
    /// IANA zone whose ISO weeks the weekly quotas count.
    pub time_zone: String,
    /// Retired by an admin: no new bookings, the existing ones are kept.
    #[serde(default)]
    pub retired: bool,
}

impl Pool {
    /// The capacity of one of the pool's kinds, or why there is none.
    pub fn capacity_of(&self, kind: &str) -> Result<i32, super::FieldError> {
        self.kinds
            .iter()
            .find(|k| k.kind == kind)
            .map(|k| k.capacity)
            .ok_or_else(|| super::FieldError::new("kind", format!("pool {} has no kind {kind}", self.name)))
    }
}

fn one() -> i32 {
    1
}
fn default_cpu_millis() -> i32 {
    4000
}
fn default_memory_mib() -> i32 {
    32 * 1024
}
fn default_storage_gib() -> i32 {
    100
}

/// A resource kind as an admin declares it; unset grants take the defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindSpec {
    pub kind: String,
    pub capacity: i32,
    #[serde(default = "one")]
    pub replicas_per_unit: i32,
    #[serde(default)]
    pub vram_gb_per_unit: i32,
    #[serde(default = "default_cpu_millis")]
    pub cpu_millis_per_unit: i32,
    #[serde(default = "default_memory_mib")]
    pub memory_mib_per_unit: i32,
    #[serde(default = "default_storage_gib")]
    pub storage_gib_per_unit: i32,
}

impl From<KindSpec> for PoolKind {
    fn from(s: KindSpec) -> Self {
        Self {
            kind: s.kind,
            capacity: s.capacity,
            replicas_per_unit: s.replicas_per_unit,
            vram_gb_per_unit: s.vram_gb_per_unit,
            cpu_millis_per_unit: s.cpu_millis_per_unit,
            memory_mib_per_unit: s.memory_mib_per_unit,
            storage_gib_per_unit: s.storage_gib_per_unit,
        }
    }
}

/// `POST /pools`. Timing rules left out take `PoolRules::default()`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub gpu_model: String,
    #[serde(default)]
    pub requires_approval: bool,
    pub granularity_minutes: Option<i32>,
    pub max_booking_minutes: Option<i32>,
    pub horizon_days: Option<i32>,
    pub min_notice_minutes: Option<i32>,
    #[serde(default)]
    pub price_per_unit_hour: f64,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(default)]
    pub tenants: Vec<String>,
    pub kinds: Vec<KindSpec>,
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// IANA zone whose ISO weeks the weekly quotas count; UTC when left out.
    #[serde(default = "utc")]
    pub time_zone: String,
}

fn utc() -> String {
    "UTC".into()
}

/// `PATCH /pools/{id}`: only what is present changes. `kinds` adds new kinds
/// and updates listed ones; `tenants` replaces the list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub gpu_model: Option<String>,
    pub requires_approval: Option<bool>,
    pub granularity_minutes: Option<i32>,
    pub max_booking_minutes: Option<i32>,
    pub horizon_days: Option<i32>,
    pub min_notice_minutes: Option<i32>,
    pub price_per_unit_hour: Option<f64>,
    pub images: Option<Vec<String>>,
    pub tenants: Option<Vec<String>>,
    pub kinds: Option<Vec<KindSpec>>,
    /// Replaces the selector (`{}` removes it).
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Replaces the list.
    pub tolerations: Option<Vec<Toleration>>,
    pub time_zone: Option<String>,
    /// `true` retires the pool (no new bookings), `false` reopens it.
    pub retired: Option<bool>,
}
