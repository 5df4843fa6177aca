//! The worker's side of the database: what provisioning reads and records
//! (`provisioning`, `session_status`), the worker's own state (`status`),
//! idle reclaim, what the backfill borrowed (`lending`) and the periodic
//! maintenance. The Kubernetes side lives in the `server` crate's `worker`.

pub mod cluster_status;
pub mod continuation;
pub mod homes;
pub mod idle_reclaim;
pub mod lending;
pub mod maintenance;
pub mod provisioning;
pub mod session_status;
pub mod status;
