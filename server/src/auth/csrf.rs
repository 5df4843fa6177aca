//! Cross-site request forgery defence for everything that changes state.
//! Safe methods pass. Any other request is refused (403) when its `Origin`
//! (or else `Referer`) names another origin than the portal's, or when it
//! carries a cookie but neither header. A bearer-token call without cookies
//! is exempt: a browser cannot be tricked into attaching a token.

use super::identity::bearer;
use super::AuthState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use url::Url;

pub async fn guard(State(state): State<AuthState>, request: Request, next: Next) -> Response {
    match verdict(request.method(), request.headers(), bearer(&request).is_some(), &state.auth.config.origin()) {
        Ok(()) => next.run(request).await,
        Err(reason) => (
            StatusCode::FORBIDDEN,
            axum::Json(serde_json::json!({
                "error": "cross_origin",
                "message": reason,
                "field": null,
            })),
        )
            .into_response(),
    }
}

/// The decision, apart from the plumbing, so every case is unit-tested.
pub fn verdict(method: &Method, headers: &HeaderMap, has_bearer: bool, own_origin: &str) -> Result<(), &'static str> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let has_cookie = headers.contains_key(header::COOKIE);
    if has_bearer && !has_cookie {
        return Ok(());
    }
    let text = |name| headers.get(name).and_then(|v: &axum::http::HeaderValue| v.to_str().ok());
    let claimed = match (text(header::ORIGIN), text(header::REFERER)) {
        (Some(origin), _) => Some(origin.to_string()),
        (None, Some(referer)) => {
            Some(Url::parse(referer).map(|u| u.origin().ascii_serialization()).unwrap_or_default())
        }
        (None, None) => None,
    };
    match claimed {
        Some(origin) if origin == own_origin => Ok(()),
        Some(_) => Err("this request came from another site; it was refused to protect your session"),
        None if has_cookie => Err("a state-changing request from a browser must say where it comes from (Origin)"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const OWN: &str = "http://127.0.0.1:3000";

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn safe_methods_always_pass() {
        let evil = headers(&[(header::ORIGIN, "http://evil.test"), (header::COOKIE, "s=1")]);
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(verdict(&method, &evil, false, OWN).is_ok());
        }
    }

    #[test]
    fn unsafe_methods_need_our_origin_when_a_browser_could_be_involved() {
        let cookie = (header::COOKIE, "berth_session=x");
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(verdict(&method, &headers(&[(header::ORIGIN, OWN), cookie.clone()]), false, OWN).is_ok());
            assert!(verdict(&method, &headers(&[(header::ORIGIN, "http://evil.test"), cookie.clone()]), false, OWN)
                .is_err());
            // Another port or scheme is another origin.
            assert!(verdict(&method, &headers(&[(header::ORIGIN, "http://127.0.0.1:3001")]), false, OWN).is_err());
            assert!(verdict(&method, &headers(&[(header::ORIGIN, "null"), cookie.clone()]), false, OWN).is_err());
            // Referer stands in for a missing Origin.
            assert!(verdict(
                &method,
                &headers(&[(header::REFERER, "http://127.0.0.1:3000/tokens"), cookie.clone()]),
                false,
                OWN
            )
            .is_ok());
            assert!(verdict(&method, &headers(&[(header::REFERER, "http://evil.test/x"), cookie.clone()]), false, OWN)
                .is_err());
            assert!(verdict(&method, &headers(&[(header::REFERER, "not a url"), cookie.clone()]), false, OWN).is_err());
            // Neither header: refused with a cookie, allowed without (nothing to ride on).
            assert!(verdict(&method, &headers(std::slice::from_ref(&cookie)), false, OWN).is_err());
            assert!(verdict(&method, &headers(&[]), false, OWN).is_ok());
        }
    }

    #[test]
    fn bearer_calls_are_exempt_unless_they_also_carry_cookies() {
        let evil = (header::ORIGIN, "http://evil.test");
        assert!(verdict(&Method::POST, &headers(std::slice::from_ref(&evil)), true, OWN).is_ok());
        assert!(verdict(&Method::POST, &headers(&[evil, (header::COOKIE, "s=1")]), true, OWN).is_err());
    }
}
