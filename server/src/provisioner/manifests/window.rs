//! What outlives the window and what tells the workspace about it (issue
//! 46): the owner's home and model cache volumes, and the ConfigMap `berth-session` mounted
//! read-only at `/etc/berth/` with the window's end, which the worker
//! rewrites when the window is extended and as the end nears.

use super::{meta, typed, Session};
pub use app::backend::sessions::homes::Volume;
pub use app::backend::sessions::kept_until::KeptUntil;
use app::model::Kept;
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
/// or model cache (their Berth id).
pub const HOME_OWNER_LABEL: &str = "berth.io/home-owner";
/// Label the cluster admin puts on each PersistentVolume of a tenant's
/// shared model cache (the tenant's slug); the worker never sets it.
pub const TEAM_CACHE_LABEL: &str = "berth.io/team-cache";

/// The claim that binds one of `tenant`'s team cache volumes in its
/// sessions: the name ties it to the tenant, which the policies check.
pub fn team_cache_claim(tenant: &str) -> String {
    format!("team-cache-{tenant}")
}

/// The window as the workspace reads it, and the owner's kept volumes.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub owner_id: Uuid,
    pub pool: String,
    pub ends_at: DateTime<Utc>,
    /// Which volumes the home and model cache claims bind.
    pub home: Volume,
    pub cache: Volume,
    /// Until when the owner's home and model cache are kept, as things stand.
    pub kept_until: KeptUntil,
    /// Minutes left once the end is near: 15 from T−15, 5 from T−5.
    pub ending_soon: Option<i64>,
    /// A booking that took over the session of the one before it: the
    /// session's id (its chain's first booking, which names the namespace)
    /// and the booking it follows.
    pub continues: Option<(Uuid, Uuid)>,
}

impl Window {
    /// The volume decided for `purpose`.
    pub fn volume(&self, purpose: Kept) -> &Volume {
        match purpose {
            Kept::Home => &self.home,
            Kept::Cache => &self.cache,
        }
    }
}

impl Default for Window {
    fn default() -> Self {
        Window {
            owner_id: Uuid::nil(),
            pool: String::new(),
            ends_at: DateTime::UNIX_EPOCH,
            home: Volume::New { gib: 50 },
            cache: Volume::New { gib: 200 },
            kept_until: KeptUntil { home: DateTime::UNIX_EPOCH, cache: Some(DateTime::UNIX_EPOCH), team_cache: false },
            ending_soon: None,
            continues: None,
        }
    }
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

/// The claim of the session's volume of `purpose`, and its size: the
/// owner's (`home-<owner id>`, `cache-<owner id>`: the name ties the claim
/// to its owner, which the policies check), the team's
/// (`team-cache-<tenant>`), or the session's own (`berth-home`,
/// `berth-model-cache`).
pub fn claim(session: &Session, purpose: Kept) -> (String, i64) {
    let volume = session.window.volume(purpose);
    let name = match volume {
        Volume::PerSession { .. } => purpose.per_session_claim().to_string(),
        Volume::New { .. } | Volume::Kept { .. } => purpose.claim(session.window.owner_id),
        Volume::Team { .. } => team_cache_claim(&session.tenant),
    };
    (name, i64::from(volume.gib()).max(1))
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `berth-session`: `window-end` (RFC 3339), `booking`, `pool`, `kind`,
/// `home-kept-until`, `model-cache-kept-until` (if kept), `model-cache:
/// team` (if the team's shared one), and near the end
/// `ending-soon` (minutes left).
pub fn session_config(session: &Session) -> ConfigMap {
    let window = &session.window;
    let mut data = json!({
        "window-end": rfc3339(window.ends_at),
        "booking": session.booking_id.to_string(),
        "pool": window.pool,
        "kind": session.kind.kind,
    });
    if !matches!(window.home, Volume::PerSession { .. }) {
        data["home-kept-until"] = json!(rfc3339(window.kept_until.home));
    }
    match (&window.cache, window.kept_until.cache) {
        (Volume::Team { .. }, _) => data["model-cache"] = json!("team"),
        (Volume::PerSession { .. }, _) | (_, None) => {}
        (_, Some(until)) => data["model-cache-kept-until"] = json!(rfc3339(until)),
    }
    if let Some(minutes) = window.ending_soon {
        data["ending-soon"] = json!(minutes.to_string());
    }
    typed(json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(session, SESSION_CONFIG), "data": data }))
}
