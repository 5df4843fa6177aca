//! Each cluster's worker, as the worker page and the sessions on it read it:
//! who leads it, its last pass and last success, and since when it has been
//! unreachable. One writer: the worker holding the cluster's lease.

use crate::backend::error::ServiceResult;
use sqlx::PgPool;
use std::time::Duration;
use uuid::Uuid;

/// `worker` took the lease of `cluster`.
pub async fn took_lead(db: &PgPool, cluster: Uuid, worker: &str) -> ServiceResult<()> {
    sqlx::query(
        "INSERT INTO cluster_status (cluster_id, worker) VALUES ($1, $2)
         ON CONFLICT (cluster_id) DO UPDATE SET worker = $2, leading_since = now()",
    )
    .bind(cluster)
    .bind(worker)
    .execute(db)
    .await?;
    Ok(())
}

/// How a pass over a cluster ended.
pub enum Outcome<'a> {
    /// It ran to its end (sessions it could not converge yet are theirs to say).
    Done,
    /// The cluster failed it: unreachable, or refusing the worker.
    ClusterFailed(&'a str),
    /// Something else did (the database, Berth's own data).
    Failed(&'a str),
}

/// Records a pass: a success clears the cluster's trouble; the cluster
/// failing it starts (or continues) an unreachable spell.
pub async fn record_pass(db: &PgPool, cluster: Uuid, took: Duration, outcome: Outcome<'_>) -> ServiceResult<()> {
    let (error, success, unreachable) = match outcome {
        Outcome::Done => (None, true, false),
        Outcome::ClusterFailed(error) => (Some(error), false, true),
        Outcome::Failed(error) => (Some(error), false, false),
    };
    sqlx::query(
        "UPDATE cluster_status SET pass_at = now(), pass_ms = $2, error = $3,
             last_success_at = CASE WHEN $4 THEN now() ELSE last_success_at END,
             unreachable_since = CASE WHEN $5 THEN coalesce(unreachable_since, now()) WHEN $4 THEN NULL
                                      ELSE unreachable_since END
         WHERE cluster_id = $1",
    )
    .bind(cluster)
    .bind(i32::try_from(took.as_millis()).unwrap_or(i32::MAX))
    .bind(error)
    .bind(success)
    .bind(unreachable)
    .execute(db)
    .await?;
    Ok(())
}

/// For each of `bookings` that holds room and has not ended, on a cluster
/// whose API server has failed every pass since some time: what its card
/// says, in the reader's `zone`.
pub async fn card_notes(
    db: &PgPool,
    bookings: &[Uuid],
    zone: &chrono_tz::Tz,
) -> ServiceResult<std::collections::HashMap<Uuid, String>> {
    let rows: Vec<(Uuid, String, chrono::DateTime<chrono::Utc>)> = sqlx::query_as(
        "SELECT b.id, c.name, s.unreachable_since FROM booking b
         JOIN pool p ON p.id = b.pool_id JOIN cluster c ON c.id = p.cluster_id
         JOIN cluster_status s ON s.cluster_id = c.id
         WHERE b.id = ANY($1) AND s.unreachable_since IS NOT NULL
           AND b.state IN ('pending', 'approved', 'active') AND b.ends_at > now()",
    )
    .bind(bookings)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, cluster, since)| {
            let since = crate::rules::local_time::local_moment(since, zone.name());
            let note = format!(
                "Cluster {cluster} unreachable since {since}: Berth cannot start, repair or end this session there \
                 until it answers again; it catches up then."
            );
            (id, note)
        })
        .collect())
}

/// What the calendar of `pool` says while the pool's cluster is
/// unreachable, for whoever is about to book there.
pub async fn pool_note(db: &PgPool, pool: Uuid, zone: &chrono_tz::Tz) -> ServiceResult<Option<String>> {
    Ok(unreachable_cluster_of(db, pool).await?.map(|(cluster, since)| {
        format!(
            "Cluster {cluster} unreachable since {}: bookings here are still taken, but their sessions start \
             (and running ones end) only once Berth reaches it again.",
            crate::rules::local_time::local_moment(since, zone.name())
        )
    }))
}

/// What the answer to a new booking says while its pool's cluster has been
/// unreachable since `since` (an API caller has no calendar to read it on;
/// the time in RFC 3339, as every time of the API). Admission reads the
/// cluster with the pool's terms (`Terms::warning`).
pub fn booking_warning(cluster: &str, since: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "cluster {cluster} unreachable since {}: the booking is taken, but its session starts only once \
         Berth reaches the cluster again",
        since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// The name of `pool`'s cluster and since when it has been unreachable, if it is.
async fn unreachable_cluster_of(
    db: &PgPool,
    pool: Uuid,
) -> ServiceResult<Option<(String, chrono::DateTime<chrono::Utc>)>> {
    Ok(sqlx::query_as(
        "SELECT c.name, s.unreachable_since FROM pool p JOIN cluster c ON c.id = p.cluster_id
         JOIN cluster_status s ON s.cluster_id = c.id WHERE p.id = $1 AND s.unreachable_since IS NOT NULL",
    )
    .bind(pool)
    .fetch_optional(db)
    .await?)
}
