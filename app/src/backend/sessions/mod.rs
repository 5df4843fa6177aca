//! What the worker decides, in the database (the `server` crate's
//! `provisioner` applies it to the clusters): which sessions are due on a
//! cluster (`due`) and what the worker reads of each (`facts`), the moves it
//! makes as the system (`transitions`), the lease that makes one worker
//! drive a cluster (`lease`), the steps a session shows (`session_status`),
//! how long homes are kept (`homes`, and as people read it: `kept_until`), sessions that continue into the next
//! booking (`continuation`), the worker's own state (`status`,
//! `cluster_status`), idle reclaim, what the backfill borrowed (`lending`),
//! the periodic maintenance, and the manifests an owner may preview
//! (`preview`).

pub mod cluster_status;
pub mod continuation;
pub mod due;
pub mod facts;
pub mod homes;
pub mod idle_reclaim;
pub mod kept_until;
pub mod lease;
pub mod lending;
pub mod maintenance;
pub mod preview;
pub mod session_status;
pub mod status;
pub mod transitions;
