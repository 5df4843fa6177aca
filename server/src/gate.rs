//! `berth gate`: the small auth step in front of a workspace, a second
//! container of its pod. "Open workspace" no longer puts the access token
//! in the URL (ingress access logs and browser history kept it, valid all
//! window): the portal sends a one-time code, good for 60 seconds, which
//! the gate exchanges for an `HttpOnly` cookie. Every other request needs
//! that cookie; the gate then passes it to the workspace (Jupyter, on
//! `127.0.0.1:8889`) with the token in an `Authorization: token …` header,
//! WebSocket upgrades included. Code and cookie are HMACs under the
//! session's access token, so the portal and the gate share no state, and a
//! rotated token (a holder dropped out) voids every code and cookie.
//!
//! Every workspace host is a sibling of every other tenant's under one
//! domain, so they are one *site*: the browser sends this cookie with a
//! neighbour's `fetch` and `WebSocket` calls, and Jupyter, seeing the token,
//! skips its own XSRF and Origin checks. The gate therefore lets a
//! state-changing request or an upgrade through only when it comes from the
//! workspace's own origin (`Origin`, else `Sec-Fetch-Site: same-origin`).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use hyper_util::rt::TokioIo;
use sha2::Sha256;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// Where the portal sends the browser: `<workspace>/.berth/open?code=…`.
pub const OPEN_PATH: &str = "/.berth/open";
/// The pod's readiness probe: the workspace behind the gate answers.
pub const READY_PATH: &str = "/.berth/ready";
/// `__Host-`: the browser keeps it to this exact host (no `Domain`, `Path=/`,
/// `Secure`), so a sibling host cannot set or shadow it.
pub const COOKIE: &str = "__Host-berth_workspace";
/// How long a code may wait to be used.
pub const CODE_LIFETIME_SECS: i64 = 60;

fn mac(token: &str, message: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(message.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Compares without telling, by its timing, how much matched.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// A one-time code for opening the workspace of `token`, valid until
/// `now` + 60 s: `<expiry>.<nonce>.<HMAC>`.
pub fn code(token: &str, now: i64) -> String {
    let expiry = now + CODE_LIFETIME_SECS;
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    format!("{expiry}.{nonce}.{}", mac(token, &format!("open:{expiry}:{nonce}")))
}

/// Why a code opened nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Malformed,
    Forged,
    Expired,
    Used,
}

pub struct Gate {
    token: String,
    upstream: SocketAddr,
    /// The workspace's own origin (`https://<host>`), the only one whose
    /// pages may change anything through the gate.
    origin: String,
    /// Codes spent, by nonce, until they expire.
    spent: Mutex<HashMap<String, i64>>,
}

impl Gate {
    pub fn new(token: String, upstream: SocketAddr, origin: &str) -> Self {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        Gate { token, upstream, origin, spent: Mutex::default() }
    }

    /// Checks `code` and spends it: a second use is refused.
    pub fn redeem(&self, code: &str, now: i64) -> Result<(), Refused> {
        let mut parts = code.splitn(3, '.');
        let (Some(expiry), Some(nonce), Some(given)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Refused::Malformed);
        };
        let expiry: i64 = expiry.parse().map_err(|_| Refused::Malformed)?;
        if !same(&mac(&self.token, &format!("open:{expiry}:{nonce}")), given) {
            return Err(Refused::Forged);
        }
        if expiry < now || expiry > now + CODE_LIFETIME_SECS {
            return Err(Refused::Expired);
        }
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        spent.retain(|_, until| *until >= now);
        match spent.insert(nonce.to_string(), expiry) {
            Some(_) => Err(Refused::Used),
            None => Ok(()),
        }
    }

    fn cookie(&self) -> String {
        mac(&self.token, "cookie")
    }

    /// The request carries the gate's cookie.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let wanted = self.cookie();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .any(|pair| pair.trim().split_once('=').is_some_and(|(name, value)| name == COOKIE && same(value, &wanted)))
    }
}

/// Why a request that carries the cookie is still refused.
#[derive(Debug, PartialEq, Eq)]
pub enum CrossOrigin {
    /// `Origin` names another origin (a sibling workspace, `null`, …).
    Foreign,
    /// Neither `Origin` nor `Sec-Fetch-Site` says where it came from.
    Unknown,
}

