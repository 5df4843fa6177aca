//! A member cluster's worker signs in to PostgreSQL as a role of its own
//! (issue 60, 5b), so a compromised member writes its own cluster's rows
//! and nothing else: row security (migration `member_rows`) keeps each of
//! its writes to its cluster's pools, bookings, homes and status, and its
//! grants keep it off every other table and off the tables with secrets.
//! `berth member-role` sets a role up; a worker signed in as one knows it is
//! confined (`confinement`) and leaves the site's duties to the hub.

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
    pub inserts: Vec<String>,
    pub updates: Vec<String>,
}

/// What the worker changes of a booking (`bookings::change`'s moves): not
/// whose it is, where or what, so no change of a member's reaches another
/// person, tenant, pool or booking.
const BOOKING_MOVES: &[&str] = &["state", "ends_at", "planned_ends_at", "released_as", "updated_at"];

/// Why a role cannot be a member's.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("--role {0}: a PostgreSQL role name is lowercase letters, digits and _, starting with a letter or _")]
    Name(String),
    #[error("--role {0}: no such PostgreSQL role (create it first: CREATE ROLE {0} LOGIN PASSWORD '…')")]
    NoRole(String),
    #[error("--role {0}: a superuser, a role that bypasses row security, acts as the tables' owner or may become another role is never confined")]
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
/// A role the cluster had before is detached (it writes nothing) and loses
/// its grants. Run as the tables' owner. Running it again changes nothing.
pub async fn grant(db: &PgPool, cluster: &str, role: &str) -> Result<Granted, Refused> {
    let valid = role.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && role.len() <= 63
        && role.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(Refused::Name(role.into()));
    }
    let mut tx = db.begin().await?;
    // Never the owner, nor a role that acts as the owner or past row
    // security, nor one that may become another (`SET ROLE`).
    let confinable: Option<bool> = sqlx::query_scalar(
        "SELECT NOT (r.rolsuper OR r.rolbypassrls OR pg_has_role(r.oid, t.tableowner, 'MEMBER')
                     OR EXISTS (SELECT 1 FROM pg_auth_members a WHERE a.member = r.oid))
         FROM pg_roles r, pg_tables t
         WHERE r.rolname = $1 AND t.schemaname = current_schema() AND t.tablename = 'booking'",
    )
    .bind(role)
    .fetch_optional(&mut *tx)
    .await?;
    match confinable {
        None => return Err(Refused::NoRole(role.into())),
        Some(false) => return Err(Refused::Unconfinable(role.into())),
        Some(true) => {}
    }
    let found: Option<(uuid::Uuid, String, bool)> =
        sqlx::query_as("SELECT id, access, name = 'default' FROM cluster WHERE name = $1")
            .bind(cluster)
            .fetch_optional(&mut *tx)
            .await?;
    let cluster_id = match found {
        None => return Err(Refused::NoCluster(cluster.into())),
        Some((_, access, default)) if access != "in-cluster" || default => {
            return Err(Refused::NotMember(cluster.into()))
        }
        Some((id, _, _)) => id,
    };
    let before: Vec<String> = sqlx::query_scalar(
        "UPDATE member_role SET cluster_id = NULL WHERE cluster_id = $1 AND role <> $2 RETURNING role",
    )
    .bind(cluster_id)
    .bind(role)
    .fetch_all(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO member_role (role, cluster_id) VALUES ($1, $2) ON CONFLICT (role) DO UPDATE SET cluster_id = $2",
    )
    .bind(role)
    .bind(cluster_id)
    .execute(&mut *tx)
    .await?;
    let schema: String = sqlx::query_scalar("SELECT current_schema()::text").fetch_one(&mut *tx).await?;
    for old in &before {
        revoke(&mut tx, &schema, old).await?;
    }
    // Exactly what this release grants, whatever an earlier one did.
    revoke(&mut tx, &schema, role).await?;
    let policed = |policy: &'static str| {
        sqlx::query_scalar::<_, String>(
            "SELECT DISTINCT tablename::text FROM pg_policies
             WHERE schemaname = current_schema() AND policyname = $1 ORDER BY 1",
        )
        .bind(policy)
    };
    // The writes are exactly the tables the migration gave row policies to.
    let inserts = policed("berth_member_inserts").fetch_all(&mut *tx).await?;
    let updates = policed("berth_member_updates").fetch_all(&mut *tx).await?;
    let reads: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND NOT tablename = ANY($1) ORDER BY 1",
    )
    .bind(SECRET)
    .fetch_all(&mut *tx)
    .await?;
    // Identifiers checked above (role) or read from the catalogue (tables, columns).
    let quoted = |names: &[String]| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    let mut statements = vec![
        format!("GRANT USAGE ON SCHEMA \"{schema}\" TO \"{role}\""),
        format!("GRANT SELECT ON {} TO \"{role}\"", quoted(&reads)),
    ];
    for (table, verb) in inserts.iter().map(|t| (t, "INSERT")).chain(updates.iter().map(|t| (t, "UPDATE"))) {
        // By column: never an identity column (whose values a member could
        // take ahead of everyone else's inserts), and of a booking its moves.
        let columns = match (table.as_str(), verb) {
            ("booking", "UPDATE") => BOOKING_MOVES.iter().map(|c| c.to_string()).collect(),
            _ => writable_columns(&mut tx, table).await?,
        };
        statements.push(format!("GRANT {verb} ({}) ON \"{table}\" TO \"{role}\"", quoted(&columns)));
    }
    for statement in statements {
        sqlx::query(&statement).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(Granted { reads, inserts, updates })
}

