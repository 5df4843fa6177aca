//! Clusters: admins list, add, change and remove them; each pool belongs to
//! one. A cluster whose pools hold live or future bookings stays, and so does
//! one that still has pools (move them first: a retired pool may move).

use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Cluster, ClusterAccess, ClusterSpec, ClusterSwitches, Principal, DEFAULT_CLUSTER};
use crate::rules::{cluster_spec, FieldError};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, PgPool};
use uuid::Uuid;

const ADMINS_ONLY: &str = "only admins manage clusters";

#[derive(sqlx::FromRow)]
struct ClusterRow {
    id: Uuid,
    name: String,
    access: String,
    kubeconfig_secret: Option<String>,
    workspace_domain: Option<String>,
    expose: Option<String>,
    kueue: Option<bool>,
    scale_ahead_mode: Option<String>,
    scale_ahead_minutes: Option<i32>,
    image_cache: Option<bool>,
    pools: Vec<String>,
    created_at: DateTime<Utc>,
}

impl ClusterRow {
    fn into_cluster(self) -> ServiceResult<Cluster> {
        // The table's check allows exactly the three; anything else is a bug.
        let access = ClusterAccess::parse(&self.access).ok_or(ServiceError::Internal("unknown cluster access"))?;
        Ok(Cluster {
            id: self.id,
            name: self.name,
            access,
            kubeconfig_secret: self.kubeconfig_secret,
            switches: ClusterSwitches {
                workspace_domain: self.workspace_domain,
                expose: self.expose,
                kueue: self.kueue,
                scale_ahead_mode: self.scale_ahead_mode,
                scale_ahead_minutes: self.scale_ahead_minutes,
                image_cache: self.image_cache,
            },
            pools: self.pools,
            created_at: self.created_at,
        })
    }
}

/// Every cluster, or the one with id `only`; from a pool or inside a transaction.
async fn load(db: impl PgExecutor<'_>, only: Option<Uuid>) -> ServiceResult<Vec<Cluster>> {
    let rows: Vec<ClusterRow> = sqlx::query_as(
        "SELECT c.id, c.name, c.access, c.kubeconfig_secret, c.workspace_domain, c.expose, c.kueue,
                c.scale_ahead_mode, c.scale_ahead_minutes, c.image_cache, c.created_at,
                ARRAY(SELECT p.name FROM pool p WHERE p.cluster_id = c.id ORDER BY p.name) AS pools
         FROM cluster c WHERE $1::uuid IS NULL OR c.id = $1 ORDER BY c.name",
    )
    .bind(only)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(ClusterRow::into_cluster).collect()
}

/// Whether a row of a pool's (its `pool_id`; `alias`: "b." or "") is on the
/// cluster bound as SQL parameter `param` (every row when it is NULL: a
/// worker driving every pool, a report of every cluster).
pub(crate) fn pool_on_cluster(alias: &str, param: &str) -> String {
    format!("({param}::uuid IS NULL OR {alias}pool_id IN (SELECT id FROM pool WHERE cluster_id = {param}))")
}

/// Every cluster. Admins only: how Berth reaches each cluster is theirs to know.
pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<Cluster>> {
    principal.require_admin(ADMINS_ONLY)?;
    load(db, None).await
}

