//! Types shared by the browser, the server fns and the REST API.

mod booking;
mod pool;
mod principal;

pub use booking::{Booking, BookingFilter, BookingState, Mode, NewBooking, Window};
pub use pool::{KindSpec, NewPool, Pool, PoolKind, PoolPatch, PoolRules};
pub use principal::{Principal, Role, TenantRef};
