//! The site's files under `/pkg`, as a browser should receive them: the
//! hydration script, WASM and stylesheet under content-hashed names that it
//! may keep for a year, every file precompressed (brotli, gzip) when the
//! site build left `.br`/`.gz` beside it, and the plain names revalidated.

use app::model::{AssetUrls, Bundle};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;
use tower_http::services::ServeDir;

/// What pages link; each is hashed once per process, on first use.
const LINKED: [(&str, &str); 5] =
    [("berth", "js"), ("berth", "wasm"), ("berth-people", "js"), ("berth-people", "wasm"), ("berth", "css")];

const IMMUTABLE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
/// Plain names may change under the same URL with the next deployment.
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

#[derive(Clone)]
pub struct SiteFiles(Arc<Inner>);

struct Inner {
    root: PathBuf,
    pkg: PathBuf,
    /// `(hashed name, file name)` for each linked file that exists.
    names: OnceLock<Vec<(String, String)>>,
}

impl SiteFiles {
    pub fn new(site_root: &str) -> Self {
        let root = PathBuf::from(site_root);
        Self(Arc::new(Inner { pkg: root.join("pkg"), root, names: OnceLock::new() }))
    }

    /// The URLs pages link: hashed where the file exists (a site root
    /// without a build still renders pages, with the plain names). A site
    /// without the people's bundle gives those pages every page's.
    pub fn urls(&self) -> AssetUrls {
        let plain = AssetUrls::default();
        let hashed =
            |file: &str| self.names().iter().find(|(_, name)| name == file).map(|(hashed, _)| format!("/pkg/{hashed}"));
        let all = Bundle {
            js: hashed("berth.js").unwrap_or(plain.all.js),
            wasm: hashed("berth.wasm").unwrap_or(plain.all.wasm),
        };
        let people = match (hashed("berth-people.js"), hashed("berth-people.wasm")) {
            (Some(js), Some(wasm)) => Bundle { js, wasm },
            _ => all.clone(),
        };
        AssetUrls { all, people, css: hashed("berth.css").unwrap_or(plain.css) }
    }

    fn names(&self) -> &[(String, String)] {
        self.0.names.get_or_init(|| {
            LINKED
                .iter()
                .filter_map(|(stem, extension)| {
                    let name = format!("{stem}.{extension}");
                    let bytes = std::fs::read(self.0.pkg.join(&name)).ok()?;
                    Some((format!("{stem}.{:016x}.{extension}", content_hash(&bytes)), name))
                })
                .collect()
        })
    }
}

/// A name for these bytes: it changes whenever they do. (std's hasher is
/// fast even in a debug build, and a deployment's replicas run one binary.)
fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

/// `GET /pkg/*`: a hashed name serves its file for a year; any other name
/// is served as it is and revalidated.
pub async fn serve(State(files): State<SiteFiles>, request: Request) -> Response {
    let requested = request.uri().path().trim_start_matches('/').to_string();
    let hashed = files.names().iter().find(|(hashed, _)| *hashed == requested).map(|(_, name)| name.clone());
    let (mut parts, body) = request.into_parts();
    if let Some(name) = &hashed {
        parts.uri = Uri::builder().path_and_query(format!("/{name}")).build().unwrap_or_default();
    }
    let dir = ServeDir::new(&files.0.pkg).precompressed_br().precompressed_gzip();
    let Ok(response) = dir.oneshot(Request::from_parts(parts, body)).await;
    let mut response = response.map(axum::body::Body::new);
    if response.status() == StatusCode::OK || response.status() == StatusCode::NOT_MODIFIED {
        let cache = if hashed.is_some() { IMMUTABLE } else { REVALIDATE };
        response.headers_mut().insert(header::CACHE_CONTROL, cache);
    }
    response.into_response()
}

/// `GET /favicon.svg`: every page links it, so a browser keeps it a day
/// (a warm page load then fetches no file at all).
pub async fn favicon(State(files): State<SiteFiles>, request: Request) -> Response {
    let file = tower_http::services::ServeFile::new(files.0.root.join("favicon.svg"));
    let Ok(response) = file.oneshot(request).await;
    let mut response = response.map(axum::body::Body::new);
    if response.status() == StatusCode::OK {
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    }
    response.into_response()
}

/// Pages are per viewer and live: a browser may keep one only to show it
/// again after asking (`no-cache`), and no shared cache may keep it.
pub async fn pages_revalidate(request: Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(request).await;
    let html = response.headers().get(header::CONTENT_TYPE).is_some_and(|t| t.as_bytes().starts_with(b"text/html"));
    if html && !response.headers().contains_key(header::CACHE_CONTROL) {
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    }
    response
}
