//! A real OpenID provider (npm `oidc-provider`, started from
//! `end2end/oidc/provider.mjs`) and a Berth server on real sockets, both on
//! 127.0.0.1, plus a cookie-keeping HTTP client that walks the login like a
//! browser does.

use super::processes::free_port;
use server::auth::{Auth, AuthConfig, OidcSettings};
use server::{router, AppState};
use sqlx::PgPool;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const CLIENT_SECRET: &str = "berth-test-secret";

/// One provider process; dropping it stops it.
pub struct Provider {
    pub port: u16,
    child: Child,
}

impl Provider {
    /// Starts the provider; `forge` makes it tamper with every ID token.
    pub async fn start(port: u16, redirect: &str, forge: Option<&str>) -> Provider {
        Self::try_start(port, redirect, forge).await.expect("oidc-provider did not start")
    }

    /// None when the provider ends before it is ready: another socket can
    /// take a port between `free_port` and node's listen (tests run in
    /// parallel and every outgoing connection uses the same port range).
    async fn try_start(port: u16, redirect: &str, forge: Option<&str>) -> Option<Provider> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../end2end/oidc/provider.mjs");
        let mut command = Command::new("node");
        command
            .arg(script)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../end2end"))
            .env("PORT", port.to_string())
            .env("REDIRECT_URIS", redirect)
            .env("POST_LOGOUT_REDIRECT_URIS", redirect.trim_end_matches("auth/callback"))
            .env("CLIENT_SECRET", CLIENT_SECRET)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(how) = forge {
            command.env("FORGE", how);
        }
        let mut child = command.spawn().expect("node runs end2end/oidc/provider.mjs (npm ci in end2end first)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(std::time::Duration::from_secs(20), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("ready") {
                    return true;
                }
            }
            false
        });
        if !ready.await.unwrap_or(false) {
            return None;
        }
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(Provider { port, child })
    }

    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops the provider (its in-memory sessions and keys are gone).
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Berth serving on a real port with single sign-on against a provider.
pub struct Portal {
    pub url: String,
    pub db: PgPool,
    pub provider: Option<Provider>,
    pub provider_port: u16,
}

impl Portal {
    pub async fn start(db: PgPool, forge: Option<&str>) -> Portal {
        Self::start_with(db, forge, |_| {}).await
    }

    pub async fn start_with(db: PgPool, forge: Option<&str>, tweak: impl FnOnce(&mut AuthConfig)) -> Portal {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let redirect = format!("{url}/auth/callback");
        let mut ports_tried = Vec::new();
        let (provider_port, provider) = loop {
            let port = free_port();
            if let Some(provider) = Provider::try_start(port, &redirect, forge).await {
                break (port, provider);
            }
            ports_tried.push(port);
            assert!(ports_tried.len() < 4, "oidc-provider did not start on ports {ports_tried:?}");
        };
        let mut config = AuthConfig::local(url.parse().unwrap());
        config.oidc = Some(OidcSettings {
            issuer: provider.issuer(),
            client_id: "berth".into(),
            client_secret: CLIENT_SECRET.into(),
            scopes: vec!["openid".into(), "email".into(), "profile".into(), "groups".into()],
            groups_claim: "groups".into(),
            cluster_username: server::auth::config::ClusterUsername { claim: "email".into(), prefix: String::new() },
        });
        tweak(&mut config);
        let app = router(AppState::new(db.clone(), "target/site", Auth::new(config).unwrap()));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Portal { url, db, provider: Some(provider), provider_port }
    }

    /// Restarts the provider on the same address with a fresh signing key.
    pub async fn rotate_provider_keys(&mut self) {
        if let Some(old) = self.provider.take() {
            old.stop().await;
        }
        let redirect = format!("{}/auth/callback", self.url);
        self.provider = Some(Provider::start(self.provider_port, &redirect, None).await);
    }

    pub fn browser(&self) -> Browser {
        Browser::new(&self.url)
    }
}

