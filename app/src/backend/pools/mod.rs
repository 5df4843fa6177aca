//! Pools: what a principal may see and book (`read`), admin create, update
//! and delete (`write`, with the columns both writes bind in `columns` and
//! what they check against the database in `checks`: never a capacity
//! below what is booked), and availability as a step function.

mod availability;
pub mod blackouts;
mod checks;
pub mod classes;
mod columns;
pub mod form;
mod read;
mod write;

pub use availability::availability;
pub use read::{get, list, may_book};
pub(crate) use read::{tenant_ids, VISIBLE_POOL};
pub use write::{create, delete, update};
