//! What admission reads under the kinds' locks, for every pool+kind of a
//! batch in one round trip: each kind's terms (rules, capacity, who may book,
//! quotas, blackouts) and the capacity-holding bookings that overlap the
//! windows asked of it.

use crate::backend::admission::request::Request;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{PoolRules, TenantQuota, Window};
use crate::rules::capacity::Usage;
use crate::rules::FieldError;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

#[derive(sqlx::FromRow)]
pub struct Terms {
    pub pool_id: Uuid,
    pub kind: String,
    #[sqlx(flatten)]
    pub rules: PoolRules,
    pub requires_approval: bool,
    images: Vec<String>,
    pub capacity: Option<i32>,
    /// Units of the kind that fill a GPU (weekly quotas count GPU-hours).
    pub slices_per_gpu: Option<i32>,
    /// Tenants that may book the pool; empty means every tenant.
    tenants: Vec<Uuid>,
    pub now: DateTime<Utc>,
    pub time_zone: String,
    pub retired: bool,
    /// The pool's cluster, and since when Berth cannot reach it, if it
    /// cannot: the answer to a booking says so (read here, not in a round
    /// trip of its own).
    pub cluster: Option<String>,
    pub unreachable_since: Option<DateTime<Utc>>,
    // Every tenant quota of this pool+kind, one array per column.
    quota_tenants: Vec<Uuid>,
    quota_units: Vec<Option<i32>>,
    quota_hours: Vec<Option<f64>>,
    // Blackouts of this kind (or the whole pool) within the span asked of it.
    blackout_starts: Vec<DateTime<Utc>>,
    blackout_ends: Vec<DateTime<Utc>>,
    blackout_reasons: Vec<String>,
    // The capacity-holding bookings overlapping the windows asked of this
    // kind, read in the same round trip (and after the locks, so no
    // admission can slip in).
    starts: Vec<DateTime<Utc>>,
    ends: Vec<DateTime<Utc>>,
    quantities: Vec<i32>,
}

impl Terms {
    pub fn overlapping(&self) -> Vec<Usage> {
        (self.starts.iter().zip(&self.ends).zip(&self.quantities))
            .map(|((&start, &end), &quantity)| Usage { start, end, quantity })
            .collect()
    }

    /// The quotas of the tenants asking.
    pub fn quotas_for<'r>(&self, asking: impl Iterator<Item = &'r Request> + Clone) -> HashMap<Uuid, TenantQuota> {
        (self.quota_tenants.iter().zip(&self.quota_units).zip(&self.quota_hours))
            .filter(|((tenant, _), _)| asking.clone().any(|r| r.tenant.id == **tenant))
            .map(|((&tenant, &max_units), &gpu_hours_per_week)| (tenant, TenantQuota { max_units, gpu_hours_per_week }))
            .collect()
    }

    /// The first blackout `window` overlaps, as its refusal.
    pub fn closed(&self, window: Window) -> Option<ServiceError> {
        (self.blackout_starts.iter().zip(&self.blackout_ends).zip(&self.blackout_reasons))
            .find(|((&start, &end), _)| start < window.end && window.start < end)
            .map(|((&start, &end), reason)| {
                crate::backend::pools::blackouts::windows::closed(
                    &crate::model::Blackout {
                        id: Uuid::nil(),
                        pool_id: self.pool_id,
                        kind: None,
                        start,
                        end,
                        reason: reason.clone(),
                    },
                    &self.time_zone,
                )
            })
    }

    /// What the answer to a booking here says while the pool's cluster is unreachable.
    pub fn warning(&self) -> Option<String> {
        let (cluster, since) = (self.cluster.as_deref()?, self.unreachable_since?);
        Some(crate::backend::sessions::cluster_status::booking_warning(cluster, since))
    }

    pub fn may_book(&self, tenant: Uuid) -> bool {
        self.tenants.is_empty() || self.tenants.contains(&tenant)
    }

    pub fn image(&self, asked: &Option<String>) -> Result<String, FieldError> {
        match asked {
            Some(image) if self.images.contains(image) || self.images.is_empty() => Ok(image.clone()),
            Some(_) => Err(FieldError::new("image", format!("must be one of: {}", self.images.join(", ")))),
            None => Ok(self.images.first().cloned().unwrap_or_default()),
        }
    }
}

