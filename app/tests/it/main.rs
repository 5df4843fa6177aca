//! The pure rules' tests (properties and tables): one binary, a module per
//! area, like server/tests/it.

mod capacity_props;
mod input_limits_props;
mod quota_props;
mod state_machine;
mod waitlist_order;
mod window_rules;
