//! `berth gate` in front of a real workspace: PyPI `jupyter-server`
//! (installed by `.ci/lib.sh ensure_jupyter_server`) behind the gate, as in
//! a workspace's pod. Jupyter trusts a request that carries its token and
//! then skips its own XSRF and WebSocket Origin checks, and the gate adds the
//! token to every request that carries its cookie; a sibling workspace's
//! page is the same site, so the browser sends that cookie with its calls.
//! These tests open the workspace with a one-time code, create a file and
//! open a terminal from the workspace's own origin, and show the same
//! requests from a sibling origin, from `Origin: null` and from nowhere
//! refused before Jupyter sees them.

use crate::common;

use common::processes::free_port;
use reqwest::{header, redirect, StatusCode};
use server::gate::{self, Gate};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
/// The workspace's own origin, as the worker hands it to the gate.
const OWN: &str = "https://berth-team-a-0f0e0d0c.gpu.example.org";
/// A page in another tenant's workspace: a sibling under the same domain.
const SIBLING: &str = "https://x.berth-team-b-aaaabbbb.gpu.example.org";

/// A real `jupyter_server` on a free port, its files in a folder of its
/// own; killed (and the folder removed) on drop.
struct Jupyter {
    child: Child,
    port: u16,
    root: PathBuf,
}

impl Jupyter {
    fn start() -> Option<Self> {
        let installed = Command::new("python3").args(["-c", "import jupyter_server, terminado"]).status();
        if !installed.is_ok_and(|s| s.success()) {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "jupyter-server is missing under CI=true (`source .ci/lib.sh && ensure_jupyter_server`)"
            );
            eprintln!("skipped: no jupyter-server (`source .ci/lib.sh && ensure_jupyter_server` installs it)");
            return None;
        }
        let port = free_port();
        let root = std::env::temp_dir().join(format!("berth-jupyter-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&root).unwrap();
        let child = Command::new("python3")
            .args(["-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1"])
            .arg(format!("--ServerApp.port={port}"))
            .arg(format!("--IdentityProvider.token={TOKEN}"))
            .arg(format!("--ServerApp.root_dir={}", root.display()))
            .env("JUPYTER_CONFIG_DIR", root.join(".config"))
            .env("JUPYTER_DATA_DIR", root.join(".data"))
            .env("JUPYTER_RUNTIME_DIR", root.join(".runtime"))
            .env("SHELL", "/bin/sh")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        Some(Jupyter { child, port, root })
    }
}

impl Drop for Jupyter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

struct Workspace {
    jupyter: Jupyter,
    gate: String,
    http: reqwest::Client,
    cookie: String,
}

/// Jupyter and the gate in front of it, once Jupyter answers through the
/// gate (`None`: no jupyter-server here); `Some(None)` when Jupyter exited
/// first (the port it was given was taken in between: this binary's other
/// test picks free ports at the same time).
async fn serving(http: &reqwest::Client) -> Option<Option<(Jupyter, String)>> {
    let mut jupyter = Jupyter::start()?;
    let upstream = format!("127.0.0.1:{}", jupyter.port).parse().unwrap();
    let listen = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    tokio::spawn(gate::serve(listen, Gate::new(TOKEN.into(), upstream, OWN)));
    let gate = format!("http://{listen}");
    // Jupyter takes a few seconds to start; the gate's probe says when.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = http.get(format!("{gate}{}", gate::READY_PATH)).send().await;
        if ready.is_ok_and(|r| r.status() == StatusCode::NO_CONTENT) {
            return Some(Some((jupyter, gate)));
        }
        if jupyter.child.try_wait().ok().flatten().is_some() {
            return Some(None);
        }
        assert!(Instant::now() < deadline, "jupyter_server did not answer behind the gate within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Workspaces start one at a time: a free port picked by one test's
/// Jupyter or gate is not taken by the other's before it is bound (a probe
/// could then be answered by the other test's gate).
static STARTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Jupyter, the gate in front of it, and the cookie a one-time code gave.
async fn workspace() -> Option<Workspace> {
    let _one_at_a_time = STARTING.lock().await;
    let http =
        reqwest::Client::builder().redirect(redirect::Policy::none()).timeout(Duration::from_secs(30)).build().unwrap();
    let mut started = None;
    for _ in 0..3 {
        started = serving(&http).await?;
        if started.is_some() {
            break;
        }
    }
    let (jupyter, gate) = started.expect("jupyter_server kept exiting at start, on three free ports");
    let code = gate::code(TOKEN, chrono::Utc::now().timestamp());
    let opened = http.get(format!("{gate}{}?code={code}", gate::OPEN_PATH)).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    let set = opened.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(set.starts_with("__Host-berth_workspace="), "a __Host- cookie: {set}");
    for attribute in ["Path=/", "HttpOnly", "Secure", "SameSite=Lax"] {
        assert!(set.split("; ").any(|a| a == attribute), "{attribute} in {set}");
    }
    assert!(!set.contains("Domain"), "a __Host- cookie names no domain: {set}");
    let cookie = set.split(';').next().unwrap().to_string();
    Some(Workspace { jupyter, gate, http, cookie })
}

impl Workspace {
    /// `POST /api/contents` (a new untitled file) with the given headers.
    async fn create_file(&self, headers: &[(&str, &str)]) -> (StatusCode, String) {
        let mut request = self
            .http
            .post(format!("{}/api/contents", self.gate))
            .header(header::COOKIE, &self.cookie)
            .json(&serde_json::json!({ "type": "file", "ext": ".py" }));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.text().await.unwrap())
    }

    fn files(&self) -> usize {
        std::fs::read_dir(&self.jupyter.root)
            .unwrap()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .count()
    }

    /// A WebSocket handshake to `path` through the gate, by hand: the status
    /// line, and what the server sent next (terminado's first message).
    async fn websocket(&self, path: &str, origin: Option<&str>) -> (String, String) {
        let mut stream = tokio::net::TcpStream::connect(self.gate.trim_start_matches("http://")).await.unwrap();
        let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{origin}Cookie: {cookie}\r\n\r\n",
            host = self.gate.trim_start_matches("http://"),
            cookie = self.cookie,
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut buffer = [0u8; 4096];
        // Until the headers end, and for a 101 until a first frame arrives.
        loop {
            let text = String::from_utf8_lossy(&seen).to_string();
            if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                let status = head.lines().next().unwrap_or_default().to_string();
                if !status.contains(" 101 ") || rest.contains("setup") || Instant::now() > deadline {
                    return (status, rest.to_string());
                }
            }
            assert!(Instant::now() < deadline, "no answer to the handshake: {text}");
            match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Err(_) => {
                    let text = String::from_utf8_lossy(&seen).to_string();
                    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
                    return (head.lines().next().unwrap_or_default().to_string(), rest.to_string());
                }
                Ok(Ok(n)) => seen.extend_from_slice(&buffer[..n]),
                Ok(Err(err)) => panic!("reading the handshake: {err}"),
            }
        }
    }

