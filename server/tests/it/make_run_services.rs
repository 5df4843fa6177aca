//! `make run` starts its services before the server (issue 59): the script's
//! helpers return only once a service listens, so the server's first
//! notification never meets a closed port. The mail catcher was started in
//! the background and the server sent before Python had imported aiosmtpd.

use crate::common::processes::{free_port, repo_root};
use std::process::Command;

/// Runs `script` in bash with `.ci/lib.sh` sourced, as `make run` does (so
/// under `set -e`); whatever it started in the background is stopped when it
/// exits, or its open pipes would keep this waiting.
fn with_lib(script: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("source .ci/lib.sh\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{script}"))
        .current_dir(repo_root())
        .output()
        .expect("bash runs")
}

#[test]
fn the_mail_catcher_takes_the_first_message_the_moment_it_is_started() {
    let port = free_port();
    let maildir = std::env::temp_dir().join(format!("berth-run-mail-{}", uuid::Uuid::new_v4().simple()));
    let dir = maildir.display();
    // Sent the instant the helper returns, as the server's first notification is.
    let out = with_lib(&format!(
        "start_mail_catcher {dir} 127.0.0.1:{port} {dir}.log
         python3 -c 'import smtplib; smtplib.SMTP(\"127.0.0.1\", {port}).sendmail(\"berth@berth.local\", [\"ada@berth.local\"], \"Subject: the first\\n\\nhello\\n\")' && sent=0 || sent=$?
         exit $sent"
    ));
    assert!(out.status.success(), "the first message was refused: {}", String::from_utf8_lossy(&out.stderr));
    let delivered: Vec<String> = std::fs::read_dir(maildir.join("new"))
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    assert_eq!(delivered.len(), 1, "one message in the Maildir");
    assert!(delivered[0].contains("Subject: the first"), "{delivered:?}");
    let _ = std::fs::remove_dir_all(&maildir);
}

#[test]
fn waiting_for_a_port_nothing_listens_on_fails_and_names_it() {
    let port = free_port();
    let out = with_lib(&format!("wait_listening 127.0.0.1:{port} 'the mail catcher' 1"));
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("the mail catcher did not listen on 127.0.0.1:{port} within 1s")), "{said}");
}
