//! A member cluster's worker signs in to PostgreSQL as a role of its own
//! (issue 60, 5b), so a compromised member writes its own cluster's rows
//! and nothing else: row security (migration `member_rows`) keeps each of
//! its writes to its cluster's pools, bookings, homes and status, and its
//! grants keep it off every other table and off the tables with secrets.
//! `berth member-role` sets a role up; a worker signed in as one knows it is
//! confined (`confined_to`) and leaves the site's duties to the hub.

use sqlx::PgPool;

/// Tables a member never reads: credentials, sign-ins, feed and webhook
/// secrets, stored answers, and whom a notification went to.
const SECRET: &[&str] = &[
    "api_token",
    "web_session",
    "calendar_feed",
    "webhook",
    "idempotency_key",
    "notification_delivery",
    "notification_preference",
];

/// What `member-role` granted, for the operator to read.
#[derive(Debug, PartialEq)]
pub struct Granted {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
}

/// Why a role cannot be a member's.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("--role {0}: a PostgreSQL role name is lowercase letters, digits and _, starting with a letter or _")]
    Name(String),
    #[error("--role {0}: no such PostgreSQL role (create it first: CREATE ROLE {0} LOGIN PASSWORD '…')")]
    NoRole(String),
    #[error("--role {0}: a superuser, a role that bypasses row security, or the tables' owner is never confined")]
    Unconfinable(String),
    #[error("--cluster {0}: no such cluster (add it on the Clusters page first)")]
    NoCluster(String),
    #[error("--cluster {0}: only a cluster with its own worker (access in-cluster, not default) has a member role")]
    NotMember(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Records `role` as the role of `cluster`'s worker and grants it what that
/// worker reads and writes; the migration's policies confine its writes.
/// Run as the tables' owner. Running it again changes nothing.
pub async fn grant(db: &PgPool, cluster: &str, role: &str) -> Result<Granted, Refused> {
    let valid = role.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && role.len() <= 63
        && role.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(Refused::Name(role.into()));
    }
    let mut tx = db.begin().await?;
    let confinable: Option<bool> = sqlx::query_scalar(
        "SELECT NOT (r.rolsuper OR r.rolbypassrls OR r.rolname = current_user
                     OR EXISTS (SELECT 1 FROM pg_tables t WHERE t.schemaname = current_schema() AND t.tableowner = r.rolname))
         FROM pg_roles r WHERE r.rolname = $1",
    )
    .bind(role)
    .fetch_optional(&mut *tx)
    .await?;
    match confinable {
        None => return Err(Refused::NoRole(role.into())),
        Some(false) => return Err(Refused::Unconfinable(role.into())),
        Some(true) => {}
    }
    let access: Option<(String, bool)> = sqlx::query_as("SELECT access, name = 'default' FROM cluster WHERE name = $1")
        .bind(cluster)
        .fetch_optional(&mut *tx)
        .await?;
    match access {
        None => return Err(Refused::NoCluster(cluster.into())),
        Some((access, default)) if access != "in-cluster" || default => return Err(Refused::NotMember(cluster.into())),
        Some(_) => {}
    }
    sqlx::query("UPDATE cluster SET db_role = $2 WHERE name = $1").bind(cluster).bind(role).execute(&mut *tx).await?;
    // The writes are exactly the tables the migration gave row policies to.
    let writes: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT tablename::text FROM pg_policies
         WHERE schemaname = current_schema() AND policyname = 'berth_member_inserts' ORDER BY 1",
    )
    .fetch_all(&mut *tx)
    .await?;
    let reads: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND NOT tablename = ANY($1) ORDER BY 1",
    )
    .bind(SECRET)
    .fetch_all(&mut *tx)
    .await?;
    // Identifiers checked above (role) or read from the catalogue (tables).
    let quoted = |names: &[String]| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    for statement in [
        format!("GRANT USAGE ON SCHEMA \"{}\" TO \"{role}\"", schema(&mut tx).await?),
        format!("GRANT SELECT ON {} TO \"{role}\"", quoted(&reads)),
        format!("GRANT INSERT, UPDATE, DELETE ON {} TO \"{role}\"", quoted(&writes)),
        format!("GRANT USAGE ON ALL SEQUENCES IN SCHEMA \"{}\" TO \"{role}\"", schema(&mut tx).await?),
    ] {
        sqlx::query(&statement).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(Granted { reads, writes })
}

async fn schema(tx: &mut sqlx::PgConnection) -> Result<String, sqlx::Error> {
    sqlx::query_scalar("SELECT current_schema()::text").fetch_one(tx).await
}

/// Grants each recorded member role what this release's tables need, after
/// the migrations (so a new table is granted with the release that makes
/// it). A role dropped since, or a cluster no longer in-cluster, is said in
/// the log and left as it is.
pub async fn regrant(db: &PgPool) -> Result<(), sqlx::Error> {
    let members: Vec<(String, String)> =
        sqlx::query_as("SELECT name, db_role FROM cluster WHERE db_role IS NOT NULL ORDER BY name")
            .fetch_all(db)
            .await?;
    for (cluster, role) in members {
        if let Err(err) = grant(db, &cluster, &role).await {
            tracing::warn!(%cluster, %role, error = %err, "cannot grant a member's database role this release's tables");
        }
    }
    Ok(())
}

/// The cluster this connection's role is the worker of, if it is a member's
/// role. `None` on a database not yet migrated this far (no member then).
pub async fn confined_to(db: &PgPool) -> Result<Option<String>, sqlx::Error> {
    let migrated: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                        WHERE table_schema = current_schema() AND table_name = 'cluster' AND column_name = 'db_role')",
    )
    .fetch_one(db)
    .await?;
    if !migrated {
        return Ok(None);
    }
    sqlx::query_scalar("SELECT name FROM cluster WHERE db_role = current_user").fetch_optional(db).await
}
