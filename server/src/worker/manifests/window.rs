//! What outlives the window and what tells the workspace about it (issue
//! 46): the owner's home volume, and the ConfigMap `berth-session` mounted
//! read-only at `/etc/berth/` with the window's end, which the worker
//! rewrites when the window is extended and as the end nears.

use super::{meta, typed, Session};
use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use uuid::Uuid;

/// The ConfigMap the workspace reads at `/etc/berth/`.
pub const SESSION_CONFIG: &str = "berth-session";
/// Where the workspace reads it.
pub const SESSION_CONFIG_PATH: &str = "/etc/berth";
/// Annotation of the session namespace naming its owner (their Berth id):
/// the only home claim the namespace may hold is `home-<owner>` (policy
/// berth-session-homes).
pub const OWNER_ANNOTATION: &str = "berth.io/owner";
/// Label the worker puts on a PersistentVolume it keeps as someone's home
/// (their Berth id), and the one with its storage class.
pub const HOME_OWNER_LABEL: &str = "berth.io/home-owner";

/// The window as the workspace reads it, and the owner's home.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub owner_id: Uuid,
    pub pool: String,
    pub ends_at: DateTime<Utc>,
    pub home: Home,
    /// Until when the owner's home is kept, as things stand.
    pub home_kept_until: DateTime<Utc>,
    /// Minutes left once the end is near: 15 from T−15, 5 from T−5.
    pub ending_soon: Option<i64>,
    /// A booking that took over the session of the one before it: the
    /// session's id (its chain's first booking, which names the namespace)
    /// and the booking it follows.
    pub continues: Option<(Uuid, Uuid)>,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            owner_id: Uuid::nil(),
            pool: String::new(),
            ends_at: DateTime::UNIX_EPOCH,
            home: Home::New { gib: 50 },
            home_kept_until: DateTime::UNIX_EPOCH,
            ending_soon: None,
            continues: None,
        }
    }
}

/// Which volume the session's home claim binds.
#[derive(Clone, Debug, PartialEq)]
pub enum Home {
    /// A session started before homes were kept: its own `berth-home`,
    /// deleted with its namespace (its claim cannot change under it).
    PerSession,
    /// A new volume of `gib`: kept as the owner's home once bound, unless
    /// they already have one (held by another session of theirs running now).
    New { gib: i32 },
    /// The owner's kept home.
    Kept { volume: String, gib: i32 },
}

/// `ending-soon` at `now`: 15 from T−15 minutes, 5 from T−5, else none.
pub fn ending_soon(ends_at: DateTime<Utc>, now: DateTime<Utc>) -> Option<i64> {
    let left = ends_at - now;
    if left <= chrono::Duration::minutes(5) {
        Some(5)
    } else if left <= chrono::Duration::minutes(15) {
        Some(15)
    } else {
        None
    }
}

/// The home claim's name and size: `home-<owner id>` (the name ties the
/// claim to its owner, which the policies check), or the per-session
/// `berth-home` of sessions started before.
pub fn home_claim(session: &Session) -> (String, i64) {
    match &session.window.home {
        Home::PerSession => {
            let gib = i64::from(session.quantity) * i64::from(session.kind.storage_gib_per_unit);
            ("berth-home".into(), gib.max(1))
        }
        Home::New { gib } | Home::Kept { gib, .. } => (format!("home-{}", session.window.owner_id), i64::from(*gib)),
    }
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `berth-session`: `window-end` (RFC 3339), `booking`, `pool`, `kind`,
/// `home-kept-until`, and near the end `ending-soon` (minutes left).
pub fn session_config(session: &Session) -> ConfigMap {
    let window = &session.window;
    let mut data = json!({
        "window-end": rfc3339(window.ends_at),
        "booking": session.booking_id.to_string(),
        "pool": window.pool,
        "kind": session.kind.kind,
    });
    if window.home != Home::PerSession {
        data["home-kept-until"] = json!(rfc3339(window.home_kept_until));
    }
    if let Some(minutes) = window.ending_soon {
        data["ending-soon"] = json!(minutes.to_string());
    }
    typed(json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(session, SESSION_CONFIG), "data": data }))
}