/// The terms of every pool+kind the requests ask for, one row each; a pool
/// that does not exist has no row.
pub async fn read_terms(tx: &mut sqlx::PgConnection, requests: &[&Request]) -> ServiceResult<Vec<Terms>> {
    let column = |f: fn(&Request) -> Uuid| requests.iter().map(|r| f(r)).collect::<Vec<_>>();
    let kinds: Vec<&str> = requests.iter().map(|r| r.kind.as_str()).collect();
    let starts: Vec<DateTime<Utc>> = requests.iter().map(|r| r.window.start).collect();
    let ends: Vec<DateTime<Utc>> = requests.iter().map(|r| r.window.end).collect();
    Ok(sqlx::query_as(
        "WITH asked AS (
             -- Each kind's windows as one multirange: the GiST index answers
             -- \"overlaps any of them\" in one scan, each booking once.
             SELECT pool_id, kind, range_agg(tstzrange(s, e)) AS windows, min(s) AS first_start, max(e) AS last_end
             FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS r(pool_id, kind, s, e)
             GROUP BY pool_id, kind
         )
         SELECT a.pool_id, a.kind, p.granularity_minutes, p.max_booking_minutes, p.horizon_days, p.min_notice_minutes,
                p.requires_approval, p.images, k.capacity, k.slices_per_gpu, now() AS now, p.time_zone,
                p.retired_at IS NOT NULL AS retired,
                -- Scalar lookups by key: a join here would change the plan of the overlap read.
                (SELECT c.name FROM cluster c WHERE c.id = p.cluster_id) AS cluster,
                (SELECT cs.unreachable_since FROM cluster_status cs WHERE cs.cluster_id = p.cluster_id) AS unreachable_since,
                ARRAY(SELECT pt.tenant_id FROM pool_tenant pt WHERE pt.pool_id = p.id) AS tenants,
                q.quota_tenants, q.quota_units, q.quota_hours,
                bo.blackout_starts, bo.blackout_ends, bo.blackout_reasons,
                o.starts, o.ends, o.quantities
         FROM asked a
         JOIN pool p ON p.id = a.pool_id
         LEFT JOIN pool_kind k ON k.pool_id = p.id AND k.kind = a.kind
         -- One aggregate level each, so the arrays of a group list their rows in the same order.
         CROSS JOIN LATERAL (
             SELECT coalesce(array_agg(tq.tenant_id ORDER BY tq.tenant_id), '{}') AS quota_tenants,
                    coalesce(array_agg(tq.max_units ORDER BY tq.tenant_id), '{}') AS quota_units,
                    coalesce(array_agg(tq.gpu_hours_per_week ORDER BY tq.tenant_id), '{}') AS quota_hours
             FROM tenant_quota tq WHERE tq.pool_id = a.pool_id AND tq.kind = a.kind
         ) q
         CROSS JOIN LATERAL (
             SELECT coalesce(array_agg(b.starts_at ORDER BY b.starts_at, b.id), '{}') AS blackout_starts,
                    coalesce(array_agg(b.ends_at ORDER BY b.starts_at, b.id), '{}') AS blackout_ends,
                    coalesce(array_agg(b.reason ORDER BY b.starts_at, b.id), '{}') AS blackout_reasons
             FROM blackout b
             WHERE b.pool_id = a.pool_id AND (b.kind IS NULL OR b.kind = a.kind)
               AND b.ends_at > a.first_start AND b.starts_at < a.last_end
         ) bo
         CROSS JOIN LATERAL (
             SELECT coalesce(array_agg(bk.starts_at), '{}') AS starts, coalesce(array_agg(bk.ends_at), '{}') AS ends,
                    coalesce(array_agg(bk.quantity), '{}') AS quantities
             FROM booking bk
             WHERE bk.pool_id = a.pool_id AND bk.kind = a.kind AND bk.state IN ('pending', 'approved', 'active')
               AND tstzrange(bk.starts_at, bk.ends_at) && a.windows
         ) o",
    )
    .bind(column(|r| r.pool_id))
    .bind(&kinds)
    .bind(&starts)
    .bind(&ends)
    .fetch_all(tx)
    .await?)
}
