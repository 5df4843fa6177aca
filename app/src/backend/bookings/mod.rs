//! Bookings: admission under the capacity invariant, reading with per-principal
//! visibility, and every lifecycle action through the one state machine.

pub mod admit;
pub mod approvals;
pub mod change;
pub mod co_owners;
mod create;
pub mod events;
pub mod extension;
pub mod form;
mod lifecycle;
pub mod live;
pub mod locks;
pub mod mine;
pub mod once;
mod query;
mod queue;
pub mod quota;
pub mod request;
mod reschedule;
mod row;
pub mod series;
pub mod series_form;
mod suggest;
mod terms;
pub mod waitlist;

pub use admit::Admission;
pub use create::create;
pub use lifecycle::{approve, cancel, end_early, extend, reject};
pub use query::{extension_requests, get, list, occupancy};
pub use queue::AdmissionQueue;
pub use reschedule::reschedule;
pub use row::occupancy_id;