impl Gate {
    /// A request that may change something (any method but GET, HEAD and
    /// OPTIONS) or upgrade the connection passes only from the workspace's
    /// own origin; reads pass, since another origin cannot read the answer.
    pub fn from_own_origin(&self, method: &Method, headers: &HeaderMap) -> Result<(), CrossOrigin> {
        let upgrade = headers.contains_key(header::UPGRADE);
        if !upgrade && matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return Ok(());
        }
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        match (text(header::ORIGIN.as_str()), text("sec-fetch-site")) {
            (Some(origin), _) if origin.trim_end_matches('/').eq_ignore_ascii_case(&self.origin) => Ok(()),
            (Some(_), _) => Err(CrossOrigin::Foreign),
            (None, Some("same-origin")) => Ok(()),
            (None, Some(_)) => Err(CrossOrigin::Foreign),
            (None, None) => Err(CrossOrigin::Unknown),
        }
    }
}

/// Serves the gate on `listen` until the process ends.
pub async fn serve(listen: SocketAddr, gate: Gate) -> std::io::Result<()> {
    let app = axum::Router::new().fallback(handle).with_state(Arc::new(gate));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!("workspace gate on {listen}");
    axum::serve(listener, app).await?;
    Ok(())
}

async fn handle(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    match request.uri().path() {
        OPEN_PATH => open(&gate, &request),
        READY_PATH => match tokio::net::TcpStream::connect(gate.upstream).await {
            Ok(_) => StatusCode::NO_CONTENT.into_response(),
            Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "the workspace is not answering yet").into_response(),
        },
        _ if gate.admits(request.headers()) => match gate.from_own_origin(request.method(), request.headers()) {
            Ok(()) => proxy(&gate, request).await,
            Err(CrossOrigin::Foreign) => page(
                StatusCode::FORBIDDEN,
                "Refused: this request came from another site's page; only the workspace's own pages may change it.",
            ),
            Err(CrossOrigin::Unknown) => page(
                StatusCode::FORBIDDEN,
                "Refused: a request that changes the workspace must say where it came from (Origin).",
            ),
        },
        _ => page(StatusCode::UNAUTHORIZED, "Open this workspace from Berth: its link opens it once, within a minute."),
    }
}

fn page(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))], text).into_response()
}

