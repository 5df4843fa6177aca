//! Server-only services over PostgreSQL, shared by the server fns (through a
//! `PgPool` in Leptos context) and the REST API in the `server` crate. Every
//! entry point takes the asking `Principal` and does its own role and tenant
//! checks, so no transport can skip them.

pub mod approvals;
pub mod audit;
pub mod blackouts;
pub mod booking_form;
pub mod bookings;
pub mod calendar;
pub mod calendar_feed;
pub mod dashboard;
pub mod error;
pub mod find;
pub mod identity;
pub mod idle_reclaim;
pub mod maintenance;
pub mod my_bookings;
pub mod notifications;
pub mod overview;
pub mod planning;
pub mod pools;
pub mod principals;
pub mod provisioning;
pub mod reports;
pub mod series_form;
pub mod session_status;
pub mod tenants;
pub mod tokenomics;
pub mod tokens;
pub mod user_disable;
pub mod users;
pub mod waitlist;
pub mod worker_status;

pub use error::ServiceError;

/// The single migration set, embedded so the binary can migrate a fresh database.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// "Now" as the database sees it: every rule that depends on the time reads
/// this clock, so all server replicas agree.
pub async fn db_now<'e>(db: impl sqlx::PgExecutor<'e>) -> Result<chrono::DateTime<chrono::Utc>, ServiceError> {
    Ok(sqlx::query_scalar("SELECT now()").fetch_one(db).await?)
}
