//! Berth's shared crate: typed models and pure booking rules (compiled for the
//! browser and the server), the Leptos pages, and — behind the `ssr` feature —
//! the database services that the server fns and the REST API both call.

pub mod codec;
pub mod model;
pub mod pages;
pub mod rpc;
pub mod rules;

#[cfg(feature = "ssr")]
pub mod backend;

pub use pages::{shell, App};
