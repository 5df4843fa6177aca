//! Who is who: the identity a request carries, principals as services see
//! them, users (and disabling one), tenants with their quotas, API tokens,
//! and the zone each person reads times in.

pub mod disable;
pub mod identity;
pub mod principals;
pub mod tenants;
pub mod time_zone;
pub mod tokens;
pub mod users;
