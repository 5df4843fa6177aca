//! Cross-site request forgery and security headers, on real sockets with a
//! session from a real single sign-on.

use crate::common;

use common::fresh_db;
use common::provider::Portal;
use reqwest::header::{HeaderMap, HeaderValue};

struct Signed {
    portal: Portal,
    cookie: String,
    http: reqwest::Client,
}

async fn signed_in() -> Signed {
    let portal = Portal::start(fresh_db().await, None).await;
    let browser = portal.browser();
    assert_eq!(browser.login("ada").await.status(), 200);
    let cookie = browser.session_cookie().unwrap();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    Signed { portal, cookie, http }
}

impl Signed {
    /// A POST with the session cookie and the given Origin / Referer headers.
    async fn post(&self, path: &str, form: &[(&str, &str)], origin: Option<&str>, referer: Option<&str>) -> u16 {
        self.send(path, origin, referer, |request| request.form(form)).await
    }

    async fn post_json(&self, path: &str, origin: Option<&str>) -> u16 {
        self.send(path, origin, None, |request| request.json(&serde_json::json!({}))).await
    }

    async fn send(
        &self,
        path: &str,
        origin: Option<&str>,
        referer: Option<&str>,
        body: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> u16 {
        let mut headers = HeaderMap::new();
        headers.insert("cookie", HeaderValue::from_str(&format!("berth_session={}", self.cookie)).unwrap());
        if let Some(origin) = origin {
            headers.insert("origin", HeaderValue::from_str(origin).unwrap());
        }
        if let Some(referer) = referer {
            headers.insert("referer", HeaderValue::from_str(referer).unwrap());
        }
        let url = format!("{}{path}", self.portal.url);
        body(self.http.post(url).headers(headers)).send().await.unwrap().status().as_u16()
    }

    async fn tokens(&self) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM api_token").fetch_one(&self.portal.db).await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_posts_riding_on_a_session_are_refused() {
    let s = signed_in().await;
    let own = s.portal.url.clone();
    let create = [("name", "ci"), ("expires_in_days", "7")];
    let evil_port = format!("http://127.0.0.1:{}", s.portal.provider_port); // same site, other origin

    // A server fn.
    assert_eq!(s.post("/rpc/tokens/create", &create, Some("http://evil.test"), None).await, 403);
    assert_eq!(s.post("/rpc/tokens/create", &create, Some(&evil_port), None).await, 403);
    assert_eq!(s.post("/rpc/tokens/create", &create, None, Some("http://evil.test/page")).await, 403);
    assert_eq!(s.post("/rpc/tokens/create", &create, None, None).await, 403, "cookie but no origin at all");
    assert_eq!(s.tokens().await, 0, "nothing was created by a refused request");
    assert_eq!(s.post("/rpc/tokens/create", &create, Some(&own), None).await, 200);
    assert_eq!(s.post("/rpc/tokens/create", &create, None, Some(&format!("{own}/tokens"))).await, 200);
    assert_eq!(s.tokens().await, 2);

    // A REST endpoint.
    let cancel = format!("/api/v1/bookings/{}/cancel", uuid::Uuid::new_v4());
    assert_eq!(s.post_json(&cancel, Some("http://evil.test")).await, 403);
    assert_eq!(s.post_json(&cancel, None).await, 403);
    assert_eq!(s.post_json(&cancel, Some(&own)).await, 404, "past the CSRF check: no such booking");

    // Logout is a state change too.
    assert_eq!(s.post("/auth/logout", &[], Some("http://evil.test"), None).await, 403);
    assert_eq!(common::provider::me_with_cookie(&own, &s.cookie).await, 200, "still signed in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_calls_without_cookies_need_no_origin() {
    let s = signed_in().await;
    let token = common::token_for(&s.portal.db, "api@x.test", app::model::Role::User, "team-a").await;
    let revoke = |id: String| {
        s.http
            .post(format!("{}/rpc/tokens/revoke", s.portal.url))
            .bearer_auth(&token)
            .header("origin", "http://evil.test")
            .form(&[("id", id)])
            .send()
    };
    let response = revoke(uuid::Uuid::new_v4().to_string()).await.unwrap();
    assert_eq!(
        response.status(),
        404,
        "past the CSRF check: a token cannot be attached by a browser behind the user's back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_token_cannot_mint_tokens_but_the_browser_session_can() {
    let s = signed_in().await;
    let token = common::token_for(&s.portal.db, "api@x.test", app::model::Role::User, "team-a").await;
    let before = s.tokens().await;
    let response = s
        .http
        .post(format!("{}/rpc/tokens/create", s.portal.url))
        .bearer_auth(&token)
        .form(&[("name", "minted"), ("expires_in_days", "30")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let text = response.text().await.unwrap();
    assert!(text.contains("signed-in browser session"), "{text}");
    assert_eq!(s.tokens().await, before, "nothing minted");
    let own = s.portal.url.clone();
    assert_eq!(s.post("/rpc/tokens/create", &[("name", "ci"), ("expires_in_days", "7")], Some(&own), None).await, 200);
    assert_eq!(s.tokens().await, before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_security_headers_and_the_page_script_its_nonce() {
    let s = signed_in().await;
    let page = s
        .http
        .get(format!("{}/", s.portal.url))
        .header("cookie", format!("berth_session={}", s.cookie))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    let csp = headers["content-security-policy"].to_str().unwrap().to_string();
    let html = page.text().await.unwrap();
    let nonce = csp.split("'nonce-").nth(1).and_then(|rest| rest.split('\'').next()).expect("a nonce in the CSP");
    assert!(nonce.len() >= 16);
    assert!(html.contains(&format!("nonce=\"{nonce}\"")), "the hydration script carries the CSP nonce");
    assert!(!html.contains("<script>"), "no inline script without a nonce");
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("object-src 'none'"), "{csp}");
    assert!(csp.contains(&format!("form-action 'self' http://127.0.0.1:{}", s.portal.provider_port)), "{csp}");

    let other = s.http.get(format!("{}/", s.portal.url)).send().await.unwrap();
    let other_csp = other.headers()["content-security-policy"].to_str().unwrap();
    assert!(!other_csp.contains(nonce), "a fresh nonce per response");

    for path in ["/", "/api/v1/pools", "/no-such-page", "/auth/callback"] {
        let response = s.http.get(format!("{}{path}", s.portal.url)).send().await.unwrap();
        let h = response.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(h["referrer-policy"], "same-origin", "{path}");
        assert!(h.contains_key("content-security-policy"), "{path}");
    }
}
