//! API tokens and users as the Tokens and Users pages show them.

use super::Role;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A token as listed: never the token itself, which is shown once at creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct TokenInfo {
    pub id: Uuid,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// Recorded at minute precision.
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub scope: TokenScope,
}

/// The answer to creating a token: the only time its secret is sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreatedToken {
    pub id: Uuid,
    pub name: String,
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub scope: TokenScope,
}

/// What a token may do, so that an assistant or a script holds the least it
/// needs: `Read` reads what its person may read; `Book` also books and
/// extends; `Full` does all its person may do (every token made before
/// scopes is `Full`). `rules::scope` says which requests each lets through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenScope {
    Read,
    Book,
    #[default]
    Full,
}

impl TokenScope {
    pub const ALL: [Self; 3] = [Self::Read, Self::Book, Self::Full];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Book => "book",
            Self::Full => "full",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == text)
    }

    /// What it allows, in words (the Tokens page, the CLI, refusals).
    pub fn says(self) -> &'static str {
        match self {
            Self::Read => "read only: pools, free time and your bookings",
            Self::Book => "read, book and extend; not cancel or end",
            Self::Full => "everything you may do in the portal",
        }
    }
}

// A scope Berth does not know is a decode error, never read as `full`.
#[cfg(feature = "ssr")]
crate::model::checked_text_decode!(TokenScope, "token scope");

/// Longest lifetime a token created in the portal can have.
pub const MAX_TOKEN_DAYS: i64 = 366;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MembershipSource {
    /// Granted by an identity-provider group; replaced at every login.
    Oidc,
    /// Assigned by an admin; logins leave it alone.
    Manual,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    pub slug: String,
    pub source: MembershipSource,
}

/// A user as the admin's Users page lists them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserSummary {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role: Role,
    /// Whether the user signs in through the identity provider (else: CLI or seed).
    pub federated: bool,
    pub tenants: Vec<Membership>,
    /// Disabled by an admin: no login, session or token works; the reason shown.
    #[serde(default)]
    pub disabled: Option<String>,
}

/// How this portal lets people sign in; provided by the server's context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignInOptions {
    /// An OpenID provider is configured: `/auth/login` starts its flow.
    pub single_sign_on: bool,
    /// The labelled development login is on (only ever on a loopback address).
    pub dev_login: bool,
}

/// A user the development login offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DevUser {
    pub email: String,
    pub name: String,
    pub role: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignInPageData {
    pub options: SignInOptions,
    pub dev_users: Vec<DevUser>,
}

/// Settings' time zone: the one chosen (or learnt from the browser) and
/// every zone one may choose.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneChoice {
    pub chosen: Option<String>,
    pub zones: Vec<String>,
}
