//! The `berth` user commands, run as the real binary against a running
//! `berth serve`: login writes a private config, each command prints the
//! table a person reads (compared whole), `--json` the API's JSON, and a
//! refusal its reason with the next free window and exit code 1.

use crate::common;

use chrono::{Duration, Utc};
use common::fresh_db;
use common::processes::{berth, berth_output, Server};
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Output, Stdio};

struct Shell {
    home: std::path::PathBuf,
    env: Vec<(String, String)>,
}

impl Shell {
    fn new() -> Self {
        let home = std::env::temp_dir().join(format!("berth-cli-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&home).unwrap();
        Self { home, env: Vec::new() }
    }

    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = berth();
        command.env("HOME", &self.home).env_remove("XDG_CONFIG_HOME").env_remove("BERTH_URL").env_remove("BERTH_TOKEN");
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let mut child =
            command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// Succeeds; stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, "");
        assert!(out.status.success(), "berth {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Fails with exit code 1; stderr.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args, "");
        assert_eq!(out.status.code(), Some(1), "berth {args:?}: {}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8(out.stderr).unwrap()
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_scientist_books_from_the_shell() {
    let db = fresh_db().await;
    let name: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&db).await.unwrap();
    let url = format!("{}/{name}", std::env::var("DATABASE_URL").unwrap().rsplit_once('/').unwrap().0);
    berth_output(&url, &["seed-demo"]);
    berth_output(&url, &["user", "add", "--email", "ada@a.test", "--name", "Ada", "--tenant", "team-a"]);
    let token = berth_output(&url, &["token", "create", "--email", "ada@a.test"]);
    let server = Server::start(&url, &[]);
    let shell = Shell::new();

    // Login: the token from stdin, checked, saved for the owner only.
    let out = shell.run(&["login", "--url", &server.url], &format!("{token}\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let config = shell.home.join(".config/berth/config.toml");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("signed in as Ada <ada@a.test>; saved in {}\n", config.display())
    );
    assert_eq!(std::fs::metadata(&config).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&config).unwrap().contains(&token));
    let refused = shell.run(&["login", "--url", &server.url], "berth_not-a-token\n");
    assert_eq!(refused.status.code(), Some(1));
    assert!(std::fs::read_to_string(&config).unwrap().contains(&token), "a refused login keeps the saved one");

    assert_eq!(
        shell.ok(&["pools"]),
        "POOL      KINDS                   APPROVAL\nlab-h100  GPU ×1, MIG 1g.24gb ×4  no\nlab-l40s  GPU ×2                  yes\n"
    );

    // Which kind holds a model: the estimate, its arithmetic, each kind.
    let fit = shell.ok(&["fit", "--model", "llama-3.1-8b", "--context", "8192", "--sequences", "4"]);
    assert!(fit.starts_with("Needs about 24 GB: 1 × nvidia.com/gpu on lab-l40s holds it.\n"), "{fit}");
    assert!(fit.contains("time-sliced share is not isolated memory"), "{fit}");
    assert!(
        fit.contains("  KV cache = 2 × 32 layers × 8 KV heads × 128 head dim × 2 bytes × 8192 tokens × 4 sequences"),
        "{fit}"
    );
    assert!(fit.contains("MIG 1g.24gb  -"), "the 24 GB slice does not hold it: {fit}");
    let refused = shell.fails(&["fit", "--model", "llama-3.1-8b", "--precision", "fp4"]);
    assert!(refused.contains("precision"), "{refused}");

    let day = (Utc::now() + Duration::days(2)).format("%Y-%m-%d").to_string();
    let weekday = (Utc::now() + Duration::days(2)).format("%a").to_string();
    let free =
        shell.ok(&["free", "lab-h100", "--kind", "mig-1g.24gb", "--from", &format!("{day} 00:00"), "--tz", "UTC"]);
    assert!(free.starts_with("lab-h100 MIG 1g.24gb\nFROM"), "{free}");
    assert!(free.contains(&format!("{weekday} {day} 00:00")) && free.trim_end().ends_with('4'), "{free}");

    let booked = shell.ok(&[
        "book",
        "lab-h100",
        "--kind",
        "mig-1g.24gb",
        "--units",
        "3",
        "--from",
        &format!("{day} 09:00"),
        "--for",
        "3h",
        "--tz",
        "UTC",
    ]);
    let id = booked.split_whitespace().nth(1).unwrap().trim_end_matches(':').to_string();
    assert_eq!(
        booked,
        format!(
            "booked {id}: lab-h100 MIG 1g.24gb ×3, {weekday} {day} 09:00 UTC – {weekday} {day} 12:00 UTC (approved)\n"
        )
    );

    // Two more do not fit: the reason, the next free window, exit 1.
    let ten = format!("{day} 10:00");
    let two_more =
        ["book", "lab-h100", "--kind", "mig-1g.24gb", "--units", "2", "--from", &ten, "--for", "1h", "--tz", "UTC"];
    let err = shell.fails(&two_more);
    assert!(err.starts_with("refused: not enough free capacity"), "{err}");
    assert!(err.contains(&format!("next free window: {weekday} {day} 12:00 UTC – {weekday} {day} 13:00 UTC")), "{err}");

    let waiting = shell.ok(&[&two_more[..], &["--waitlist"]].concat());
    assert!(waiting.starts_with("on the waitlist "), "{waiting}");
    assert!(
        waiting.ends_with(&format!(": place 1 for {weekday} {day} 10:00 UTC – {weekday} {day} 11:00 UTC\n")),
        "{waiting}"
    );

    let listed = shell.ok(&["ls", "--tz", "UTC"]);
    let expected_row =
        format!("{id}  lab-h100  MIG 1g.24gb  3      {weekday} {day} 09:00 UTC  {weekday} {day} 12:00 UTC  approved");
    assert!(listed.lines().any(|l| l == expected_row), "{listed}\n{expected_row}");
    let json: Value = serde_json::from_str(&shell.ok(&["ls", "--json"])).unwrap();
    assert_eq!(json[0]["id"], id.as_str());

    let shown = shell.ok(&["show", &id, "--tz", "UTC"]);
    assert!(
        shown.contains(&format!("end    {weekday} {day} 12:00 UTC\n")) && shown.contains("mode   interactive"),
        "{shown}"
    );
    // With a zone chosen in Settings (here by its REST call), times are read
    // and written in it, named, without --tz.
    let chosen = reqwest::Client::new()
        .put(format!("{}/api/v1/me/time-zone", server.url))
        .bearer_auth(&token)
        .json(&serde_json::json!({ "time_zone": "America/New_York" }))
        .send()
        .await
        .unwrap();
    assert_eq!(chosen.status(), 200);
    let end_in_new_york = chrono::NaiveDateTime::parse_from_str(&format!("{day} 12:00"), "%Y-%m-%d %H:%M")
        .unwrap()
        .and_utc()
        .with_timezone(&chrono_tz::America::New_York)
        .format("%a %Y-%m-%d %H:%M %Z")
        .to_string();
    let shown = shell.ok(&["show", &id]);
    assert!(shown.contains(&format!("end    {end_in_new_york}\n")), "{shown}\n{end_in_new_york}");
    let extended = shell.ok(&["extend", &id, "--to", &format!("{day} 13:30"), "--tz", "UTC"]);
    assert!(extended.contains(&format!("end    {weekday} {day} 13:30 UTC\n")), "{extended}");

    let err = shell.fails(&["open", &id]);
    assert_eq!(err, "berth: the workspace is not running: the booking is approved\n");
    let feed = shell.ok(&["ics"]);
    assert!(
        feed.starts_with(&format!("{}/api/v1/calendar-feeds/bcal_", server.url)) && feed.ends_with(".ics\n"),
        "{feed}"
    );

    let canceled = shell.ok(&["cancel", &id]);
    assert!(canceled.contains("state  canceled"), "{canceled}");
    // The freed units served the waitlist: the two units are booked now.
    let listed = shell.ok(&["ls", "--tz", "UTC"]);
    let promoted = listed.lines().nth(1).unwrap_or_default().to_string();
    assert!(
        promoted.ends_with(&format!("2      {weekday} {day} 10:00 UTC  {weekday} {day} 11:00 UTC  approved")),
        "{listed}"
    );
    let promoted = promoted.split_whitespace().next().unwrap().to_string();
    shell.ok(&["cancel", &promoted]);
    assert_eq!(shell.ok(&["ls"]), "no bookings ahead (--all shows past ones)\n");

    // A window from now: the worker prepares it, `open` prints the link
    // with its access token, `end` returns the GPU.
    let live = shell.ok(&["book", "lab-h100", "--kind", "mig-1g.24gb", "--from", "now", "--for", "1h", "--json"]);
    let live: Value = serde_json::from_str(&live).unwrap();
    let live = live["id"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let link = loop {
        let out = shell.run(&["open", &live], "");
        if out.status.success() {
            break String::from_utf8(out.stdout).unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "{}", String::from_utf8_lossy(&out.stderr));
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert!(link.starts_with("https://") && link.contains("/.berth/open?code=") && link.ends_with('\n'), "{link}");
    let ended = shell.ok(&["end", &live]);
    assert!(ended.contains("state  completed"), "{ended}");

    // Bad input names what is wrong; the environment overrides the file.
    let err = shell.fails(&["book", "lab-h100", "--kind", "gpu", "--from", "tomorrow", "--for", "1h"]);
    assert!(err.contains("--from: `tomorrow` is not a time"), "{err}");
    let err = shell.fails(&["free", "nowhere"]);
    assert!(err.contains("no pool `nowhere`"), "{err}");
    let mut elsewhere = Shell::new();
    elsewhere.env = vec![("BERTH_URL".into(), server.url.clone()), ("BERTH_TOKEN".into(), token.clone())];
    assert!(elsewhere.ok(&["pools"]).contains("lab-h100"));
    elsewhere.env[1].1 = "berth_wrong".into();
    assert!(elsewhere.fails(&["pools"]).contains("did not accept the token"));
    let nowhere = Shell::new();
    assert!(nowhere.fails(&["ls"]).contains("run `berth login --url URL`"));
}
