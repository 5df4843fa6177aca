//! Bookings: admission under the capacity invariant, reading with per-principal
//! visibility, and every lifecycle action through the one state machine.

pub mod admit;
pub mod change;
pub mod co_owners;
mod create;
pub mod events;
pub mod extension;
mod lifecycle;
pub mod locks;
mod query;
mod queue;
pub mod quota;
pub mod request;
mod row;
pub mod series;
mod suggest;
mod terms;

pub use admit::Admission;
pub use create::create;
pub use lifecycle::{approve, cancel, end_early, extend, reject};
pub use query::{get, list, occupancy};
pub use queue::Admissions;
