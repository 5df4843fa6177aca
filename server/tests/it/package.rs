//! The container image's contents, without a registry: `.ci/package.sh`
//! stages exactly what the Containerfile copies, and `berth serve` runs from
//! that directory read-only, as an unprivileged user who can write nowhere
//! but /tmp (as `readOnlyRootFilesystem` with a /tmp volume allows), with
//! the site root from a flag — and serves pages and the site's files.

use crate::common;

use common::fresh_db;
use common::processes::{free_port, repo_root};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn berth_serves_pages_from_the_packaged_files_on_a_read_only_root() {
    let stage = std::env::temp_dir().join(format!("berth-package-{}", uuid::Uuid::new_v4().simple()));
    let packaged = Command::new("bash")
        .args([".ci/package.sh", "dev"])
        .arg(&stage)
        .current_dir(repo_root())
        .output()
        .expect("bash runs");
    assert!(packaged.status.success(), "package: {}", String::from_utf8_lossy(&packaged.stderr));
    let mut files: Vec<String> = common::processes::files_under(&stage)
        .iter()
        .map(|p| p.strip_prefix(&stage).unwrap().display().to_string())
        .collect();
    files.sort();
    assert!(files.contains(&"usr/local/bin/berth".to_string()), "{files:?}");
    assert!(files.iter().any(|f| f == "usr/share/berth/site/pkg/berth.wasm"), "{files:?}");
    assert!(
        files.iter().all(|f| f.starts_with("usr/local/bin/") || f.starts_with("usr/share/berth/site/")),
        "{files:?}"
    );
    assert!(Command::new("chmod").args(["-R", "a-w"]).arg(&stage).status().unwrap().success());

    let db = fresh_db().await;
    let name: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&db).await.unwrap();
    let url = format!("{}/{name}", std::env::var("DATABASE_URL").unwrap().rsplit_once('/').unwrap().0);
    let port = free_port();
    let binary = stage.join("usr/local/bin/berth");
    let site = stage.join("usr/share/berth/site");
    // As root, run as `nobody` (setpriv execs, so the child is berth
    // itself): then only /tmp is writable, as in the pod.
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&binary);
        c
    } else {
        Command::new(&binary)
    };
    let mut server = command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--site-root"])
        .arg(&site)
        .current_dir("/")
        .env_clear()
        .env("DATABASE_URL", &url)
        .env("HOME", "/nonexistent")
        .env("TMPDIR", "/tmp")
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the packaged berth starts");

    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.get(format!("{base}/readyz")).send().await.map(|r| r.status().as_u16()).unwrap_or(0) != 200 {
        assert!(Instant::now() < deadline, "the packaged berth is not ready within 30 s");
        assert!(server.try_wait().unwrap().is_none(), "the packaged berth exited");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A people's page loads the people's bundle, a console page every page's
    // (to a visitor who is not signed in, its 401 page).
    for (path, status, bundle) in [("/", 200, "berth-people"), ("/admin/users", 401, "berth")] {
        let page = client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(page.status(), status, "{path}");
        let html = page.text().await.unwrap();
        assert!(html.contains("Berth"));
        // Every asset the page names is there: a binary built by plain cargo
        // once named `/pkg/berth_bg.wasm`, which no site has.
        let named: Vec<&str> = html.split(['"', '\'']).filter(|part| part.starts_with("/pkg/")).collect();
        assert_eq!(named.len(), 5, "stylesheet, script (preloaded) and WASM (preloaded): {named:?}");
        for asset in &named {
            let response = client.get(format!("{base}{asset}")).send().await.unwrap();
            assert_eq!(response.status(), 200, "{asset}, named by the page, from the packaged site root");
        }
        wire(&client, &base, &site, &named, bundle).await;
    }
    for asset in
        ["/pkg/berth.css", "/pkg/berth.js", "/pkg/berth.wasm", "/pkg/berth-people.js", "/pkg/berth-people.wasm"]
    {
        let response = client.get(format!("{base}{asset}")).send().await.unwrap();
        assert_eq!(response.status(), 200, "{asset} from the packaged site root");
    }
    let _ = server.kill();
    let _ = server.wait();
    Command::new("chmod").args(["-R", "u+w"]).arg(&stage).status().unwrap();
    std::fs::remove_dir_all(&stage).ok();
}

/// What a browser receives: the page names each file by its content, so it
/// may keep it for a year; with `Accept-Encoding: br` it gets the brotli file
/// the build left beside it; pages are compressed and revalidated.
async fn wire(client: &reqwest::Client, base: &str, site: &std::path::Path, named: &[&str], bundle: &str) {
    for (stem, extension) in [(bundle, "wasm"), (bundle, "js"), ("berth", "css")] {
        let plain = format!("{stem}.{extension}");
        let hashed = named
            .iter()
            .find(|n| n.ends_with(&format!(".{extension}")) && n.starts_with(&format!("/pkg/{stem}.")))
            .unwrap_or_else(|| panic!("the page names {stem}'s {extension} file: {named:?}"));
        let hash = hashed.trim_start_matches(&format!("/pkg/{stem}.")).trim_end_matches(&format!(".{extension}"));
        assert!(hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{hashed} is named by its content");
        let response =
            client.get(format!("{base}{hashed}")).header("accept-encoding", "gzip, br").send().await.unwrap();
        assert_eq!(response.status(), 200, "{hashed}");
        let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(header("content-encoding").as_deref(), Some("br"), "{hashed}");
        assert_eq!(header("cache-control").as_deref(), Some("public, max-age=31536000, immutable"), "{hashed}");
        let brotli = std::fs::read(site.join("pkg").join(format!("{plain}.br"))).unwrap();
        assert_eq!(response.bytes().await.unwrap().len(), brotli.len(), "{hashed} is the precompressed file");
        let gzip = client.get(format!("{base}{hashed}")).header("accept-encoding", "gzip").send().await.unwrap();
        assert_eq!(gzip.headers().get("content-encoding").unwrap(), "gzip", "{hashed}");
        let raw = client.get(format!("{base}{hashed}")).send().await.unwrap();
        assert!(raw.headers().get("content-encoding").is_none(), "{hashed} for a client that accepts no encoding");
        let raw_len = raw.bytes().await.unwrap().len();
        assert!(brotli.len() * 2 < raw_len, "{hashed}: brotli {} bytes of {raw_len}", brotli.len());
        // The plain name, used by pages without the shell, is revalidated.
        let answer = client.get(format!("{base}/pkg/{plain}")).send().await.unwrap();
        assert_eq!(answer.headers().get("cache-control").unwrap(), "no-cache", "/pkg/{plain}");
    }
    let icon = client.get(format!("{base}/favicon.svg")).send().await.unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers().get("cache-control").unwrap(), "public, max-age=86400", "the icon every page links");
    let page = client.get(format!("{base}/")).header("accept-encoding", "br").send().await.unwrap();
    assert_eq!(page.headers().get("content-encoding").unwrap(), "br", "pages are compressed");
    assert_eq!(page.headers().get("cache-control").unwrap(), "private, no-cache", "pages are revalidated");
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}