/// A cookie jar and client that follow redirects, except into Berth's
/// callback: tests get to look at (and tamper with) that URL first.
pub struct Browser {
    pub jar: Arc<reqwest::cookie::Jar>,
    pub client: reqwest::Client,
    pub portal: String,
}

impl Browser {
    pub fn new(portal: &str) -> Browser {
        let jar = Arc::new(reqwest::cookie::Jar::default());
        let client = http_client()
            .cookie_provider(jar.clone())
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                if attempt.url().path() == "/auth/callback" {
                    attempt.stop()
                } else if attempt.previous().len() > 10 {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }))
            .build()
            .unwrap();
        Browser { jar, client, portal: portal.to_string() }
    }

    /// Berth's session cookie value, if the jar has one.
    pub fn session_cookie(&self) -> Option<String> {
        use reqwest::cookie::CookieStore;
        let header = self.jar.cookies(&self.portal.parse().unwrap())?;
        header.to_str().ok()?.split("; ").find_map(|pair| pair.strip_prefix("berth_session=").map(str::to_owned))
    }

    /// Starts a login at Berth and signs in at the provider's login page as
    /// `login`; returns the callback URL the provider redirects to.
    pub async fn sign_in_at_provider(&self, login: &str, next: Option<&str>) -> String {
        let start = match next {
            Some(next) => format!("{}/auth/login?next={}", self.portal, urlencode(next)),
            None => format!("{}/auth/login", self.portal),
        };
        let page = self.client.get(start).send().await.unwrap();
        if page.status().is_redirection() {
            // Still signed in at the provider: it answers at once.
            return callback_location(&page, &self.portal);
        }
        assert_eq!(page.status(), 200, "the provider's login page");
        let form_url = page.url().clone();
        assert!(form_url.path().starts_with("/interaction/"), "landed on {form_url}");
        let body = page.text().await.unwrap();
        assert!(body.contains("name=\"login\""), "a login form: {body}");
        let answer = self
            .client
            .post(form_url)
            .form(&[("prompt", "login"), ("login", login), ("password", "any")])
            .send()
            .await
            .unwrap();
        callback_location(&answer, &self.portal)
    }

    /// Delivers a callback URL to Berth; returns the final response (the
    /// landing page after a redirect, or an error page).
    pub async fn deliver(&self, callback: &str) -> reqwest::Response {
        self.client.get(callback).send().await.unwrap()
    }

    pub async fn login(&self, login: &str) -> reqwest::Response {
        let callback = self.sign_in_at_provider(login, None).await;
        self.deliver(&callback).await
    }

    /// `/api/v1/me` with this browser's cookies: status and body.
    pub async fn me(&self) -> (u16, serde_json::Value) {
        let response = self.client.get(format!("{}/api/v1/me", self.portal)).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }
}

fn callback_location(response: &reqwest::Response, portal: &str) -> String {
    assert!(response.status().is_redirection(), "stopped before the callback: {}", response.status());
    let location = response.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with(&format!("{portal}/auth/callback?")), "{location}");
    location
}

pub fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A client for the sign-in tests: a hung request fails the test with its
/// URL instead of stalling the whole run (seen once: a logout test waiting
/// forever).
pub fn http_client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().timeout(std::time::Duration::from_secs(30))
}

/// `/api/v1/me` with exactly this session cookie and nothing else.
/// The JSON at `url`, asked with `bearer` (or as a stranger).
pub async fn get_json(url: &str, bearer: Option<&str>) -> serde_json::Value {
    let request = http_client().build().unwrap().get(url);
    let request = match bearer {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    request.send().await.unwrap().json().await.unwrap()
}

pub async fn me_with_cookie(portal: &str, cookie: &str) -> u16 {
    http_client()
        .build()
        .unwrap()
        .get(format!("{portal}/api/v1/me"))
        .header("cookie", format!("berth_session={cookie}"))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}
