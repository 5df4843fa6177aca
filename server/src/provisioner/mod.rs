//! The provisioner (`berth worker`): it applies to each cluster what the
//! database decides (`app::backend::sessions`). The objects it applies for a
//! booking, each built
//! by a pure function (`manifests`), converged one session at a time
//! (`converge`, with `retry` for single requests, against the `snapshot` of
//! Berth's objects each pass reads; how far it got: `progress`) by the pass over all
//! bookings in PostgreSQL (`reconcile`: the list of its steps, each a free
//! function in a file of its own taking the worker of `context`), swept
//! every few minutes (`sweep`), and repeated by `run` on notifications,
//! timers and watch events.

pub mod ahead;
mod apply;
pub mod backfill;
pub mod cluster_clients;
pub mod clusters;
mod collect;
mod context;
pub mod converge;
pub mod error;
mod guarded_domain;
pub mod homes;
mod image_cache;
pub mod manifests;
pub mod policy;
pub mod progress;
pub mod queues;
pub mod reconcile;
mod repair;
pub mod report;
pub mod retry;
pub mod rotate;
pub mod run;
mod session;
pub mod simulated;
pub mod snapshot;
mod start;
mod stop;
pub mod sweep;
mod team_cache;
pub mod wake;
pub mod watch;
