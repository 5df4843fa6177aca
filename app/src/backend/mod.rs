//! Server-only services over PostgreSQL, shared by the server fns (through
//! `rpc::ctx`) and the REST API in the `server` crate, grouped by area:
//! `admission` (a request becomes a booking), `bookings` (state changes,
//! approvals, forms, series), `waitlist`, `calendar` (what is free when), `pools`, `accounts` (who is
//! who: identity, users, tenants, tokens), `reports`, and `sessions` (what the
//! worker decides in the database: which sessions are due, their facts, their
//! state, their homes; the `server` crate's `provisioner` applies it to the
//! clusters). Every entry point takes the asking `Principal`
//! and does its own role and tenant checks, so no transport can skip them.

pub mod accounts;
pub mod admission;
pub mod audit;
pub mod bookings;
pub mod calendar;
pub mod clusters;
pub mod error;
pub mod fit;
pub mod homes;
pub mod notifications;
pub mod pools;
pub mod provenance;
pub mod reports;
pub mod sessions;
pub mod waitlist;

pub use error::ServiceError;

/// The single migration set, embedded so the binary can migrate a fresh database.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// "Now" as the database sees it: every rule that depends on the time reads
/// this clock, so all server replicas agree.
pub async fn db_now<'e>(db: impl sqlx::PgExecutor<'e>) -> Result<chrono::DateTime<chrono::Utc>, ServiceError> {
    Ok(sqlx::query_scalar("SELECT now()").fetch_one(db).await?)
}
