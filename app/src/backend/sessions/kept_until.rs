//! Until when a session's kept volumes are kept, and how the pages and
//! mails say it: what outlives a session and what ends with it.

use super::homes::kept_until_sql;
use crate::backend::error::ServiceResult;
use crate::model::{Kept, SITE_RETENTION_DAYS};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// Until when a session's kept volumes are kept, as things stand: its
/// owner's home, and their model cache unless the tenant's cache is per
/// session or the session mounts its team's shared cache (`team_cache`,
/// kept as long as the cluster admin keeps its volumes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeptUntil {
    pub home: DateTime<Utc>,
    pub cache: Option<DateTime<Utc>>,
    pub team_cache: bool,
}

impl KeptUntil {
    /// From the columns `kept_until_columns` reads and the tenant's `cache_kept`.
    pub fn of((home, cache, team_cache): (DateTime<Utc>, DateTime<Utc>, bool), cache_kept: bool) -> KeptUntil {
        let team_cache = cache_kept && team_cache;
        KeptUntil { home, cache: (cache_kept && !team_cache).then_some(cache), team_cache }
    }
}

/// The columns of a booking `b`'s `KeptUntil` (`site_days` the parameter
/// holding `SITE_RETENTION_DAYS`): `home_kept_until`, `cache_kept_until`
/// (as if kept; its tenant's `cache_kept` says whether it is), and
/// `team_cache`: the session's decision, else its pool's setting (a
/// session finding no free team volume falls back to the person's own).
pub fn kept_until_columns(site_days: &str) -> String {
    const BOOKINGS_CLUSTER: &str = "(SELECT bp.cluster_id FROM pool bp WHERE bp.id = b.pool_id)";
    format!(
        "{} AS home_kept_until, {} AS cache_kept_until,
         coalesce((SELECT sh.team_class IS NOT NULL FROM session_home sh WHERE sh.booking_id = b.id AND sh.purpose = 'cache'),
                  (SELECT tp.team_cache_class IS NOT NULL FROM pool tp WHERE tp.id = b.pool_id)) AS team_cache",
        kept_until_sql("b.user_id", site_days, "'home'", BOOKINGS_CLUSTER, Some("b.ends_at")),
        kept_until_sql("b.user_id", site_days, "'cache'", BOOKINGS_CLUSTER, Some("b.ends_at"))
    )
}

/// `KeptUntil` for each of `bookings`.
pub async fn kept_until_for(db: &PgPool, bookings: &[Uuid]) -> ServiceResult<HashMap<Uuid, KeptUntil>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: Uuid,
        home_kept_until: DateTime<Utc>,
        cache_kept_until: DateTime<Utc>,
        team_cache: bool,
        cache_kept: bool,
    }
    let query = format!(
        "SELECT b.id, {}, t.cache_kept FROM booking b JOIN tenant t ON t.id = b.tenant_id WHERE b.id = ANY($2)",
        kept_until_columns("$1")
    );
    let rows: Vec<Row> = sqlx::query_as(&query).bind(SITE_RETENTION_DAYS).bind(bookings).fetch_all(db).await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.id, KeptUntil::of((r.home_kept_until, r.cache_kept_until, r.team_cache), r.cache_kept)))
        .collect())
}

/// What a session mounts of its owner's, and until when it is kept (no
/// full stop): "Your home (/home/jovyan) and model cache (/models) are kept
/// until Sat 26 Dec". `owner`: the owner's name when the reader is a
/// co-owner.
pub fn kept_note(owner: Option<&str>, kept: &KeptUntil, zone: &chrono_tz::Tz) -> String {
    let whose = owner.map(|name| format!("{name}'s")).unwrap_or_else(|| "Your".into());
    let day = |at: DateTime<Utc>| crate::model::day_text(at.with_timezone(zone).date_naive());
    let home = format!("home ({})", Kept::Home.mount());
    let cache = format!("model cache ({})", Kept::Cache.mount());
    if kept.team_cache {
        let team = format!("the team's shared {cache} stays");
        return format!("{whose} {home} is kept until {}, and {team}", day(kept.home));
    }
    match kept.cache {
        Some(until) if day(until) == day(kept.home) => {
            format!("{whose} {home} and {cache} are kept until {}", day(until))
        }
        Some(until) => format!("{whose} {home} is kept until {} and {cache} until {}", day(kept.home), day(until)),
        None => format!("{whose} {home} is kept until {}", day(kept.home)),
    }
}

/// What ending a session now keeps and deletes, for the End-now dialog.
pub fn ending_now_sentence(owner: Option<&str>, kept: &KeptUntil, zone: &chrono_tz::Tz) -> String {
    let rest = match kept.cache.is_some() || kept.team_cache {
        true => "the workspace and everything else in its namespace are deleted now",
        false => "the workspace and everything else in its namespace, the model cache included, are deleted now",
    };
    format!("{}; {rest}.", kept_note(owner, kept, zone))
}

/// What outlives a session and what ends with it, as its card, page and
/// mails say it: "Your home (/home/jovyan) and model cache (/models) are
/// kept until Sat 26 Dec; everything else in this session ends at 12:00."
/// `ends` is when the session ends (the booking's `end`, or that of the
/// booking it continues into: then with its date, if another day).
pub fn persistence_sentence(
    owner: Option<&str>,
    kept: &KeptUntil,
    (end, ends): (DateTime<Utc>, DateTime<Utc>),
    zone: &chrono_tz::Tz,
) -> String {
    let at = ends.with_timezone(zone);
    let when = match at.date_naive() == end.with_timezone(zone).date_naive() {
        true => at.format("%H:%M").to_string(),
        false => format!("{} on {}", at.format("%H:%M"), crate::model::day_text(at.date_naive())),
    };
    let rest = match kept.cache.is_some() || kept.team_cache {
        true => "everything else in this session",
        false => "everything else in this session, the model cache included,",
    };
    format!("{}; {rest} ends at {when}.", kept_note(owner, kept, zone))
}
