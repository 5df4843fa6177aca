//! Which worker drives a cluster: one lease per cluster, in PostgreSQL.

use crate::backend::error::ServiceResult;
use uuid::Uuid;

/// The lease of a cluster's worker: a session-level advisory lock on the
/// cluster's own key, held as long as `conn` lives, so exactly one worker
/// drives a cluster at a time whichever shape it runs in. `None` (a worker
/// over every pool, as before clusters were data) takes the default
/// cluster's key, the one every worker took then: an older worker and a
/// newer one never drive the same cluster during an upgrade.
pub async fn try_lead(conn: &mut sqlx::PgConnection, cluster: Option<Uuid>) -> ServiceResult<bool> {
    Ok(sqlx::query_scalar(
        "SELECT pg_try_advisory_lock(coalesce((SELECT lease_key FROM cluster WHERE id = $1), 7243815062))",
    )
    .bind(cluster)
    .fetch_one(conn)
    .await?)
}
