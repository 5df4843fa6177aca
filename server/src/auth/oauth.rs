//! `/mcp` as an OAuth 2.1 resource server (the MCP authorization spec),
//! where single sign-on is configured: an assistant may bring an access
//! token from the portal's OpenID provider instead of a Berth API token.
//! The token must be a JWT access token (RFC 9068, `typ: at+jwt`, so an ID
//! token is never taken for one), signed by one of the provider's keys,
//! from its issuer, unexpired, and for this resource: its audience is
//! `/mcp`'s own URL, as the protected-resource metadata names it. It
//! stands for the person the provider knows by its subject, who must have
//! signed in to the portal once; its `scope` claim chooses what it may
//! do, as an API token's scope does (none of read, book or full: read).

use super::oidc::{LoginError, Oidc};
use app::backend::accounts::identity::{TokenFacts, TokenIssuer};
use app::backend::accounts::principals;
use app::model::{Principal, TokenScope};
use openidconnect::core::{CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm};
use openidconnect::{
    AdditionalClaims, ClaimsVerificationError, ClientId, IdToken, IdTokenVerifier, JsonWebTokenType, Nonce,
    NormalizedJsonWebTokenType, SignatureVerificationError,
};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

/// An access token's claims beyond those it shares with an ID token.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct AccessClaims {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
}
impl AdditionalClaims for AccessClaims {}

type AccessToken = IdToken<AccessClaims, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;

/// What a verified access token grants.
struct Grant {
    issuer: String,
    subject: String,
    scope: TokenScope,
    client: String,
}

/// Whether `bearer` could be a JWT at all (three dot-separated parts):
/// only then is the provider asked about it.
pub fn looks_like_jwt(bearer: &str) -> bool {
    bearer.split('.').count() == 3
}

/// The person and rights an access token for `audience` stands for; `None`
/// when it is not one (forged, expired, for another resource, an ID token,
/// or a person who never signed in to the portal).
pub async fn identify(
    db: &PgPool,
    oidc: &Oidc,
    bearer: &str,
    audience: &str,
) -> Result<Option<(Principal, TokenFacts)>, app::backend::ServiceError> {
    let grant = match verify(oidc, bearer, audience).await {
        Ok(grant) => grant,
        Err(refused) => {
            tracing::info!(reason = %refused, "an access token at /mcp was refused");
            return Ok(None);
        }
    };
    let Some(principal) = principals::by_provider_subject(db, &grant.issuer, &grant.subject).await? else {
        return Ok(None);
    };
    // One budget of requests per person and OAuth client.
    let key = format!("{}|{}|{}", grant.issuer, grant.subject, grant.client);
    let digest = <sha2::Sha256 as sha2::Digest>::digest(key.as_bytes());
    let id = Uuid::from_slice(&digest[..16]).unwrap_or_default();
    Ok(Some((principal, TokenFacts { id, scope: grant.scope, issuer: TokenIssuer::Provider })))
}

async fn verify(oidc: &Oidc, bearer: &str, audience: &str) -> Result<Grant, LoginError> {
    if !typed_as_access_token(bearer) {
        return Err(LoginError::Token("not a JWT access token: its typ is not at+jwt".into()));
    }
    let token: AccessToken = bearer.parse().map_err(|e| LoginError::Token(format!("not a JWT: {e}")))?;
    let claims = match check(oidc, &token, audience, false).await? {
        // A key we have not seen: the provider may have rotated keys.
        Err(ClaimsVerificationError::SignatureVerification(SignatureVerificationError::NoMatchingKey)) => {
            check(oidc, &token, audience, true).await?
        }
        other => other,
    };
    let claims = claims.map_err(|e| LoginError::Token(e.to_string()))?;
    let granted = claims.additional_claims();
    let scopes: Vec<&str> = granted.scope.as_deref().unwrap_or_default().split_whitespace().collect();
    let scope = [TokenScope::Full, TokenScope::Book]
        .into_iter()
        .find(|scope| scopes.contains(&scope.as_str()))
        .unwrap_or(TokenScope::Read);
    Ok(Grant {
        issuer: claims.issuer().to_string(),
        subject: claims.subject().to_string(),
        scope,
        client: granted.client_id.clone().unwrap_or_default(),
    })
}

type Checked = Result<openidconnect::IdTokenClaims<AccessClaims, CoreGenderClaim>, ClaimsVerificationError>;

async fn check(oidc: &Oidc, token: &AccessToken, audience: &str, fresh: bool) -> Result<Checked, LoginError> {
    let (issuer, keys) = oidc.keys(fresh).await?;
    let at_jwt = NormalizedJsonWebTokenType::try_from(&JsonWebTokenType::new("at+jwt".into()))
        .map_err(|e| LoginError::Token(e.to_string()))?;
    let verifier = IdTokenVerifier::new_public_client(ClientId::new(audience.to_string()), issuer, keys)
        .set_allowed_jose_types([at_jwt]);
    // An access token carries no nonce: there is none to match.
    Ok(token.claims(&verifier, |_: Option<&Nonce>| Ok(())).cloned())
}

/// RFC 9068 §4: an access token's JOSE header says `typ: at+jwt` (or its
/// media type). The verifier refuses any other `typ`, but takes a token
/// with none, as an ID token may well be: this refuses that too, so only
/// the audience does not stand between an ID token and `/mcp`.
fn typed_as_access_token(bearer: &str) -> bool {
    use base64::Engine as _;
    let header = bearer.split('.').next().and_then(|h| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(h).ok());
    let header: Option<serde_json::Value> = header.and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let typ = header.as_ref().and_then(|h| h.get("typ")).and_then(serde_json::Value::as_str).unwrap_or_default();
    ["at+jwt", "application/at+jwt"].iter().any(|t| typ.eq_ignore_ascii_case(t))
}

#[cfg(test)]
mod tests {
    use super::typed_as_access_token;
    use base64::Engine as _;

    fn with_header(header: &str) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!("{}.{}.sig", b64.encode(header), b64.encode(r#"{"sub":"ada"}"#))
    }

    #[test]
    fn only_a_header_typed_at_jwt_is_an_access_token() {
        assert!(typed_as_access_token(&with_header(r#"{"alg":"RS256","typ":"at+jwt"}"#)));
        assert!(typed_as_access_token(&with_header(r#"{"alg":"RS256","typ":"application/AT+JWT"}"#)));
        assert!(!typed_as_access_token(&with_header(r#"{"alg":"RS256"}"#)), "no typ: an ID token may look so");
        assert!(!typed_as_access_token(&with_header(r#"{"alg":"RS256","typ":"JWT"}"#)));
        assert!(!typed_as_access_token(&with_header(r#"{"alg":"RS256","typ":7}"#)));
        assert!(!typed_as_access_token("garbage"));
    }
}
