//! A pool's own columns, bound in one place for both of its writes.

use super::checks::validate_time_zone;
use crate::backend::error::ServiceResult;
use crate::model::{Placement, PoolRules, Scheduling};
use crate::rules::pool_spec;
use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;

/// A pool's own columns as a write leaves them: a new pool's, defaults
/// filled in, or the current pool's with a patch applied. Both writes bind
/// them here, in the order of `COLUMNS`, so a new column is added once.
pub(super) struct Columns {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) gpu_model: String,
    pub(super) requires_approval: bool,
    pub(super) rules: PoolRules,
    pub(super) default_booking_minutes: i32,
    pub(super) price_per_gpu_hour: f64,
    pub(super) images: Vec<String>,
    pub(super) placement: Placement,
    pub(super) time_zone: String,
    pub(super) scheduling: Scheduling,
}

pub(super) const COLUMNS: [&str; 20] = [
    "name",
    "description",
    "gpu_model",
    "requires_approval",
    "granularity_minutes",
    "max_booking_minutes",
    "horizon_days",
    "min_notice_minutes",
    "default_booking_minutes",
    "price_per_gpu_hour",
    "images",
    "node_selector",
    "tolerations",
    "priority_class",
    "runtime_class",
    "end_grace_seconds",
    "team_cache_class",
    "time_zone",
    "backfill_namespace",
    "scale_ahead_minutes",
];

impl Columns {
    /// Binds the columns, in `COLUMNS`' order, after what `query` has bound.
    pub(super) fn bind(self, query: Query<'_, Postgres, PgArguments>) -> Query<'_, Postgres, PgArguments> {
        let (rules, placement) = (self.rules, self.placement);
        query
            .bind(self.name)
            .bind(self.description)
            .bind(self.gpu_model)
            .bind(self.requires_approval)
            .bind(rules.granularity_minutes)
            .bind(rules.max_booking_minutes)
            .bind(rules.horizon_days)
            .bind(rules.min_notice_minutes)
            .bind(self.default_booking_minutes)
            .bind(self.price_per_gpu_hour)
            .bind(self.images)
            .bind(sqlx::types::Json(placement.node_selector))
            .bind(sqlx::types::Json(placement.tolerations))
            .bind(placement.priority_class)
            .bind(placement.runtime_class)
            .bind(placement.end_grace_seconds)
            .bind(placement.team_cache_class)
            .bind(self.time_zone)
            .bind(self.scheduling.backfill_namespace)
            .bind(self.scheduling.scale_ahead_minutes)
    }

    /// Checks what must agree between the columns, naming the field at fault.
    pub(super) fn validate(&self, lending: bool) -> ServiceResult<()> {
        pool_spec::validate_name(&self.name)?;
        pool_spec::validate_rules(&self.rules)?;
        pool_spec::validate_default_booking(self.default_booking_minutes, &self.rules)?;
        pool_spec::validate_price("price_per_gpu_hour", self.price_per_gpu_hour)?;
        pool_spec::validate_images(&self.images)?;
        let placement = &self.placement;
        pool_spec::validate_placement(&placement.node_selector, &placement.tolerations)?;
        pool_spec::validate_pod_classes(placement.priority_class.as_deref(), placement.runtime_class.as_deref())?;
        pool_spec::validate_end_grace(placement.end_grace_seconds)?;
        pool_spec::validate_team_cache_class(placement.team_cache_class.as_deref())?;
        validate_time_zone(&self.time_zone)?;
        pool_spec::validate_scheduling(&self.scheduling, lending)?;
        Ok(())
    }
}
