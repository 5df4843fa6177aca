//! Per-address limits on what an attacker repeats: requests to `/auth/*`
//! (sign-in flows, each of which costs a round trip to the provider) and
//! bearer tokens that fail (guessing). Over the limit a client gets `429`
//! with `Retry-After`; a token is then not even looked up. Per person, one
//! budget for what is expensive to answer once signed in: the free view
//! across pools and kinds, the sizing helper, finding a slot, and "Open
//! workspace" (a read of the cluster each time).
//!
//! Fixed one-minute windows in memory, per process: two replicas allow
//! twice the rate, which still ends guessing. Hand-written rather than
//! `governor`, because the token limit must ask "is this address over?"
//! before it counts anything (only failures count), which GCRA limiters
//! answer only by spending a cell.

use axum::extract::{Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

/// Addresses remembered at most; past it, windows that ended are dropped.
const MAX_TRACKED: usize = 50_000;

/// The limits, per client address and minute.
#[derive(Debug, Clone)]
pub struct RateLimits {
    pub auth_per_minute: u32,
    pub token_failures_per_minute: u32,
    /// Expensive requests (`EXPENSIVE`) one signed-in person may make.
    pub expensive_per_minute: u32,
    /// Requests one API token may make, of any kind (REST and MCP alike):
    /// a runaway script or assistant is slowed, not its person's browser.
    pub token_requests_per_minute: u32,
    /// Behind a proxy every peer is the proxy: the client address is then
    /// the last entry of this header (the one the proxy appended).
    pub client_address_header: Option<HeaderName>,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            auth_per_minute: 60,
            token_failures_per_minute: 20,
            expensive_per_minute: 60,
            token_requests_per_minute: 600,
            client_address_header: None,
        }
    }
}

/// Counts per key (a client address, a person) in the current window.
pub struct Limiter<K = IpAddr> {
    limit: u32,
    counts: Mutex<HashMap<K, (Instant, u32)>>,
}

impl<K: Hash + Eq + Copy> Limiter<K> {
    pub fn new(limit: u32) -> Self {
        Self { limit, counts: Mutex::new(HashMap::new()) }
    }

    /// Time until the address may try again, if its window's budget is spent.
    pub fn exceeded(&self, address: K, now: Instant) -> Option<Duration> {
        let counts = self.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match counts.get(&address) {
            Some((start, count)) if now < *start + WINDOW && *count >= self.limit => Some(*start + WINDOW - now),
            _ => None,
        }
    }

    /// Counts one event; answers `exceeded` as it stands after it.
    pub fn hit(&self, address: K, now: Instant) -> Option<Duration> {
        let mut counts = self.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if counts.len() >= MAX_TRACKED {
            counts.retain(|_, (start, _)| now < *start + WINDOW);
        }
        let entry = counts.entry(address).or_insert((now, 0));
        if now >= entry.0 + WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= self.limit {
            return Some(entry.0 + WINDOW - now);
        }
        entry.1 += 1;
        None
    }
}

/// The limiters of one process.
pub struct Limits {
    pub settings: RateLimits,
    pub auth: Limiter,
    pub token_failures: Limiter,
    pub expensive: Limiter<uuid::Uuid>,
    /// Keyed by the token's id.
    pub token_requests: Limiter<uuid::Uuid>,
}

impl Limits {
    pub fn new(settings: RateLimits) -> Self {
        Self {
            auth: Limiter::new(settings.auth_per_minute),
            token_failures: Limiter::new(settings.token_failures_per_minute),
            expensive: Limiter::new(settings.expensive_per_minute),
            token_requests: Limiter::new(settings.token_requests_per_minute),
            settings,
        }
    }

    /// The client's address: the configured header's last entry, else the
    /// peer's; `None` in-process (tests calling the router directly).
    pub fn client(&self, request: &Request) -> Option<IpAddr> {
        let forwarded = self.settings.client_address_header.as_ref().and_then(|name| {
            request
                .headers()
                .get_all(name)
                .iter()
                .next_back()
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(|v| v.trim().parse().ok())
        });
        forwarded.or_else(|| crate::web::http_server::peer(request).map(|peer| peer.ip()))
    }
}

/// `429 Too Many Requests` with whole seconds to wait.
pub fn too_many(wait: Duration, what: &'static str) -> Response {
    refuse(wait, what, "from this address")
}

fn refuse(wait: Duration, what: &'static str, whose: &str) -> Response {
    metrics::counter!("berth_rate_limited_total", "limit" => what).increment(1);
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        axum::Json(serde_json::json!({"error": "rate_limited", "field": null,
            "message": format!("too many {what} requests {whose}; try again in {seconds} s")})),
    )
        .into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}

