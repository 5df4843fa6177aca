//! Every (state, action) pair: the legal ones lead where the design says, all
//! others are refused.

use app::model::BookingState::{self, *};
use app::rules::state_machine::{transition, Action, IllegalTransition};

const LEGAL: &[(BookingState, Action, BookingState)] = &[
    (Pending, Action::Approve, Approved),
    (Pending, Action::Reject, Rejected),
    (Pending, Action::Cancel, Canceled),
    (Approved, Action::Cancel, Canceled),
    (Approved, Action::Activate, Active),
    (Approved, Action::Complete, Completed),
    (Approved, Action::Fail, Failed),
    (Active, Action::Complete, Completed),
    (Active, Action::Fail, Failed),
];

#[test]
fn every_pair_is_legal_exactly_when_listed() {
    for from in BookingState::ALL {
        for action in Action::ALL {
            let expected = LEGAL.iter().find(|(f, a, _)| *f == from && *a == action).map(|(_, _, to)| *to);
            match expected {
                Some(to) => assert_eq!(transition(from, action), Ok(to), "{from:?} {action:?}"),
                None => assert_eq!(
                    transition(from, action),
                    Err(IllegalTransition { from, action }),
                    "{from:?} {action:?} must be refused"
                ),
            }
        }
    }
}

#[test]
fn terminal_states_never_move_and_release_capacity() {
    for state in [Completed, Canceled, Rejected, Failed] {
        assert!(!state.holds_capacity());
        assert!(Action::ALL.iter().all(|&a| transition(state, a).is_err()));
    }
    assert!(Pending.holds_capacity() && Approved.holds_capacity() && Active.holds_capacity());
}

#[test]
fn refusal_explains_itself() {
    let err = transition(Completed, Action::Cancel).unwrap_err();
    assert_eq!(err.to_string(), "a completed booking cannot cancel");
}
