//! The OpenID Connect relying party: discovery, the authorization-code flow
//! with PKCE (S256), and ID-token verification (signature, issuer, audience,
//! expiry, nonce) with the `openidconnect` crate. Provider metadata and keys
//! are fetched on first use and again whenever a token names a key we do not
//! know, which is how a provider's key rotation reaches us.

use super::config::OidcSettings;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreJsonWebKeySet, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
};
use openidconnect::{AsyncHttpClient, HttpClientError, HttpRequest, HttpResponse};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, EmptyAdditionalClaims,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IdToken, IdTokenClaims, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, ProviderMetadataWithLogout, RedirectUrl, Scope, SignatureVerificationError, TokenResponse,
};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::RwLock;
use url::Url;

type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;
type CoreIdToken =
    IdToken<EmptyAdditionalClaims, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;

/// What the provider told us at discovery, ready to use.
#[derive(Clone)]
struct Discovered {
    client: Client,
    end_session: Option<Url>,
    /// The issuer as discovery confirmed it, and its signing keys, for
    /// access tokens (`oauth`) as for ID tokens.
    issuer: IssuerUrl,
    keys: CoreJsonWebKeySet,
}

pub struct Oidc {
    settings: OidcSettings,
    redirect: RedirectUrl,
    http: Http,
    discovered: RwLock<Option<Discovered>>,
    /// When the keys were last fetched again for a key we did not know.
    refetched: std::sync::Mutex<Option<Instant>>,
}

/// How often a token naming a key we do not know sends us to the provider
/// for its keys again. Such a token costs nothing to make (issuer and
/// audience are public), and each would otherwise be two requests to the
/// provider; a key the provider really rotated in is among the keys the
/// last fetch brought, or is fetched at most this long after.
const REFETCH_EVERY: Duration = Duration::from_secs(30);

/// Kept in the browser's server-side session between `/auth/login` and
/// `/auth/callback`; taken out (and so usable once) by the callback.
#[derive(Serialize, Deserialize)]
pub struct PendingLogin {
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// Local path to return to after login.
    pub next: String,
}

/// A verified login.
pub struct VerifiedLogin {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    /// The provider vouches that the address belongs to this user.
    pub email_verified: bool,
    pub name: Option<String>,
    pub groups: Vec<String>,
    /// The user's name on the cluster (`ClusterUsername`), if the token gives one.
    pub cluster_username: Option<String>,
    /// The raw ID token, kept for the provider's end-session `id_token_hint`.
    pub id_token: String,
}

/// Why a login was refused; each becomes an error page, never a session.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("the identity provider could not be reached or answered unexpectedly")]
    Provider(String),
    #[error("the identity provider refused the login: {0}")]
    Refused(String),
    #[error("the ID token was not accepted: {0}")]
    Token(String),
}

impl Oidc {
    pub fn new(settings: OidcSettings, redirect: Url) -> Result<Self, reqwest::Error> {
        let http = Http(
            reqwest::Client::builder()
                // Following redirects would let a provider point us anywhere (SSRF).
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(10))
                // A fresh connection for each request: a pooled one left idle
                // between two logins can be closed by the provider (Node's
                // keep-alive ends at 5 s) just as it is reused, and that
                // login failed with "Request failed". Logins are rare; the
                // handshake costs nothing a person notices.
                .pool_max_idle_per_host(0)
                .build()?,
        );
        Ok(Self {
            settings,
            redirect: RedirectUrl::from_url(redirect),
            http,
            discovered: RwLock::new(None),
            refetched: Default::default(),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    async fn discover(&self) -> Result<Discovered, LoginError> {
        let issuer = IssuerUrl::new(self.settings.issuer.clone()).map_err(|e| LoginError::Provider(e.to_string()))?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|e| LoginError::Provider(format!("discovery: {e}")))?;
        let end_session = metadata.additional_metadata().end_session_endpoint.as_ref().map(|u| u.url().clone());
        let (issuer, keys) = (metadata.issuer().clone(), metadata.jwks().clone());
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            Some(ClientSecret::new(self.settings.client_secret.clone())),
        )
        .set_redirect_uri(self.redirect.clone());
        Ok(Discovered { client, end_session, issuer, keys })
    }

