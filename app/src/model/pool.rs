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

/// Where and how a pool's sessions run: every pod of its sessions carries
/// the node selector (the cluster refuses pods without it) and the
/// tolerations, and may name the pool's priority and runtime classes (no
/// others: the cluster refuses them); the workspace has the pool's grace
/// period to stop when the window ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct Placement {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", sqlx(json))]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", sqlx(json))]
    pub tolerations: Vec<Toleration>,
    /// The PriorityClass the workspace runs at, and the only one its
    /// session's pods may name; none: they name none.
    #[serde(default)]
    pub priority_class: Option<String>,
    /// The RuntimeClass likewise (some GPU nodes need `nvidia`).
    #[serde(default)]
    pub runtime_class: Option<String>,
    /// Seconds between SIGTERM and the end of the workspace's pods when the
    /// window ends, to checkpoint into the home (0–30).
    #[serde(default = "full_grace")]
    pub end_grace_seconds: i32,
    /// A ReadWriteMany storage class whose volumes, made by the cluster
    /// admin for one tenant each (label `berth.io/team-cache`), hold that
    /// team's shared model cache at /models; none: each person's own.
    #[serde(default)]
    pub team_cache_class: Option<String>,
}

/// The most any session pod may take to stop (policy berth-session-devices).
pub const MAX_END_GRACE_SECONDS: i32 = 30;

fn full_grace() -> i32 {
    MAX_END_GRACE_SECONDS
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            priority_class: None,
            runtime_class: None,
            end_grace_seconds: MAX_END_GRACE_SECONDS,
            team_cache_class: None,
        }
    }
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
    /// Units that fill one GPU: 1 for whole GPUs, e.g. 4 for `1g.24gb` slices
    /// of an RTX PRO 6000. A unit-hour is `1 / slices_per_gpu` GPU-hours.
    pub slices_per_gpu: i32,
    /// The kind's own price per unit-hour; `None` charges its share of the
    /// pool's price per GPU-hour.
    pub price_per_unit_hour: Option<f64>,
    /// Sessions of this kind lend their idle booked units to the pool's
    /// backfill queue (`--kueue`), which gives them back at once.
    pub lend_idle: bool,
}

impl PoolKind {
    /// Whole-GPU equivalents of one unit.
    pub fn gpu_share(&self) -> f64 {
        1.0 / f64::from(self.slices_per_gpu.max(1))
    }

    /// What one unit costs for an hour, given the pool's price per GPU-hour.
    pub fn unit_price(&self, price_per_gpu_hour: f64) -> f64 {
        self.price_per_unit_hour.unwrap_or(price_per_gpu_hour * self.gpu_share())
    }
}

/// A pool as its readers see it; the database's row, with its kinds read
/// beside it (`backend::pools::read`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct Pool {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub gpu_model: String,
    pub requires_approval: bool,
    #[serde(flatten)]
    #[cfg_attr(feature = "ssr", sqlx(flatten))]
    pub rules: PoolRules,
    /// What clicking a free slot on the calendar books there, in minutes.
    #[serde(default = "default_booking_minutes")]
    pub default_booking_minutes: i32,
    /// Showback price of one whole GPU for an hour, in the site's currency;
    /// a kind without its own price pays its share of it.
    pub price_per_gpu_hour: f64,
    /// Workspace images users may pick; the first is the default.
    pub images: Vec<String>,
    /// Tenant slugs that may book this pool; empty means every tenant.
    pub tenants: Vec<String>,
    #[cfg_attr(feature = "ssr", sqlx(skip))]
    pub kinds: Vec<PoolKind>,
    #[serde(flatten)]
    #[cfg_attr(feature = "ssr", sqlx(flatten))]
    pub placement: Placement,
    /// IANA zone whose ISO weeks the weekly quotas count.
    pub time_zone: String,
    /// Retired by an admin: no new bookings, the existing ones are kept.
    #[serde(default)]
    pub retired: bool,
    #[serde(flatten)]
    #[cfg_attr(feature = "ssr", sqlx(flatten))]
    pub scheduling: Scheduling,
    /// The cluster its sessions run on, by name.
    #[serde(default)]
    pub cluster: String,
}

/// What the pool tells the cluster's own schedulers (acting only with the
/// worker's `--kueue` and `--scale-ahead`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct Scheduling {
    /// Where the pool's backfill LocalQueue lives: batch Jobs submitted
    /// there run on its lending kinds' idle booked units (`--kueue`).
    #[serde(default)]
    pub backfill_namespace: Option<String>,
    /// The pool's own lead time for room held ahead of a window, minutes;
    /// none follows the site's `--scale-ahead`, 0 holds none.
    #[serde(default)]
    pub scale_ahead_minutes: Option<i32>,
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