/// `GET /.berth/open?code=…`: spends the code, sets the cookie, and sends
/// the browser on to `/` (so the code leaves the address bar at once).
fn open(gate: &Gate, request: &Request) -> Response {
    let query = request.uri().query().unwrap_or_default();
    let code = form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "code").map(|(_, v)| v.into_owned());
    let now = chrono::Utc::now().timestamp();
    match code.map(|code| gate.redeem(&code, now)) {
        Some(Ok(())) => {
            let cookie = format!("{COOKIE}={}; Path=/; HttpOnly; Secure; SameSite=Lax", gate.cookie());
            let cookie = HeaderValue::from_str(&cookie).expect("hex is a valid header value");
            (
                StatusCode::SEE_OTHER,
                [
                    (header::SET_COOKIE, cookie),
                    (header::LOCATION, HeaderValue::from_static("/")),
                    (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
                    (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
                ],
            )
                .into_response()
        }
        Some(Err(Refused::Expired | Refused::Used)) => page(
            StatusCode::UNAUTHORIZED,
            "This link was used already or is older than a minute: open the workspace from Berth again.",
        ),
        _ => page(StatusCode::UNAUTHORIZED, "This link does not open this workspace: open it from Berth."),
    }
}

/// Passes the request to the workspace with its token, and a WebSocket
/// (or any) upgrade through as a byte stream both ways.
async fn proxy(gate: &Gate, mut request: Request) -> Response {
    let unavailable = || page(StatusCode::BAD_GATEWAY, "The workspace is not answering yet; try again in a moment.");
    let Ok(stream) = tokio::net::TcpStream::connect(gate.upstream).await else { return unavailable() };
    let Ok((mut sender, connection)) = hyper::client::conn::http1::handshake::<_, Body>(TokioIo::new(stream)).await
    else {
        return unavailable();
    };
    tokio::spawn(connection.with_upgrades());
    let upgrading = request.headers().contains_key(header::UPGRADE).then(|| hyper::upgrade::on(&mut request));
    if let Ok(value) = HeaderValue::from_str(&format!("token {}", gate.token)) {
        request.headers_mut().insert(header::AUTHORIZATION, value);
    }
    let Ok(mut response) = sender.send_request(request).await else { return unavailable() };
    if let (StatusCode::SWITCHING_PROTOCOLS, Some(client)) = (response.status(), upgrading) {
        let workspace = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            if let (Ok(client), Ok(workspace)) = (client.await, workspace.await) {
                let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(client), &mut TokioIo::new(workspace)).await;
            }
        });
    }
    response.map(Body::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        Gate::new("t0ken".into(), "127.0.0.1:9".parse().unwrap(), "https://berth-a-0f0e0d0c.gpu.example.org/")
    }

    #[test]
    fn a_code_opens_once_within_a_minute_and_only_for_its_token() {
        let (gate, now) = (gate(), 1_800_000_000);
        let fresh = code("t0ken", now);
        assert_eq!(gate.redeem(&fresh, now + 59), Ok(()));
        assert_eq!(gate.redeem(&fresh, now + 59), Err(Refused::Used));
        assert_eq!(gate.redeem(&code("t0ken", now), now + 61), Err(Refused::Expired));
        assert_eq!(gate.redeem(&code("other", now), now), Err(Refused::Forged), "another session's code");
        let far = code("t0ken", now + 3600);
        assert_eq!(gate.redeem(&far, now), Err(Refused::Expired), "no code lives longer than a minute");
        let tampered = fresh.replacen(&(now + 60).to_string(), &(now + 120).to_string(), 1);
        assert_eq!(gate.redeem(&tampered, now), Err(Refused::Forged));
        assert_eq!(gate.redeem("garbage", now), Err(Refused::Malformed));
    }

    #[test]
    fn only_the_gates_cookie_admits() {
        let gate = gate();
        let with = |cookie: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
            gate.admits(&headers)
        };
        assert!(with(&format!("_xsrf=1; {COOKIE}={}", gate.cookie())));
        assert!(!with(&format!("{COOKIE}={}", mac("other", "cookie"))));
        assert!(!with(&format!("{COOKIE}=")));
        assert!(!gate.admits(&HeaderMap::new()));
    }

    #[test]
    fn only_the_workspaces_own_pages_change_it() {
        let gate = gate();
        let from = |method: Method, pairs: &[(&str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
            }
            gate.from_own_origin(&method, &headers)
        };
        let own = "https://berth-a-0f0e0d0c.gpu.example.org";
        let sibling = "https://x.berth-b-aaaabbbb.gpu.example.org";
        assert_eq!(from(Method::POST, &[("origin", own)]), Ok(()));
        assert_eq!(from(Method::POST, &[("origin", "HTTPS://Berth-A-0f0e0d0c.gpu.example.org")]), Ok(()));
        assert_eq!(from(Method::POST, &[("origin", sibling)]), Err(CrossOrigin::Foreign));
        assert_eq!(from(Method::POST, &[("origin", "null")]), Err(CrossOrigin::Foreign));
        assert_eq!(from(Method::POST, &[("origin", &format!("{own}.evil.org"))]), Err(CrossOrigin::Foreign));
        assert_eq!(
            from(Method::POST, &[("origin", "http://berth-a-0f0e0d0c.gpu.example.org")]),
            Err(CrossOrigin::Foreign)
        );
        assert_eq!(from(Method::DELETE, &[("sec-fetch-site", "same-origin")]), Ok(()));
        assert_eq!(from(Method::PUT, &[("sec-fetch-site", "same-site")]), Err(CrossOrigin::Foreign));
        assert_eq!(from(Method::PATCH, &[]), Err(CrossOrigin::Unknown));
        assert_eq!(from(Method::GET, &[("origin", sibling)]), Ok(()), "a read: the sibling cannot see the answer");
        let upgrade = |origin: &str| from(Method::GET, &[("upgrade", "websocket"), ("origin", origin)]);
        assert_eq!(upgrade(own), Ok(()));
        assert_eq!(upgrade(sibling), Err(CrossOrigin::Foreign), "a WebSocket from a sibling");
        assert_eq!(from(Method::GET, &[("upgrade", "websocket")]), Err(CrossOrigin::Unknown));
    }
}