    /// The discovered client (a cheap clone), discovering first if needed.
    async fn client(&self) -> Result<Discovered, LoginError> {
        if let Some(found) = self.discovered.read().await.as_ref() {
            return Ok(found.clone());
        }
        let mut slot = self.discovered.write().await;
        if slot.is_none() {
            *slot = Some(self.discover().await?);
        }
        Ok(slot.clone().expect("just filled"))
    }

    /// The provider's issuer and signing keys; with `fresh`, fetched again
    /// (a token named a key we do not know: the provider rotated).
    pub(super) async fn keys(&self, fresh: bool) -> Result<(IssuerUrl, CoreJsonWebKeySet), LoginError> {
        if fresh {
            self.rediscover().await?;
        }
        let discovered = self.client().await?;
        Ok((discovered.issuer, discovered.keys))
    }

    async fn rediscover(&self) -> Result<(), LoginError> {
        if !due(&self.refetched, Instant::now(), REFETCH_EVERY) {
            return Ok(());
        }
        let fresh = self.discover().await?;
        *self.discovered.write().await = Some(fresh);
        Ok(())
    }

    /// The provider's authorization URL and what the callback must check.
    pub async fn start(&self, next: String) -> Result<(Url, PendingLogin), LoginError> {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let scopes = self.settings.scopes.clone();
        let discovered = self.client().await?;
        let mut request = discovered.client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in scopes.iter().filter(|s| s.as_str() != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let pending = PendingLogin {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
            next,
        };
        Ok((url, pending))
    }

    /// Exchanges the code (with the PKCE verifier) and verifies the ID token.
    pub async fn finish(&self, pending: PendingLogin, code: String) -> Result<VerifiedLogin, LoginError> {
        let discovered = self.client().await?;
        let response = discovered
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|e| LoginError::Provider(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier))
            .request_async(&self.http)
            .await
            .map_err(|e| LoginError::Refused(e.to_string()))?;
        let id_token =
            response.id_token().cloned().ok_or_else(|| LoginError::Token("no ID token in the response".into()))?;
        let nonce = Nonce::new(pending.nonce);
        let verified = match self.verify(&id_token, &nonce).await? {
            Err(ClaimsVerificationError::SignatureVerification(SignatureVerificationError::NoMatchingKey)) => {
                // A key we have not seen: the provider may have rotated keys.
                self.rediscover().await?;
                self.verify(&id_token, &nonce).await?
            }
            other => other,
        };
        let claims = verified.map_err(|e| LoginError::Token(with_cause(&e)))?;
        let payload = payload(&id_token.to_string());
        let groups = groups_claim(&payload, &self.settings.groups_claim);
        let cluster_username = self.settings.cluster_username.of(&payload);
        Ok(VerifiedLogin {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified().unwrap_or(false),
            name: claims.name().and_then(|n| n.get(None)).map(|n| n.to_string()),
            groups,
            cluster_username,
            id_token: id_token.to_string(),
        })
    }

    async fn verify(
        &self,
        token: &CoreIdToken,
        nonce: &Nonce,
    ) -> Result<Result<IdTokenClaims<EmptyAdditionalClaims, CoreGenderClaim>, ClaimsVerificationError>, LoginError>
    {
        let discovered = self.client().await?;
        let verifier = discovered.client.id_token_verifier();
        let claims = token.claims(&verifier, nonce).cloned();
        Ok(claims)
    }

    /// Where to send the browser to end the provider's session too, when
    /// the provider has an end-session endpoint.
    pub async fn end_session_url(&self, id_token: Option<&str>, after: &Url) -> Option<Url> {
        let mut url = self.client().await.ok()?.end_session?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("client_id", &self.settings.client_id);
            query.append_pair("post_logout_redirect_uri", after.as_str());
            if let Some(hint) = id_token {
                query.append_pair("id_token_hint", hint);
            }
        }
        Some(url)
    }
}

