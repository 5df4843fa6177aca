//! Bookings once admitted (`backend::admission` makes them): reading with
//! per-principal visibility, and every lifecycle action through the one
//! state machine.

pub mod approvals;
pub mod change;
pub mod co_owners;
pub mod events;
pub mod extension;
pub mod form;
mod lifecycle;
pub mod live;
pub mod mine;
mod query;
mod reschedule;
pub(crate) mod row;
pub mod series_form;

pub use lifecycle::{approve, cancel, end_early, extend, reject};
pub use query::{extension_requests, get, list, occupancy};
pub use reschedule::reschedule;
pub use row::occupancy_id;
