//! Webhook deliveries: a JSON POST signed with the hook's secret
//! (`X-Berth-Signature: sha256=<hex HMAC-SHA256 of the body>`), its id in
//! `X-Berth-Delivery` (the same on every retry: receivers drop repeats).
//!
//! Users choose the URLs, and the worker sits inside the cluster: unless
//! `--webhook-allow-private` is given, a hook's host must resolve only to
//! public addresses (checked on the address actually connected to, so a
//! DNS answer cannot swap in an internal one), and redirects are not
//! followed. Otherwise any user could make the worker POST to the cluster's
//! services or a cloud metadata endpoint.

use hmac::{Hmac, Mac};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use sha2::Sha256;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct Webhooks {
    http: reqwest::Client,
    allow_private: bool,
}

/// `sha256=<hex>` of the body under the hook's secret.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Loopback, private, link-local (cloud metadata), shared, benchmarking,
/// reserved, unspecified, multicast and documentation addresses, and IPv6
/// addresses that translate or tunnel to IPv4 ones: never a public receiver.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
                || (a == 100 && (64..128).contains(&b))
                // Benchmarking (198.18.0.0/15), IETF protocol assignments (192.0.0.0/24).
                || (a == 198 && (18..20).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let segments = v6.segments();
            let first = segments[0];
            // Addresses that carry an IPv4 address the network translates
            // or tunnels to: NAT64 (64:ff9b::/96 and the local-use
            // 64:ff9b:1::/48) and 6to4 (2002::/16) reach internal IPv4
            // hosts through a gateway; the IPv4-compatible ::a.b.c.d too.
            let nat64 = first == 0x64 && segments[1] == 0xff9b;
            let six_to_four = first == 0x2002;
            let compatible = segments[..6].iter().all(|s| *s == 0);
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || nat64
                || six_to_four
                || compatible
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                // Documentation (2001:db8::/32).
                || (first == 0x2001 && segments[1] == 0x0db8)
        }
    }
}

/// The system resolver, keeping only public addresses.
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| !is_internal(a.ip())).collect();
            if public.is_empty() {
                return Err(
                    format!("{host} has no public address (internal receivers need --webhook-allow-private)").into()
                );
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// An error and its causes, "outer: inner: …" (reqwest keeps the reason,
/// such as a refused address, in the causes).
fn causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

impl Webhooks {
    pub fn new(allow_private: bool) -> reqwest::Result<Self> {
        let mut builder = reqwest::Client::builder()
            // Never through a proxy from the environment (HTTP(S)_PROXY): it
            // would see every hook's URL and body, and reach for the worker
            // what the address filter below refuses.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("Berth-Webhook/", env!("CARGO_PKG_VERSION")));
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(PublicOnly));
        }
        Ok(Self { http: builder.build()?, allow_private })
    }

    /// Posts `body`; Ok only for a 2xx answer.
    pub async fn send(
        &self,
        url: &str,
        secret: &str,
        event: &str,
        delivery: uuid::Uuid,
        body: &serde_json::Value,
    ) -> Result<(), String> {
        let url = url::Url::parse(url).map_err(|_| "the hook's URL is not a URL".to_string())?;
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if !self.allow_private && literal.is_some_and(is_internal) {
            return Err("the hook's address is internal (allowed only with --webhook-allow-private)".into());
        }
        let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("X-Berth-Event", event)
            .header("X-Berth-Delivery", delivery.to_string())
            .header("X-Berth-Signature", signature(secret, &bytes))
            .body(bytes)
            .send()
            .await
            .map_err(|e| causes(&e))?;
        match response.status() {
            status if status.is_success() => Ok(()),
            status => Err(format!("the receiver answered {status}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn internal_addresses_are_recognised() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "198.18.0.1",
            "198.19.255.254",
            "64:ff9b::a00:1",
            "64:ff9b::808:808",
            "64:ff9b:1::1",
            "2002:a00:1::1",
            "::10.0.0.1",
            "2001:db8::1",
            "240.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "140.82.112.3", "2606:4700::1111", "198.20.0.1", "2001:4860::8888"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn internal_receivers_are_refused_unless_allowed() {
        let guarded = Webhooks::new(false).unwrap();
        let body = serde_json::json!({});
        let id = uuid::Uuid::nil();
        for url in ["http://127.0.0.1:9/hook", "http://169.254.169.254/latest", "http://[::1]:9/"] {
            let err = guarded.send(url, "s", "booking.idle", id, &body).await.unwrap_err();
            assert!(err.contains("internal"), "{url}: {err}");
        }
        // A name that resolves to loopback: refused on the address it resolves to.
        let err = guarded.send("http://localhost:9/hook", "s", "booking.idle", id, &body).await.unwrap_err();
        assert!(err.contains("no public address"), "{err}");
        // Allowed: it gets as far as connecting (nothing listens on port 9).
        let open = Webhooks::new(true).unwrap();
        let err = open.send("http://127.0.0.1:9/hook", "s", "booking.idle", id, &body).await.unwrap_err();
        assert!(!err.contains("internal"), "{err}");
    }

    /// A proxy from the environment would see every hook's URL and body
    /// and reach what the address filter refuses: it is never used.
    #[tokio::test]
    async fn a_proxy_in_the_environment_is_not_used() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = listener.local_addr().unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 4096];
            let _ = socket.read(&mut request).await;
            socket.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await.unwrap();
        });
        // Nothing listens on port 1: a request through the proxy would fail.
        for key in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
            // No other test of this binary reads these variables.
            std::env::set_var(key, "http://127.0.0.1:1");
        }
        for key in ["NO_PROXY", "no_proxy"] {
            std::env::remove_var(key);
        }
        let hooks = Webhooks::new(true).unwrap();
        let (url, body) = (format!("http://{receiver}/hook"), json!({}));
        let sent = hooks.send(&url, "s", "booking.idle", uuid::Uuid::nil(), &body).await;
        assert_eq!(sent, Ok(()), "delivered straight to the receiver");
    }

    #[test]
    fn signatures_are_hmac_sha256_of_the_body() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
