//! Homes that outlive the window (issue 46), as Settings and the admin
//! console show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Days a home is kept after its owner's last session, unless their tenant says otherwise.
pub const SITE_RETENTION_DAYS: i32 = 30;

/// What a kept volume holds: a person's home, or their model cache. Each
/// is one volume per person and storage class, bound again in each of their
/// sessions, with its own size and retention.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kept {
    #[default]
    Home,
    Cache,
}

impl Kept {
    pub const ALL: [Kept; 2] = [Kept::Home, Kept::Cache];

    pub fn as_str(self) -> &'static str {
        match self {
            Kept::Home => "home",
            Kept::Cache => "cache",
        }
    }

    pub fn parse(text: &str) -> Option<Kept> {
        Kept::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The claim that binds `owner`'s kept volume in their sessions
    /// (`home-<id>`, `cache-<id>`): the name ties it to its owner, which the
    /// admission policies check.
    pub fn claim(self, owner: Uuid) -> String {
        format!("{}-{owner}", self.as_str())
    }

    /// The claim of a session that keeps nothing of it.
    pub fn per_session_claim(self) -> &'static str {
        match self {
            Kept::Home => "berth-home",
            Kept::Cache => "berth-model-cache",
        }
    }

    /// Where the workspace mounts it.
    pub fn mount(self) -> &'static str {
        match self {
            Kept::Home => "/home/jovyan",
            Kept::Cache => "/models",
        }
    }

    /// As a page names it: "Home", "Model cache".
    pub fn label(self) -> &'static str {
        match self {
            Kept::Home => "Home",
            Kept::Cache => "Model cache",
        }
    }
}

/// One person's kept home or model cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Home {
    pub user_id: Uuid,
    /// What it holds.
    #[serde(default)]
    pub purpose: Kept,
    pub owner_name: String,
    pub owner_email: String,
    /// '' for the cluster's default storage class.
    pub storage_class: String,
    /// The cluster it is a volume of (its files are there, not on another).
    #[serde(default)]
    pub cluster: String,
    pub size_gib: i32,
    /// The end of the owner's last session, if it has ended.
    pub last_used: Option<DateTime<Utc>>,
    /// When it is deleted, as things stand.
    pub deleted_on: DateTime<Utc>,
    /// Its owner or an admin asked for it to go: the worker deletes it once
    /// no session holds it.
    pub delete_requested: bool,
}

/// A tenant's home and model cache settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeSettings {
    /// The size of a member's new home, GiB (1–65536).
    pub home_gib: i32,
    /// Days a home is kept after its owner's last session (1–3650); none:
    /// the site's default.
    #[serde(default)]
    pub home_retention_days: Option<i32>,
    /// The size of a member's model cache, GiB (1–65536; 200 if not given).
    #[serde(default = "default_cache_gib")]
    pub cache_gib: i32,
    /// Days a model cache is kept after its owner's last session (1–3650);
    /// none: the site's default.
    #[serde(default)]
    pub cache_retention_days: Option<i32>,
    /// Whether the cache is kept (true if not given); false: each session
    /// gets its own, which ends with it.
    #[serde(default = "kept_by_default")]
    pub cache_kept: bool,
}

fn default_cache_gib() -> i32 {
    200
}

fn kept_by_default() -> bool {
    true
}

/// The homes page: every home (admins) or one's own, in the reader's zone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HomesPage {
    pub tz: String,
    /// Each home with its last use and deletion date written in `tz`.
    pub homes: Vec<(Home, String, String)>,
    /// Admins: each tenant's settings, by slug.
    pub tenants: Vec<(String, HomeSettings)>,
    pub site_retention_days: i32,
    /// Admins: the site's price per GiB-month of home storage, for the reports.
    #[serde(default)]
    pub price_per_gib_month: f64,
}

/// `PUT /api/v1/homes/price`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomePrice {
    /// In the site's currency, per GiB and 30 days (0–1 000 000).
    pub per_gib_month: f64,
}
