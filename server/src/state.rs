use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::PgPool;

/// Shared by every handler; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: PgPool,
    pub leptos: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

impl AppState {
    /// Options for the site built by `scripts/build-site.sh` (or cargo-leptos)
    /// into `site_root`, with the output name fixed in Cargo.toml's metadata.
    pub fn new(db: PgPool, site_root: &str) -> Self {
        let leptos = LeptosOptions::builder()
            .output_name("berth")
            .site_root(site_root)
            .site_pkg_dir("pkg")
            .build();
        Self { db, leptos }
    }
}
