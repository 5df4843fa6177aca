//! Homes that outlive the window (issue 46), as Settings and the admin
//! console show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Days a home is kept after its owner's last session, unless their tenant says otherwise.
pub const SITE_RETENTION_DAYS: i32 = 30;

/// One person's kept home.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Home {
    pub user_id: Uuid,
    pub owner_name: String,
    pub owner_email: String,
    /// '' for the cluster's default storage class.
    pub storage_class: String,
    pub size_gib: i32,
    /// The end of the owner's last session, if it has ended.
    pub last_used: Option<DateTime<Utc>>,
    /// When it is deleted, as things stand.
    pub deleted_on: DateTime<Utc>,
    /// Its owner or an admin asked for it to go: the worker deletes it once
    /// no session holds it.
    pub delete_requested: bool,
}

/// A tenant's home settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeSettings {
    /// The size of a member's new home, GiB (1–65536).
    pub home_gib: i32,
    /// Days a home is kept after its owner's last session (1–3650); none:
    /// the site's default.
    #[serde(default)]
    pub home_retention_days: Option<i32>,
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
