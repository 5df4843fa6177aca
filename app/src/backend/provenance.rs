//! How the request being served acts: with which API token, and through
//! which client (an assistant's MCP `clientInfo`). The server sets it around
//! a request's whole future (`scoped`); every change the request writes
//! records it beside its actor (`booking_event`, `audit_event`), so the log
//! and My bookings can say "booked via Claude Code". Outside a request (the
//! worker, a batch run for others) it is empty, or carried by hand (an
//! admission request keeps the one it was made under).

use std::future::Future;
use uuid::Uuid;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The API token the request came with.
    pub token: Option<Uuid>,
    /// The client's name and version as it introduced itself; empty when
    /// it did not (the portal's pages, curl).
    pub client: String,
}

/// The longest client name kept: it is the client's own text.
const CLIENT_LIMIT: usize = 80;

impl Provenance {
    /// A client's self-description as the log keeps it: its name and
    /// version, at most 80 chars, without control characters or the
    /// direction overrides that would make it read as something else.
    pub fn client_named(name: &str, version: &str) -> String {
        let said = format!("{} {}", name.trim(), version.trim());
        let shown = |c: &char| !c.is_control() && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
        said.trim().chars().filter(shown).take(CLIENT_LIMIT).collect()
    }

    /// The provenance of the request being served (empty outside one).
    pub fn current() -> Self {
        ACTING.try_with(Clone::clone).unwrap_or_default()
    }
}

tokio::task_local! {
    static ACTING: Provenance;
}

/// Runs `work` as acting with `provenance`.
pub async fn scoped<F: Future>(provenance: Provenance, work: F) -> F::Output {
    ACTING.scope(provenance, work).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_name_is_kept_short_and_plain() {
        assert_eq!(Provenance::client_named(" claude-code ", "1.2.3"), "claude-code 1.2.3");
        assert_eq!(Provenance::client_named("x\u{7}y\n", ""), "xy");
        assert_eq!(Provenance::client_named("evil\u{202E}edoc-edualc", "1"), "eviledoc-edualc 1");
        assert_eq!(Provenance::client_named(&"a".repeat(200), "1").chars().count(), 80);
    }

    #[tokio::test]
    async fn a_scope_is_seen_inside_it_only() {
        let inside = Provenance { token: Some(Uuid::nil()), client: "c 1".into() };
        let seen = scoped(inside.clone(), async { Provenance::current() }).await;
        assert_eq!(seen, inside);
        assert_eq!(Provenance::current(), Provenance::default());
    }
}