/// Why each cluster's worker last failed, where it did: the worker's own
/// words for the Clusters page (a workspace domain its policies do not
/// guard, an API server that does not answer). A database failure's text
/// is the worker's log's, not a page's.
pub async fn problems(db: &PgPool, principal: &Principal) -> ServiceResult<std::collections::HashMap<Uuid, String>> {
    principal.require_admin(ADMINS_ONLY)?;
    let rows: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT cluster_id, error FROM cluster_status WHERE error IS NOT NULL AND error NOT LIKE 'the database:%'",
    )
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Every cluster, as the worker reads them to know which to drive (the
/// worker is Berth itself: no caller to check).
pub async fn for_worker(db: &PgPool) -> ServiceResult<Vec<Cluster>> {
    load(db, None).await
}

pub async fn get(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Cluster> {
    principal.require_admin(ADMINS_ONLY)?;
    load(db, Some(id)).await?.pop().ok_or(ServiceError::NotFound("cluster"))
}

/// The cluster a reader asked a view to keep to (by name; none or empty:
/// every cluster), and every cluster's name to choose from. Reading names
/// needs no admin: they are on pools and cards anyway.
pub async fn pick(db: &PgPool, asked: Option<&str>) -> ServiceResult<(Option<Uuid>, Vec<String>)> {
    let clusters: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT id, name FROM cluster ORDER BY name").fetch_all(db).await?;
    let chosen = match asked {
        None | Some("") => None,
        Some(name) => Some(
            clusters
                .iter()
                .find(|(_, n)| n == name)
                .map(|(id, _)| *id)
                .ok_or_else(|| FieldError::new("cluster", "names no cluster"))?,
        ),
    };
    Ok((chosen, clusters.into_iter().map(|(_, name)| name).collect()))
}

/// The cluster a booking's session runs on (its pool's), for the portal
/// opening its workspace; the caller has checked that the caller may.
pub async fn of_booking(db: &PgPool, booking_id: Uuid) -> ServiceResult<Cluster> {
    let id: Option<Uuid> =
        sqlx::query_scalar("SELECT p.cluster_id FROM booking b JOIN pool p ON p.id = b.pool_id WHERE b.id = $1")
            .bind(booking_id)
            .fetch_optional(db)
            .await?;
    let id = id.ok_or(ServiceError::NotFound("booking"))?;
    load(db, Some(id)).await?.pop().ok_or(ServiceError::NotFound("cluster"))
}

pub async fn create(db: &PgPool, principal: &Principal, spec: ClusterSpec) -> ServiceResult<Cluster> {
    principal.require_admin(ADMINS_ONLY)?;
    let name = spec.name.as_deref().ok_or_else(|| FieldError::new("name", "is required"))?;
    cluster_spec::validate_name(name)?;
    cluster_spec::validate(&spec)?;
    let mut tx = db.begin().await?;
    let id = store(&mut tx, None, name, &spec).await?;
    let cluster = load(&mut *tx, Some(id)).await?.pop().ok_or(ServiceError::NotFound("cluster"))?;
    audit::record(&mut tx, principal, "cluster.create", subject(&cluster.name), &describe(&spec)).await?;
    tx.commit().await?;
    Ok(cluster)
}

/// Replaces everything but the name.
pub async fn update(db: &PgPool, principal: &Principal, id: Uuid, spec: ClusterSpec) -> ServiceResult<Cluster> {
    principal.require_admin(ADMINS_ONLY)?;
    cluster_spec::validate(&spec)?;
    let mut tx = db.begin().await?;
    let current: Option<String> = sqlx::query_scalar("SELECT name FROM cluster WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let current = current.ok_or(ServiceError::NotFound("cluster"))?;
    if spec.name.as_deref().is_some_and(|name| name != current) {
        return Err(FieldError::new(
            "name",
            "cannot change: workers started with --cluster NAME find their cluster by it; add a new cluster instead",
        )
        .into());
    }
    store(&mut tx, Some(id), &current, &spec).await?;
    let cluster = load(&mut *tx, Some(id)).await?.pop().ok_or(ServiceError::NotFound("cluster"))?;
    audit::record(&mut tx, principal, "cluster.update", subject(&cluster.name), &describe(&spec)).await?;
    tx.commit().await?;
    Ok(cluster)
}

/// Writes a new cluster (`id` none) or replaces an existing one's access
/// and switches (its name stays); one statement, one list of columns.
async fn store(conn: &mut PgConnection, id: Option<Uuid>, name: &str, spec: &ClusterSpec) -> ServiceResult<Uuid> {
    Ok(sqlx::query_scalar(
        "INSERT INTO cluster (id, name, access, kubeconfig_secret, workspace_domain, expose, kueue,
                              scale_ahead_mode, scale_ahead_minutes, image_cache)
         VALUES (coalesce($1, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET access = EXCLUDED.access, kubeconfig_secret = EXCLUDED.kubeconfig_secret,
             workspace_domain = EXCLUDED.workspace_domain, expose = EXCLUDED.expose, kueue = EXCLUDED.kueue,
             scale_ahead_mode = EXCLUDED.scale_ahead_mode, scale_ahead_minutes = EXCLUDED.scale_ahead_minutes,
             image_cache = EXCLUDED.image_cache
         RETURNING id",
    )
    .bind(id)
    .bind(name)
    .bind(spec.access.as_str())
    .bind(&spec.kubeconfig_secret)
    .bind(&spec.workspace_domain)
    .bind(&spec.expose)
    .bind(spec.kueue)
    .bind(&spec.scale_ahead_mode)
    .bind(spec.scale_ahead_minutes)
    .bind(spec.image_cache)
    .fetch_one(conn)
    .await?)
}

/// Removes a cluster no pool belongs to any more. Its pools' live or future
/// bookings are named first: they are why it must stay.
pub async fn delete(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<()> {
    principal.require_admin(ADMINS_ONLY)?;
    let mut tx = db.begin().await?;
    let name: Option<String> = sqlx::query_scalar("SELECT name FROM cluster WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let name = name.ok_or(ServiceError::NotFound("cluster"))?;
    // Locking the pools' rows orders this after any pool moving onto it.
    let pools: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT id, name FROM pool WHERE cluster_id = $1 ORDER BY name FOR UPDATE")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
    if !pools.is_empty() {
        let ids: Vec<Uuid> = pools.iter().map(|(id, _)| *id).collect();
        let held = live_or_future(&mut tx, &ids).await?;
        if held > 0 {
            return Err(ServiceError::Conflict {
                code: "cluster_has_bookings",
                field: None,
                reason: format!(
                    "{name} cannot be removed: its pools hold {} that are live or still to come",
                    crate::model::counted(held, "booking", "bookings")
                ),
            });
        }
        let names: Vec<&str> = pools.iter().map(|(_, name)| name.as_str()).collect();
        return Err(ServiceError::Conflict {
            code: "cluster_has_pools",
            field: None,
            reason: format!("{name} still runs {}: move them to another cluster first", names.join(", ")),
        });
    }
    // Kept homes and caches are volumes on it that its worker lets go (after
    // their retention, or once deleted on the Homes page); removing the
    // cluster first would forget them and leave the volumes behind.
    let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM home WHERE cluster_id = $1 AND gone_at IS NULL")
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
    if kept > 0 {
        return Err(ServiceError::Conflict {
            code: "cluster_has_homes",
            field: None,
            reason: format!(
                "{name} still keeps {}: its worker lets them go after their retention, or once they are \
                 deleted on the Homes page",
                crate::model::counted(kept, "home or model cache", "homes or model caches")
            ),
        });
    }
    sqlx::query("DELETE FROM cluster WHERE id = $1").bind(id).execute(&mut *tx).await?;
    audit::record(&mut tx, principal, "cluster.delete", subject(&name), "").await?;
    tx.commit().await?;
    Ok(())
}

/// The cluster a new pool runs on: the one named; else the one named
/// `default` (every pool's before clusters were data), else the only one.
pub(crate) async fn for_new_pool(conn: &mut PgConnection, named: Option<&str>) -> ServiceResult<Uuid> {
    if let Some(name) = named {
        let id: Option<Uuid> =
            sqlx::query_scalar("SELECT id FROM cluster WHERE name = $1").bind(name).fetch_optional(conn).await?;
        return id.ok_or_else(|| FieldError::new("cluster", "names no cluster").into());
    }
    // The default first, then by name: two rows tell "the only one" apart.
    let rows: Vec<(Uuid, bool)> =
        sqlx::query_as("SELECT id, name = $1 FROM cluster ORDER BY name = $1 DESC, name LIMIT 2")
            .bind(DEFAULT_CLUSTER)
            .fetch_all(conn)
            .await?;
    match rows.as_slice() {
        [(id, true), ..] | [(id, false)] => Ok(*id),
        _ => {
            Err(FieldError::new("cluster", "is required: there is no cluster named default to put the pool on").into())
        }
    }
}

/// Moves a pool to the cluster named. Its sessions cannot follow, so a pool
/// holding live or future bookings stays where it is. The caller holds
/// every kind lock of the pool, so no booking lands on it meanwhile.
pub(crate) async fn move_pool(conn: &mut PgConnection, pool_id: Uuid, to: &str) -> ServiceResult<bool> {
    let target: Option<Uuid> =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = $1").bind(to).fetch_optional(&mut *conn).await?;
    let target = target.ok_or_else(|| FieldError::new("cluster", "names no cluster"))?;
    let current: Uuid =
        sqlx::query_scalar("SELECT cluster_id FROM pool WHERE id = $1").bind(pool_id).fetch_one(&mut *conn).await?;
    if current == target {
        return Ok(false);
    }
    let held = live_or_future(conn, &[pool_id]).await?;
    if held > 0 {
        return Err(ServiceError::Conflict {
            code: "pool_has_bookings",
            field: Some("cluster".into()),
            reason: format!(
                "the pool holds {} that are live or still to come; their sessions cannot move to {to}",
                crate::model::counted(held, "booking", "bookings")
            ),
        });
    }
    sqlx::query("UPDATE pool SET cluster_id = $2 WHERE id = $1").bind(pool_id).bind(target).execute(conn).await?;
    Ok(true)
}

/// Bookings of these pools that hold capacity (pending, approved, active).
async fn live_or_future(conn: &mut PgConnection, pools: &[Uuid]) -> ServiceResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM booking WHERE pool_id = ANY($1) AND state IN ('pending', 'approved', 'active')",
    )
    .bind(pools)
    .fetch_one(conn)
    .await?)
}

fn subject(name: &str) -> Subject<'_> {
    Subject { target: name, tenant: None, pool: None }
}

/// The audit line: access and every switch the cluster sets itself.
fn describe(spec: &ClusterSpec) -> String {
    let switches = spec.switches();
    let mut parts = vec![format!("access {}", spec.access.as_str())];
    if let Some(secret) = &spec.kubeconfig_secret {
        parts.push(format!("kubeconfig Secret {secret}"));
    }
    let set: [(&str, Option<String>); 6] = [
        ("workspace domain", switches.workspace_domain),
        ("expose", switches.expose),
        ("kueue", switches.kueue.map(|on| on.to_string())),
        ("scale-ahead mode", switches.scale_ahead_mode),
        ("scale-ahead minutes", switches.scale_ahead_minutes.map(|m| m.to_string())),
        ("image cache", switches.image_cache.map(|on| on.to_string())),
    ];
    parts.extend(set.into_iter().filter_map(|(what, value)| value.map(|v| format!("{what} {v}"))));
    parts.join(", ")
}
