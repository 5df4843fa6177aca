//! The container image's contents, without a registry: `.ci/package.sh`
//! stages exactly what the Containerfile copies, and `berth serve` runs from
//! that directory read-only, as an unprivileged user who can write nowhere
//! but /tmp (as `readOnlyRootFilesystem` with a /tmp volume allows), with
//! the site root from a flag — and serves pages and the site's files.

mod common;

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
    let page = client.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("Berth"));
    // Every asset the page names is there: a binary built by plain cargo
    // once named `/pkg/berth_bg.wasm`, which no site has.
    let named: Vec<&str> = html.split(['"', '\'']).filter(|part| part.starts_with("/pkg/")).collect();
    assert!(named.contains(&"/pkg/berth.wasm"), "the page loads /pkg/berth.wasm: {named:?}");
    for asset in named {
        let response = client.get(format!("{base}{asset}")).send().await.unwrap();
        assert_eq!(response.status(), 200, "{asset}, named by the page, from the packaged site root");
    }
    for asset in ["/pkg/berth.css", "/pkg/berth.js", "/pkg/berth.wasm"] {
        let response = client.get(format!("{base}{asset}")).send().await.unwrap();
        assert_eq!(response.status(), 200, "{asset} from the packaged site root");
    }
    let _ = server.kill();
    let _ = server.wait();
    Command::new("chmod").args(["-R", "u+w"]).arg(&stage).status().unwrap();
    std::fs::remove_dir_all(&stage).ok();
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}