    /// A new terminal, made from the workspace's own page.
    async fn terminal(&self) -> String {
        let made = self
            .http
            .post(format!("{}/api/terminals", self.gate))
            .header(header::COOKIE, &self.cookie)
            .header(header::ORIGIN, OWN)
            .send()
            .await
            .unwrap();
        assert_eq!(made.status(), StatusCode::OK, "a terminal from the workspace's own page");
        made.json::<serde_json::Value>().await.unwrap()["name"].as_str().unwrap().to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspaces_own_page_creates_files_and_a_neighbours_page_is_refused() {
    let Some(ws) = workspace().await else { return };
    let (status, body) = ws.create_file(&[("origin", OWN)]).await;
    assert_eq!(status, StatusCode::CREATED, "a file from the workspace's own page: {body}");
    assert_eq!(ws.files(), 1);
    // A browser that sends no Origin for a same-origin request says so in Sec-Fetch-Site.
    let (status, body) = ws.create_file(&[("sec-fetch-site", "same-origin")]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(ws.files(), 2);

    let refused = [
        ("a sibling workspace's page", vec![("origin", SIBLING)]),
        ("a sandboxed or opaque page (Origin: null)", vec![("origin", "null")]),
        ("plain http of the same host", vec![("origin", "http://berth-team-a-0f0e0d0c.gpu.example.org")]),
        ("a same-site page without Origin", vec![("sec-fetch-site", "same-site")]),
        ("a request that says nothing of where it came from", vec![]),
    ];
    for (case, headers) in refused {
        let (status, body) = ws.create_file(&headers).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{case}: {body}");
        assert!(body.starts_with("Refused:"), "{case} is told why: {body}");
    }
    assert_eq!(ws.files(), 2, "nothing reached Jupyter");
    // Reading stays open to the cookie (another origin cannot read the answer).
    let listed = ws.http.get(format!("{}/api/contents", ws.gate)).header(header::COOKIE, &ws.cookie);
    let listed = listed.header(header::ORIGIN, SIBLING).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    // Without the cookie nothing passes, from any origin.
    let bare = ws.http.post(format!("{}/api/contents", ws.gate)).header(header::ORIGIN, OWN).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_opens_from_the_workspaces_own_page_only() {
    let Some(ws) = workspace().await else { return };
    let name = ws.terminal().await;
    let path = format!("/terminals/websocket/{name}");
    let (status, first) = ws.websocket(&path, Some(OWN)).await;
    assert!(status.contains(" 101 "), "the workspace's own page opens its terminal: {status}");
    assert!(first.contains("setup"), "and the terminal talks: {first:?}");
    for (case, origin) in
        [("a sibling workspace's page", Some(SIBLING)), ("Origin: null", Some("null")), ("no Origin", None)]
    {
        let (status, body) = ws.websocket(&path, origin).await;
        assert!(status.contains(" 403 "), "{case}: {status}");
        assert!(body.contains("Refused"), "{case} is told why: {body}");
    }
    // Making a terminal is a state change as well.
    let made = ws.http.post(format!("{}/api/terminals", ws.gate)).header(header::COOKIE, &ws.cookie);
    let made = made.header(header::ORIGIN, SIBLING).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::FORBIDDEN);
}
