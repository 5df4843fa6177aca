//! The pages, and what they share: the HTML shell and the app around them
//! (`shell`), the table of pages the router and the titles read (`routes`),
//! the navigation bar (`nav`) and the reader's time zone (`zone`).

// The modules marked `allow(dead_code)` under `people-bundle` are the
// console's pages and what only they use: the people's bundle routes to none
// of them, so there they are unused by design. Every other build (the
// server's, clippy's, every page's bundle) still reports their dead code.
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod approvals;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod audit;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod blackouts;
mod book;
pub mod calendar;
mod chart;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod clusters;
mod confirm;
mod copy;
mod counted;
mod dashboard;
mod device_chart;
mod field;
mod find;
mod fit;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod forbidden;
mod free_then;
mod home;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod homes;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod idle_policy;
mod live;
mod manifests;
mod my_bookings;
mod nav;
mod notice;
mod overview;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod pool_admin;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod report_charts;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod reports;
mod routes;
mod said;
mod series;
mod settings;
mod sharing;
mod shell;
mod signin;
mod table;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod tenants;
mod time_zone;
mod timeline;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod tokenomics;
mod tokens;
mod url;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod users;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod waitlist;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod worker;
mod zone;

pub use home::HomePage;
pub use overview::load_overview;
pub use shell::{shell, App};
pub use tenants::{QuotaSummary, QuotaUse};
pub use zone::{reader_clock, viewer_zone};

use crate::model::Principal;
use crate::rpc::RpcError;
use leptos::prelude::*;

/// The signed-in principal as every page reads it (one request per page load).
pub type Me = Resource<Result<Option<Principal>, RpcError>>;

/// What every page shares, read once per page load at the top of the app
/// (a resource created inside another one's view could be created in a
/// different order on the server and in the browser), and provided as one
/// context value that pages read through `shared()`.
#[derive(Clone, Copy)]
pub struct Shared {
    pub me: Me,
    /// How many bookings and extensions await an admin's decision (0 for
    /// anyone else).
    pub pending_approvals: Resource<Result<i64, RpcError>>,
    /// The browser's time zone when hydration has just learnt it and the
    /// reader has none in Settings ("" otherwise: the server then takes the
    /// Settings zone, else the `berth_tz` cookie an earlier visit left, else UTC).
    pub zone: RwSignal<String>,
    /// The reader's clock: times in the zone pages show them in (see
    /// `reader_clock`).
    pub clock: Resource<Result<crate::model::Clock, RpcError>>,
    /// Moves on whenever something the viewer's pages show has changed
    /// (`live::poll`); pages whose data should stay live depend on it.
    pub live: RwSignal<u64>,
}

/// The one way a page reads what the app shares.
pub fn shared() -> Shared {
    expect_context::<Shared>()
}