/// The compute slices (`g`) and memory (GB) of a MIG kind; `None` for whole GPUs.
pub fn mig_profile(kind: &str) -> Option<(i32, i32)> {
    let (compute, memory) = kind.strip_prefix("nvidia.com/mig-")?.split_once("g.")?;
    Some((compute.parse().ok()?, memory.strip_suffix("gb")?.parse().ok()?))
}

/// How many units of a kind fill one GPU, as a new kind defaults it (the
/// admin may state another): from NVIDIA's MIG profile tables. A profile
/// `Ng` fits 7/N times on the 7-slice GPUs (A100, H100, H200, B200), except
/// the 1g profiles with a quarter of the memory (A100 80GB's 1g.20gb, H100
/// NVL's and RTX PRO 6000's 1g.24gb, H200's 1g.35gb, B200's 1g.45gb) and the
/// RTX PRO 6000's 2g.48gb, which fit four and two. A whole GPU is one.
pub fn default_slices_per_gpu(kind: &str) -> i32 {
    match mig_profile(kind) {
        None => 1,
        Some((1, 20 | 24 | 35 | 45)) => 4,
        Some((2, 48)) => 2,
        Some((compute, _)) => (7 / compute.max(1)).max(1),
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
    /// Units that fill one GPU; left out, the MIG profile's (1 for whole GPUs).
    #[serde(default)]
    pub slices_per_gpu: Option<i32>,
    /// Left out, the kind pays its share of the pool's price per GPU-hour.
    #[serde(default)]
    pub price_per_unit_hour: Option<f64>,
    /// Lend idle booked units to the pool's backfill queue.
    #[serde(default)]
    pub lend_idle: bool,
}

impl From<KindSpec> for PoolKind {
    fn from(s: KindSpec) -> Self {
        Self {
            slices_per_gpu: s.slices_per_gpu.unwrap_or_else(|| default_slices_per_gpu(&s.kind)),
            price_per_unit_hour: s.price_per_unit_hour,
            lend_idle: s.lend_idle,
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
    /// See `Pool` (an hour, or one slot where an hour does not fit).
    #[serde(default)]
    pub default_booking_minutes: Option<i32>,
    #[serde(default)]
    pub price_per_gpu_hour: f64,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(default)]
    pub tenants: Vec<String>,
    pub kinds: Vec<KindSpec>,
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// See `Placement`.
    #[serde(default)]
    pub priority_class: Option<String>,
    #[serde(default)]
    pub runtime_class: Option<String>,
    /// See `Placement` (30 when left out).
    #[serde(default)]
    pub end_grace_seconds: Option<i32>,
    /// See `Placement`.
    #[serde(default)]
    pub team_cache_class: Option<String>,
    /// IANA zone whose ISO weeks the weekly quotas count; UTC when left out.
    #[serde(default = "utc")]
    pub time_zone: String,
    /// See `Scheduling` (not flattened: unknown fields are refused here).
    #[serde(default)]
    pub backfill_namespace: Option<String>,
    #[serde(default)]
    pub scale_ahead_minutes: Option<i32>,
    /// The cluster its sessions run on, by name; may be left out while
    /// Berth has one cluster.
    #[serde(default)]
    pub cluster: Option<String>,
}

/// A pool with every field as `POST /pools` takes it when left out (a
/// name and kinds to be filled in): what seeds, fixtures and benchmarks
/// start from. Read from the API's own defaults, so there is no second list.
impl Default for NewPool {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({ "name": "", "kinds": [] })).expect("a name and kinds make a NewPool")
    }
}

fn utc() -> String {
    "UTC".into()
}

/// An hour: what a pool books on a click unless its admin says otherwise.
pub fn default_booking_minutes() -> i32 {
    60
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
    pub default_booking_minutes: Option<i32>,
    pub price_per_gpu_hour: Option<f64>,
    pub images: Option<Vec<String>>,
    pub tenants: Option<Vec<String>>,
    pub kinds: Option<Vec<KindSpec>>,
    /// Replaces the selector (`{}` removes it).
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Replaces the list.
    pub tolerations: Option<Vec<Toleration>>,
    /// `""` removes it.
    pub priority_class: Option<String>,
    /// `""` removes it.
    pub runtime_class: Option<String>,
    pub end_grace_seconds: Option<i32>,
    /// `""` removes it.
    pub team_cache_class: Option<String>,
    pub time_zone: Option<String>,
    /// `true` retires the pool (no new bookings), `false` reopens it.
    pub retired: Option<bool>,
    /// `""` removes it.
    pub backfill_namespace: Option<String>,
    /// `-1` removes the pool's own lead time (the site's applies again).
    pub scale_ahead_minutes: Option<i32>,
    /// Moves the pool to another cluster (only while it holds no live or
    /// future bookings).
    pub cluster: Option<String>,
}

#[cfg(test)]
mod tests;
