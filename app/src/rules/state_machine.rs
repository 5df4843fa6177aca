//! The one place that decides which booking state changes are legal.

use crate::model::BookingState::{self, *};
use serde::{Deserialize, Serialize};

/// What someone (a user, an admin or the worker) asks to happen to a booking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Admin accepts a pending booking.
    Approve,
    /// Admin (or the system, when the window passed unapproved) refuses it.
    Reject,
    /// Owner or admin withdraws a booking that has not started.
    Cancel,
    /// Worker: the workspace is live.
    Activate,
    /// The window ended, or the owner ended it early.
    Complete,
    /// Worker: provisioning failed for good.
    Fail,
}

impl Action {
    pub const ALL: [Action; 6] =
        [Self::Approve, Self::Reject, Self::Cancel, Self::Activate, Self::Complete, Self::Fail];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Reject => "reject",
            Self::Cancel => "cancel",
            Self::Activate => "activate",
            Self::Complete => "complete",
            Self::Fail => "fail",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {} booking cannot {}", from.as_str(), action.as_str())]
pub struct IllegalTransition {
    pub from: BookingState,
    pub action: Action,
}

/// The state `action` leads to from `from`, or why it may not happen.
pub fn transition(from: BookingState, action: Action) -> Result<BookingState, IllegalTransition> {
    let to = match (from, action) {
        (Pending, Action::Approve) => Approved,
        (Pending, Action::Reject) => Rejected,
        (Pending | Approved, Action::Cancel) => Canceled,
        (Approved, Action::Activate) => Active,
        (Approved | Active, Action::Complete) => Completed,
        (Approved | Active, Action::Fail) => Failed,
        _ => return Err(IllegalTransition { from, action }),
    };
    Ok(to)
}