/// A table's columns but its identity and generated ones.
async fn writable_columns(tx: &mut sqlx::PgConnection, table: &str) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT attname::text FROM pg_attribute
         WHERE attrelid = to_regclass(quote_ident($1)) AND attnum > 0 AND NOT attisdropped
           AND attidentity = '' AND attgenerated = '' ORDER BY attnum",
    )
    .bind(table)
    .fetch_all(tx)
    .await
}

/// Takes every grant `grant` gave `role` (a role of the catalogue, so its
/// name is safe to quote) but the read of `member_role`, by which its
/// worker learns it is detached.
async fn revoke(tx: &mut sqlx::PgConnection, schema: &str, role: &str) -> Result<(), sqlx::Error> {
    for statement in [
        format!("REVOKE ALL ON ALL TABLES IN SCHEMA \"{schema}\" FROM \"{role}\""),
        format!("REVOKE ALL ON ALL SEQUENCES IN SCHEMA \"{schema}\" FROM \"{role}\""),
        format!("GRANT SELECT ON member_role TO \"{role}\""),
    ] {
        sqlx::query(&statement).execute(&mut *tx).await?;
    }
    Ok(())
}

/// Grants each member role what this release's tables need, after the
/// migrations (so a new table is granted with the release that makes it),
/// and takes every grant from a role whose cluster has gone. A role
/// dropped since is said in the log and left as it is.
pub async fn regrant(db: &PgPool) -> Result<(), sqlx::Error> {
    let members: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT m.role, c.name FROM member_role m LEFT JOIN cluster c ON c.id = m.cluster_id ORDER BY m.role",
    )
    .fetch_all(db)
    .await?;
    for (role, cluster) in members {
        let done = match &cluster {
            Some(cluster) => grant(db, cluster, &role).await.map(|_| ()),
            None => detach(db, &role).await.map_err(Refused::from),
        };
        if let Err(err) = done {
            tracing::warn!(%role, ?cluster, error = %err, "cannot bring a member's database role up to this release");
        }
    }
    Ok(())
}

async fn detach(db: &PgPool, role: &str) -> Result<(), sqlx::Error> {
    let mut tx = db.begin().await?;
    let schema: String = sqlx::query_scalar("SELECT current_schema()::text").fetch_one(&mut *tx).await?;
    revoke(&mut tx, &schema, role).await?;
    tx.commit().await
}

/// What this connection's role may write.
#[derive(Debug, PartialEq)]
pub enum Confinement {
    /// A role never made a member's (the owner's, the hub's).
    None,
    /// The worker of this cluster: its rows only.
    To(String),
    /// A member's role whose cluster has gone or took another role: nothing.
    Detached,
}

/// This connection's confinement. `None` on a database not yet migrated
/// this far (no member then).
pub async fn confinement(db: &PgPool) -> Result<Confinement, sqlx::Error> {
    let migrated: bool = sqlx::query_scalar("SELECT to_regclass('member_role') IS NOT NULL").fetch_one(db).await?;
    if !migrated {
        return Ok(Confinement::None);
    }
    // A detached role reads `member_role` alone.
    let member: Option<Option<uuid::Uuid>> =
        sqlx::query_scalar("SELECT cluster_id FROM member_role WHERE role = current_user").fetch_optional(db).await?;
    Ok(match member {
        None => Confinement::None,
        Some(None) => Confinement::Detached,
        Some(Some(id)) => {
            Confinement::To(sqlx::query_scalar("SELECT name FROM cluster WHERE id = $1").bind(id).fetch_one(db).await?)
        }
    })
}
