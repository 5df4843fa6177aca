//! The cluster's PriorityClasses and RuntimeClasses as the worker last read
//! them: a pool may name only one the cluster has (`check`), so a typo is a
//! 422 on the form rather than a workspace whose pod never starts.

use crate::backend::error::ServiceResult;
use crate::rules::FieldError;
use sqlx::{PgConnection, PgPool};

/// Replaces what is known of the cluster's classes (the worker, each sweep).
pub async fn record(db: &PgPool, priority: &[String], runtime: &[String]) -> ServiceResult<()> {
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM cluster_class").execute(&mut *tx).await?;
    sqlx::query(
        "INSERT INTO cluster_class (kind, name)
         SELECT 'priority', unnest($1::text[]) UNION ALL SELECT 'runtime', unnest($2::text[])",
    )
    .bind(priority)
    .bind(runtime)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO cluster_class_read (read_at) VALUES (now())
         ON CONFLICT (singleton) DO UPDATE SET read_at = now()",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Refuses a class the cluster does not have, naming the ones it has; checks
/// nothing before the worker first read them.
pub async fn check(conn: &mut PgConnection, priority: Option<&str>, runtime: Option<&str>) -> ServiceResult<()> {
    let read: Option<bool> =
        sqlx::query_scalar("SELECT true FROM cluster_class_read").fetch_optional(&mut *conn).await?;
    if read.is_none() {
        return Ok(());
    }
    for (field, kind, object, name) in [
        ("priority_class", "priority", "PriorityClass", priority),
        ("runtime_class", "runtime", "RuntimeClass", runtime),
    ] {
        let Some(name) = name else { continue };
        // `system-` priority classes are never a pool's (pool_spec), so not offered.
        let known: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM cluster_class WHERE kind = $1 AND name NOT LIKE 'system-%' ORDER BY name",
        )
        .bind(kind)
        .fetch_all(&mut *conn)
        .await?;
        if !known.iter().any(|k| k == name) {
            let has = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(FieldError::new(field, format!("the cluster has no {object} {name} (it has: {has})")).into());
        }
    }
    Ok(())
}
