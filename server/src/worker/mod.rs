//! The provisioning worker: the objects it applies for a booking, each built
//! by a pure function (`manifests`), and the pass that converges the cluster
//! onto the bookings in PostgreSQL (`reconcile`), repeated by `run`.

pub mod manifests;
pub mod reconcile;
pub mod run;
pub mod simulated;
