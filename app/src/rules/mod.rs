//! The booking rules as plain functions over plain data. The database services
//! enforce them inside one transaction; the browser may use them to preview.

pub mod capacity;
pub mod pool_spec;
pub mod quota;
// Zones come with chrono-tz, which the browser build leaves out.
#[cfg(any(feature = "ssr", test))]
pub mod recurrence;
pub mod state_machine;
pub mod tokenomics;
pub mod window;

/// A request field that broke a rule, and why; becomes a 422 naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { field: field.into(), reason: reason.into() }
    }
}