/// The groups claim of an ID token whose signature has been verified: read
/// from the token's own payload, so any claim name can be configured.
/// An error with its cause: "Signature verification failed" alone does not
/// say whether the key was unknown, ambiguous or the signature wrong.
fn with_cause(error: &dyn std::error::Error) -> String {
    match error.source() {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}

/// The claims of a token already verified, as JSON (null if unreadable).
fn payload(verified_token: &str) -> serde_json::Value {
    use base64::Engine as _;
    let Some(payload) = verified_token.split('.').nth(1) else { return serde_json::Value::Null };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload) else {
        return serde_json::Value::Null;
    };
    serde_json::from_slice(&bytes).unwrap_or_default()
}

fn groups_claim(payload: &serde_json::Value, claim: &str) -> Vec<String> {
    match payload.get(claim) {
        Some(serde_json::Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        Some(serde_json::Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

/// openidconnect's requests, sent with the server's reqwest: its own
/// `reqwest` feature would build a second, older reqwest (issue 59). The
/// same conversion as oauth2's own client for reqwest.
struct Http(reqwest::Client);

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + Sync + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let response = self.0.execute(request.try_into().map_err(Box::new)?).await.map_err(Box::new)?;
            let mut builder = http::Response::builder().status(response.status()).version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            builder.body(response.bytes().await.map_err(Box::new)?.to_vec()).map_err(HttpClientError::Http)
        })
    }
}

/// Whether `every` has passed since `last` (or it never was); if so, now
/// is the last time.
fn due(last: &std::sync::Mutex<Option<Instant>>, now: Instant, every: Duration) -> bool {
    let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if last.is_some_and(|at| now.saturating_duration_since(at) < every) {
        return false;
    }
    *last = Some(now);
    true
}

#[cfg(test)]
mod tests {
    use super::{due, groups_claim, payload, Duration, Instant};
    use base64::Engine as _;

    fn token(payload: &str) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!("{}.{}.sig", b64.encode("{}"), b64.encode(payload))
    }

    #[test]
    fn unknown_keys_send_us_to_the_provider_at_most_once_every_while() {
        let (last, every, t0) = (std::sync::Mutex::new(None), Duration::from_secs(30), Instant::now());
        assert!(due(&last, t0, every), "the first time");
        assert!(!due(&last, t0 + Duration::from_secs(1), every), "a second forged kid a second later");
        assert!(!due(&last, t0 + Duration::from_secs(29), every));
        assert!(due(&last, t0 + every, every), "after the while");
        assert!(!due(&last, t0 + every + Duration::from_secs(5), every), "counted from the last fetch");
    }

    #[test]
    fn groups_come_from_the_configured_claim_as_list_or_single_string() {
        assert_eq!(groups_claim(&payload(&token(r#"{"groups":["a","b",3]}"#)), "groups"), vec!["a", "b"]);
        assert_eq!(groups_claim(&payload(&token(r#"{"roles":"admins"}"#)), "roles"), vec!["admins"]);
        assert!(groups_claim(&payload(&token(r#"{"groups":{"x":1}}"#)), "groups").is_empty());
        assert!(groups_claim(&payload(&token(r#"{}"#)), "groups").is_empty());
        assert!(groups_claim(&payload("garbage"), "groups").is_empty());
    }

    #[test]
    fn the_cluster_username_comes_from_the_api_servers_claim_and_never_from_an_unverified_email() {
        use crate::auth::config::ClusterUsername;
        let claims = |json: &str| payload(&token(json));
        let email = ClusterUsername { claim: "email".into(), prefix: String::new() };
        let verified = claims(r#"{"sub":"u1","email":"ada@x.test","email_verified":true}"#);
        let unverified = claims(r#"{"sub":"u1","email":"admin@x.test","email_verified":false}"#);
        assert_eq!(email.of(&verified).as_deref(), Some("ada@x.test"));
        assert_eq!(email.of(&unverified), None, "kube-apiserver refuses such a token too");
        assert_eq!(email.of(&claims(r#"{"sub":"u1","email":"admin@x.test"}"#)), None);
        let subject = ClusterUsername { claim: "sub".into(), prefix: "oidc:".into() };
        assert_eq!(subject.of(&unverified).as_deref(), Some("oidc:u1"));
        let preferred = ClusterUsername { claim: "preferred_username".into(), prefix: String::new() };
        assert_eq!(preferred.of(&verified), None, "a claim the token lacks names no one");
    }
}
