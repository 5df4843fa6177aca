//! Which client made a tool call, for the audit log and "booked via …".
//! A client of the 2026-07-28 protocol (and `berth mcp`, for the assistant
//! behind it) names itself in every call's `_meta`. An older one names
//! itself only in `initialize`, and `/mcp` keeps no session: the name it
//! gave there is remembered for its token, and a later call with the same
//! token and no name of its own is taken to come from it.

use app::backend::provenance::Provenance;
use rmcp::model::Implementation;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// More tokens than this introduced since the last clearing: forget them
/// all (each is learned again at its client's next `initialize`).
const REMEMBERED: usize = 10_000;

#[derive(Clone, Default)]
pub struct Introduced(Arc<Mutex<HashMap<Uuid, String>>>);

pub fn named(client: &Implementation) -> String {
    Provenance::client_named(&client.name, &client.version)
}

impl Introduced {
    pub fn remember(&self, token: Uuid, client: &Implementation) {
        let mut known = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if known.len() >= REMEMBERED && !known.contains_key(&token) {
            known.clear();
        }
        known.insert(token, named(client));
    }

    /// The name a call goes under: its own, else its token's last
    /// introduction, else none.
    pub fn of_call(&self, token: Uuid, own: Option<Implementation>) -> String {
        match own {
            Some(client) => named(&client),
            None => self.0.lock().unwrap_or_else(|p| p.into_inner()).get(&token).cloned().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_named_by_itself_first_then_by_its_tokens_introduction() {
        let introduced = Introduced::default();
        let (token, other) = (Uuid::new_v4(), Uuid::new_v4());
        assert_eq!(introduced.of_call(token, None), "");
        introduced.remember(token, &Implementation::new("claude-code", "1.2.0"));
        assert_eq!(introduced.of_call(token, None), "claude-code 1.2.0");
        assert_eq!(introduced.of_call(token, Some(Implementation::new("goose", "0.9"))), "goose 0.9");
        assert_eq!(introduced.of_call(other, None), "");
    }
}
