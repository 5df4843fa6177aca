//! The booking rules as plain functions over plain data. The database services
//! enforce them inside one transaction; the browser may use them to preview.

pub mod capacity;
pub mod cluster_spec;
pub mod fit;
// Zones come with chrono-tz, which the browser build leaves out.
#[cfg(any(feature = "ssr", test))]
pub mod local_time;
pub mod pool_spec;
// Admission's, on the server: its weeks start at local midnights (`local_time`).
#[cfg(any(feature = "ssr", test))]
pub mod quota;
// Zones come with chrono-tz, which the browser build leaves out.
#[cfg(any(feature = "ssr", test))]
pub mod recurrence;
pub mod scope;
pub mod state_machine;
pub mod tokenomics;
pub mod window;

// Where a rule names the field it refused (the type is the model's).
pub use crate::model::FieldError;
