//! The one opening of every server fn. A server fn asks `rpc::ctx()` (or
//! `visitor()`, `browser()`) for who asks and what the server holds, calls
//! one `backend` service with both, and returns its answer; `?` turns a
//! `ServiceError` into an `RpcError` with the REST API's status. Actions
//! answer through `act`, the one place that decides whether a refusal is a
//! notice the person can act on or an error.

mod error;

pub use error::{RpcError, RpcErrorEncoding};

#[cfg(feature = "ssr")]
pub mod no_script;
#[cfg(feature = "ssr")]
mod serve;

#[cfg(feature = "ssr")]
pub use serve::*;
