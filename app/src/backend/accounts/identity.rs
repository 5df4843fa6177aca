//! Who is asking, as the server's identity layer resolved it once per request
//! (from a bearer token or the browser session) and left in the request's
//! extensions. Server fns read it through `rpc::ctx`; the REST API reads the
//! same value through its extractor, so there is one answer for every transport.

use crate::model::{Principal, TokenScope};
use uuid::Uuid;

/// How the request proved who it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Anonymous,
    /// The browser's login cookie.
    Login,
    Token,
}

#[derive(Clone, Debug)]
pub struct Identity {
    pub principal: Option<Principal>,
    pub via: Via,
    /// The live token the request came with: what it may do
    /// (`rules::scope`), and which one it is (each has its own budget of
    /// requests).
    pub token: Option<TokenFacts>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenFacts {
    /// An API token's id; for a provider's access token, one id per
    /// person and OAuth client (its budget of requests is theirs).
    pub id: Uuid,
    pub scope: TokenScope,
    pub issuer: TokenIssuer,
}

impl TokenFacts {
    /// The id of the API token this is, for the audit log; `None` for a
    /// provider's access token (the MCP client it came through is named).
    pub fn api_token(&self) -> Option<Uuid> {
        (self.issuer == TokenIssuer::Berth).then_some(self.id)
    }
}

/// Who issued the token: the portal (an API token, made on the Tokens
/// page), or the OpenID provider (an OAuth access token for `/mcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenIssuer {
    Berth,
    Provider,
}

impl Identity {
    pub fn anonymous() -> Self {
        Self { principal: None, via: Via::Anonymous, token: None }
    }
}
