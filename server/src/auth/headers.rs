//! Security headers on every response. The Content-Security-Policy allows
//! scripts only from the portal itself or carrying this response's nonce
//! (the hydration script gets it through Leptos context), WebAssembly
//! compilation, and forms posting to the portal (and to the identity
//! provider, where logout redirects).

use super::AuthState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use rand::RngCore;

/// This request's CSP nonce; the Leptos context reads it from the extensions.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

impl CspNonce {
    fn fresh() -> Self {
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        Self(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }
}

pub fn policy(nonce: &str, form_targets: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'self'{form_targets}"
    )
}

pub async fn secure(State(state): State<AuthState>, mut request: Request, next: Next) -> Response {
    let nonce = CspNonce::fresh();
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    let form_targets = match &state.auth.config.oidc {
        Some(oidc) => {
            url::Url::parse(&oidc.issuer).map(|u| format!(" {}", u.origin().ascii_serialization())).unwrap_or_default()
        }
        None => String::new(),
    };
    let headers = response.headers_mut();
    if let Ok(csp) = HeaderValue::from_str(&policy(&nonce.0, &form_targets)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // same-origin keeps Referer for our own CSRF check and sends nothing elsewhere.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Behind TLS, browsers must never fall back to plain http for the portal.
    if state.auth.config.secure_cookies() {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
    response
}
