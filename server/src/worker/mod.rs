//! The provisioning worker: the objects it applies for a booking, each built
//! by a pure function (`manifests`), converged one session at a time
//! (`converge`, with `retry` for single requests, against the `snapshot` of
//! Berth's objects each pass reads; how far it got: `progress`) by the pass over all
//! bookings in PostgreSQL (`reconcile`), swept every few minutes (`sweep`),
//! and repeated by `run` on notifications, timers and watch events.

pub mod ahead;
pub mod backfill;
pub mod converge;
pub mod error;
pub mod fleet;
pub mod homes;
pub mod manifests;
pub mod progress;
pub mod queues;
pub mod reach;
pub mod reconcile;
pub mod retry;
pub mod rotate;
pub mod run;
pub mod simulated;
pub mod simulated_http;
pub mod simulated_storage;
pub mod snapshot;
pub mod sweep;
mod team_cache;
pub mod wake;
pub mod watch;
