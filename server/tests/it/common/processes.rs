//! Real processes for the production tests: a PostgreSQL cluster of a
//! test's own (so it can be stopped) and `berth` binaries, each on free ports.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

fn lib_sh(script: &str) {
    let status = Command::new("bash")
        .arg("-c")
        .arg(format!("source .ci/lib.sh && {script}"))
        .current_dir(repo_root())
        .status()
        .expect("bash runs");
    assert!(status.success(), "`{script}` failed");
}

/// A throwaway PostgreSQL cluster of one test, stopped (and removed) on drop.
pub struct Postgres {
    pub dir: PathBuf,
    pub port: u16,
}

impl Postgres {
    pub fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("berth-pg-{}", uuid::Uuid::new_v4().simple()));
        let pg = Self { dir, port: free_port() };
        pg.up();
        pg
    }

    pub fn up(&self) {
        lib_sh(&format!("pg_up {} {} -c fsync=off", self.dir.display(), self.port));
    }

    /// Stops the server as an outage would (`pg_ctl stop -m fast`: sessions cut).
    pub fn down(&self) {
        lib_sh(&format!("pg_down {}", self.dir.display()));
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn berth() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_berth"));
    // Errors only, and not the 503s the outage test causes on purpose.
    command.env_remove("BERTH_OIDC_ISSUER").env("RUST_LOG", "error,tower_http=off");
    command
}

/// Runs a `berth` command to its end and returns what it printed.
pub fn berth_output(database_url: &str, args: &[&str]) -> String {
    let output = berth().env("DATABASE_URL", database_url).args(args).output().expect("berth runs");
    assert!(output.status.success(), "berth {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf-8").trim().to_string()
}

/// A `berth serve` process on free ports, killed on drop.
pub struct Server {
    pub child: Child,
    pub url: String,
    pub metrics_url: String,
}

impl Server {
    pub fn start(database_url: &str, extra: &[&str]) -> Self {
        let (port, metrics_port) = (free_port(), free_port());
        let child = berth()
            .env("DATABASE_URL", database_url)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}"), "--dev-login"])
            .args(["--site-root", &repo_root().join("target/site").display().to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .expect("berth serve starts");
        let server = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            metrics_url: format!("http://127.0.0.1:{metrics_port}/metrics"),
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let ready = std::net::TcpStream::connect(self.url.trim_start_matches("http://")).is_ok();
            if ready {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("berth serve did not listen on {} within 30 s", self.url);
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid")
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill").args([&format!("-{signal}"), &self.pid().to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal}");
    }

    /// This process's `berth_worker_leader` gauge of the default cluster (None: no answer).
    pub async fn leads(&self, client: &reqwest::Client) -> Option<bool> {
        let text = client.get(&self.metrics_url).send().await.ok()?.text().await.ok()?;
        Some(text.lines().any(|line| line == "berth_worker_leader{cluster=\"default\"} 1"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file below `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// A real Prometheus (Debian package) on a free port with the given scrape
/// configs and TSDB directory (which may already hold backfilled blocks);
/// killed on drop.
pub struct PrometheusProcess {
    pub url: String,
    child: Child,
}

impl PrometheusProcess {
    pub fn start(dir: &Path, scrape_configs: &str) -> Self {
        let port = free_port();
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, format!("global:\n  scrape_interval: 1s\nscrape_configs:\n{scrape_configs}")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus is installed (`make test` installs it)");
        Self { url: format!("http://127.0.0.1:{port}/"), child }
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PrometheusProcess {
    fn drop(&mut self) {
        self.stop();
    }
}
