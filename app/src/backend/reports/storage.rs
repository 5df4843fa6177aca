//! Kept storage (homes and model caches) held per tenant over a period
//! (issue 46): each kept volume's size
//! × the days it was kept within the period (kept homes until now, homes
//! that went until they went), counted to the tenant of its owner's latest
//! booking (the one whose sessions mounted it), at the site's price per
//! GiB-month of 30 days.

use crate::backend::error::ServiceResult;
use crate::model::StorageLine;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};

/// The site's price per GiB-month (0 until an admin sets one).
pub async fn price(db: impl PgExecutor<'_>) -> ServiceResult<f64> {
    Ok(sqlx::query_scalar("SELECT per_gib_month FROM home_price").fetch_optional(db).await?.unwrap_or(0.0))
}

/// Storage held in `[from, to)` on `cluster` (every cluster: `None`), by
/// tenant (slug order), priced at `price`.
pub async fn held(
    db: &mut PgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    (price, cluster): (f64, Option<uuid::Uuid>),
) -> ServiceResult<Vec<StorageLine>> {
    let rows: Vec<(String, f64)> = sqlx::query_as(
        "SELECT t.slug,
                sum(h.size_gib * extract(epoch FROM least(coalesce(h.gone_at, now()), $2) - greatest(h.created_at, $1))
                    / 86400.0)::float8
         FROM home h
         JOIN LATERAL (SELECT b.tenant_id FROM booking b WHERE b.user_id = h.user_id
                       ORDER BY b.ends_at DESC, b.id LIMIT 1) last ON true
         JOIN tenant t ON t.id = last.tenant_id
         WHERE h.created_at < $2 AND coalesce(h.gone_at, now()) > $1 AND ($3::uuid IS NULL OR h.cluster_id = $3)
         GROUP BY t.slug ORDER BY t.slug",
    )
    .bind(from)
    .bind(to)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(tenant, gib_days)| {
            // Rounded once, here: the page and the CSV show these figures.
            let showback_cost = (gib_days / 30.0 * price * 100.0).round() / 100.0;
            StorageLine { tenant, gib_days: (gib_days * 10.0).round() / 10.0, showback_cost }
        })
        .collect())
}