/// The `/auth/*` layer: every request counts.
pub async fn limit_auth(State(state): State<super::AuthState>, request: Request, next: Next) -> Response {
    let limits = &state.auth.limits;
    if let Some(address) = limits.client(&request) {
        if let Some(wait) = limits.auth.hit(address, Instant::now()) {
            return too_many(wait, "sign-in");
        }
    }
    next.run(request).await
}

/// What is expensive to answer: the pages and server fns of the free view,
/// the sizing helper and finding a slot, the REST sizing helper, and
/// "Open workspace" (`/bookings/{id}/open`).
const EXPENSIVE: [&str; 8] =
    ["/free", "/fit", "/find", "/rpc/free_then", "/rpc/fit", "/rpc/find", "/api/v1/fit", "/api/v1/free"];

fn expensive(path: &str) -> bool {
    EXPENSIVE.contains(&path.trim_end_matches('/'))
        || path
            .strip_prefix("/bookings/")
            .and_then(|rest| rest.strip_suffix("/open"))
            .is_some_and(|id| !id.contains('/'))
}

/// Inside the identity layer: each signed-in person's expensive requests
/// count against their budget (a visitor's are refused by the pages
/// themselves, which need a sign-in).
pub async fn limit_expensive(State(state): State<super::AuthState>, request: Request, next: Next) -> Response {
    if expensive(request.uri().path()) {
        let person = request.extensions().get::<app::backend::accounts::identity::Identity>();
        if let Some(principal) = person.and_then(|identity| identity.principal.as_ref()) {
            if let Some(wait) = state.auth.limits.expensive.hit(principal.user_id, Instant::now()) {
                return refuse(wait, "free-view, sizing and open-workspace", "from you");
            }
        }
    }
    next.run(request).await
}

/// Inside the identity layer: every request a live token makes counts
/// against that token's budget.
pub async fn limit_tokens(State(state): State<super::AuthState>, request: Request, next: Next) -> Response {
    let token = request.extensions().get::<app::backend::accounts::identity::Identity>().and_then(|i| i.token);
    let limited = state.auth.limits.settings.token_requests_per_minute > 0;
    if let Some(token) = token.filter(|_| limited) {
        if let Some(wait) = state.auth.limits.token_requests.hit(token.id, Instant::now()) {
            return refuse(wait, "API", "with this token");
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_refuses_until_the_window_ends_then_starts_afresh() {
        let limiter = Limiter::new(2);
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let t0 = Instant::now();
        assert_eq!(limiter.hit(a, t0), None);
        assert_eq!(limiter.exceeded(a, t0), None);
        assert_eq!(limiter.hit(a, t0 + Duration::from_secs(1)), None);
        assert_eq!(limiter.exceeded(a, t0 + Duration::from_secs(1)), Some(Duration::from_secs(59)));
        assert_eq!(limiter.hit(a, t0 + Duration::from_secs(10)), Some(Duration::from_secs(50)));
        assert_eq!(limiter.hit(b, t0 + Duration::from_secs(10)), None, "each address has its own budget");
        assert_eq!(limiter.exceeded(a, t0 + WINDOW), None);
        assert_eq!(limiter.hit(a, t0 + WINDOW), None);
    }

    #[test]
    fn only_the_expensive_paths_count() {
        for path in ["/free", "/fit/", "/rpc/free_then", "/api/v1/fit", "/bookings/0f0e/open"] {
            assert!(expensive(path), "{path}");
        }
        for path in ["/", "/calendar", "/rpc/book", "/bookings/0f0e", "/bookings/a/b/open", "/freedom"] {
            assert!(!expensive(path), "{path}");
        }
    }

    #[test]
    fn behind_a_proxy_the_last_forwarded_address_counts() {
        let limits = Limits::new(RateLimits {
            client_address_header: Some(HeaderName::from_static("x-forwarded-for")),
            ..RateLimits::default()
        });
        let request = Request::builder()
            .header("x-forwarded-for", "203.0.113.9, 198.51.100.7")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(limits.client(&request), Some("198.51.100.7".parse().unwrap()));
        let mut direct = Request::builder().body(axum::body::Body::empty()).unwrap();
        direct.extensions_mut().insert(axum::extract::ConnectInfo(std::net::SocketAddr::from(([192, 0, 2, 5], 4000))));
        assert_eq!(limits.client(&direct), Some("192.0.2.5".parse().unwrap()), "no header: the peer");
    }
}
