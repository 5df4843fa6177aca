//! Notifications end to end: a real `berth serve` sends to a real SMTP
//! server (PyPI aiosmtpd, into a Maildir) and to a webhook receiver. Every
//! event reaches its people exactly once — across a worker restart too —
//! a failed webhook call is retried with the same delivery id, and a
//! delivery whose "sent" mark was lost is sent again under the same key.

use crate::common;

use app::rules::state_machine::Action;
use axum::http::HeaderMap;
use chrono::Utc;
use common::processes::{berth_output, free_port, repo_root, Server};
use common::{fresh_db, slot};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// aiosmtpd writing every message it accepts into a Maildir.
struct Smtp {
    child: Child,
    port: u16,
    maildir: std::path::PathBuf,
}

impl Smtp {
    fn start() -> Self {
        let port = free_port();
        let maildir = std::env::temp_dir().join(format!("berth-mail-{}", uuid::Uuid::new_v4().simple()));
        for sub in ["cur", "new", "tmp"] {
            std::fs::create_dir_all(maildir.join(sub)).unwrap();
        }
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 -m aiosmtpd runs (make test installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "aiosmtpd did not listen within 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port, maildir }
    }

    /// Every message received so far, as a mail client reads it.
    fn messages(&self) -> Vec<Value> {
        let out = Command::new("python3")
            .arg(repo_root().join("server/tests/mail/read_maildir.py"))
            .arg(&self.maildir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.maildir);
    }
}

/// A webhook receiver that answers 500 to the first call and 200 after.
#[derive(Clone, Default)]
struct Receiver {
    calls: Arc<Mutex<Vec<(HeaderMap, String, u16)>>>,
}

impl Receiver {
    async fn start(&self) -> String {
        let calls = self.calls.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let calls = calls.clone();
                async move {
                    let mut calls = calls.lock().unwrap();
                    let status = if calls.is_empty() { 500 } else { 200 };
                    calls.push((headers, body, status));
                    axum::http::StatusCode::from_u16(status).unwrap()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }

    /// (event, booking id, delivery id, signature valid) of each call answered 200.
    fn accepted(&self, secret: &str) -> Vec<(String, String, String, bool)> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(_, _, status)| *status == 200)
            .map(|(headers, body, _)| {
                let value: Value = serde_json::from_str(body).unwrap();
                let header =
                    |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
                let signed = header("x-berth-signature") == server::notify::webhook::signature(secret, body.as_bytes());
                assert_eq!(header("x-berth-event"), value["event"].as_str().unwrap());
                assert_eq!(header("x-berth-delivery"), value["delivery"].as_str().unwrap());
                (
                    value["event"].as_str().unwrap().to_string(),
                    value["booking"]["id"].as_str().unwrap().to_string(),
                    header("x-berth-delivery"),
                    signed,
                )
            })
            .collect()
    }
}

struct Portal {
    http: reqwest::Client,
    url: String,
}

impl Portal {
    async fn call(&self, token: &str, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn book(&self, token: &str, pool: &str, kind: &str, quantity: i32, from: i64, to: i64) -> String {
        let body = json!({
            "pool_id": pool, "kind": kind, "quantity": quantity, "start": slot(from), "end": slot(to), "mode": "interactive",
        });
        let (status, booking) = self.call(token, reqwest::Method::POST, "/api/v1/bookings", body).await;
        assert_eq!(status, 201, "{booking}");
        booking["id"].as_str().unwrap().to_string()
    }
}

/// Waits until `done` holds for the mail received, or fails with what came.
async fn wait_for_mail(smtp: &Smtp, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let messages = smtp.messages();
        if done(&messages) {
            return messages;
        }
        assert!(Instant::now() < deadline, "{what}: mail received so far:\n{messages:#?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Messages to `to` whose subject starts with `subject` and whose text holds `booking`'s card link.
fn mail_of<'a>(messages: &'a [Value], to: &str, subject: &str, booking: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["to"][0] == to && m["subject"].as_str().unwrap().starts_with(subject))
        .filter(|m| m["text"].as_str().unwrap().contains(booking))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_event_reaches_its_people_once_by_email_and_webhook() {
    // Windows near "now" must not straddle a quarter hour while the test runs.
    // (`slot` fixes the boundary at its first use, so this comes before it.)
    let left = 900 - Utc::now().timestamp().rem_euclid(900);
    if left < 75 {
        tokio::time::sleep(Duration::from_secs(left.unsigned_abs() + 1)).await;
    }
    let db = fresh_db().await;
    let name: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&db).await.unwrap();
    let url = format!("{}/{name}", std::env::var("DATABASE_URL").unwrap().rsplit_once('/').unwrap().0);
    berth_output(&url, &["seed-demo"]);
    berth_output(&url, &["user", "add", "--email", "ada@a.test", "--name", "Ada", "--tenant", "team-a"]);
    berth_output(
        &url,
        &["user", "add", "--email", "root@ops.test", "--name", "Root", "--role", "admin", "--tenant", "ops"],
    );
    let ada = berth_output(&url, &["token", "create", "--email", "ada@a.test"]);
    let root = berth_output(&url, &["token", "create", "--email", "root@ops.test"]);
    let smtp = Smtp::start();
    let receiver = Receiver::default();
    let hook_url = receiver.start().await;
    let smtp_url = format!("smtp://127.0.0.1:{}", smtp.port);
    let flags = ["--smtp-url", &smtp_url, "--smtp-from", "Berth <berth@lab.test>", "--webhook-allow-private"];
    let server = Server::start(&url, &flags);
    let portal = Portal { http: reqwest::Client::new(), url: server.url.clone() };
    let pool = |name: &'static str| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT id::text FROM pool WHERE name = $1")
                .bind(name)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    let (h100, l40s) = (pool("lab-h100").await, pool("lab-l40s").await);
    // lab-l40s books half hours: its windows start on slots that are.
    let half = i64::from(slot(0).timestamp() % 1800 != 0);
    let (status, hook) =
        portal.call(&ada, reqwest::Method::POST, "/api/v1/me/webhooks", json!({ "url": hook_url })).await;
    assert_eq!(status, 201, "{hook}");
    let secret = hook["secret"].as_str().unwrap().to_string();
    // Ada does not want "starts in 15 min" by webhook: her choice holds.
    let prefs = json!({ "preferences": [{ "event": "booking.starting", "email": true, "webhook": false }] });
    assert_eq!(portal.call(&ada, reqwest::Method::PUT, "/api/v1/me/notifications", prefs).await.0, 200);
    // Ada reads times in New York's zone; root chose none (the pool's, then).
    let zone = json!({ "time_zone": "America/New_York" });
    assert_eq!(portal.call(&ada, reqwest::Method::PUT, "/api/v1/me/time-zone", zone).await.0, 200);

    // Pending (to the admins), then approved and rejected with comments.
    let approved = portal.book(&ada, &l40s, "nvidia.com/gpu", 1, 8 + half, 10 + half).await;
    let rejected = portal.book(&ada, &l40s, "nvidia.com/gpu", 1, 12 + half, 14 + half).await;
    let path = |id: &str, what: &str| format!("/api/v1/bookings/{id}/{what}");
    let decide = |id: String, what: &'static str, comment: &'static str| {
        let (portal, root) = (&portal, &root);
        async move { portal.call(root, reqwest::Method::POST, &path(&id, what), json!({ "comment": comment })).await }
    };
    assert_eq!(decide(approved.clone(), "approve", "enjoy the L40S").await.0, 200);
    assert_eq!(decide(rejected.clone(), "reject", "the lab is closed that day").await.0, 200);
    // A full window, a waitlist entry for it, and room freed: a promotion.
    let full = portal.book(&ada, &h100, "nvidia.com/mig-1g.24gb", 4, 20, 22).await;
    let body = json!({
        "pool_id": h100, "kind": "nvidia.com/mig-1g.24gb", "quantity": 1, "start": slot(20), "end": slot(22),
        "mode": "interactive", "waitlist": true,
    });
    assert_eq!(portal.call(&ada, reqwest::Method::POST, "/api/v1/bookings", body).await.0, 202);
    assert_eq!(portal.call(&ada, reqwest::Method::POST, &path(&full, "cancel"), json!({})).await.0, 200);
    let promoted: String = sqlx::query_scalar(
        "SELECT booking_id::text FROM waitlist_entry WHERE booking_id IS NOT NULL ORDER BY created_at DESC LIMIT 1",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    // Starting soon; live now (ready, ending soon, then idle); failed.
    // Counted from the slot running now: slot(-1), unless this long test
    // outlived the next boundary (then "starting soon" is the one after).
    let running = (common::current_slot() - slot(0)).num_minutes() / 15;
    let starting = portal.book(&ada, &h100, "nvidia.com/gpu", 1, running + 1, running + 3).await;
    let live = portal.book(&ada, &h100, "nvidia.com/mig-1g.24gb", 1, running, running + 1).await;
    let failing = portal.book(&ada, &h100, "nvidia.com/mig-1g.24gb", 1, 30, 32).await;
    let failing_id: uuid::Uuid = failing.parse().unwrap();
    app::backend::sessions::transitions::system_transition(
        &db,
        failing_id,
        Action::Fail,
        "the image could not be pulled",
    )
    .await
    .unwrap();

    let ada_mail = "ada@a.test";
    let expected = |m: &[Value]| {
        !mail_of(m, ada_mail, "Workspace ready", &live).is_empty()
            && !mail_of(m, ada_mail, "Ends at", &live).is_empty()
            && !mail_of(m, ada_mail, "Failed", &failing).is_empty()
    };
    wait_for_mail(&smtp, "ready, ending and failed", expected).await;
    // Idle reclaim marks the live booking idle (as its pass does).
    sqlx::query("UPDATE booking SET idle_since = now() WHERE id = $1::uuid").bind(&live).execute(&db).await.unwrap();
    let messages = wait_for_mail(&smtp, "idle", |m| !mail_of(m, ada_mail, "Idle GPUs", &live).is_empty()).await;

    let once = |messages: &[Value], to: &str, subject: &str, booking: &str| -> Value {
        let found = mail_of(messages, to, subject, booking);
        assert_eq!(found.len(), 1, "{subject} to {to} for {booking}: {messages:#?}");
        found[0].clone()
    };
    let pending = once(&messages, "root@ops.test", "Approval wanted", &approved);
    assert!(
        pending["text"].as_str().unwrap().contains("Ada <ada@a.test> of team-a asks for lab-l40s GPU ×1"),
        "{pending}"
    );
    assert!(pending["text"].as_str().unwrap().contains(&format!("{}/admin/approvals", server.url)));
    assert_eq!(pending["from"], "Berth <berth@lab.test>");
    once(&messages, "root@ops.test", "Approval wanted", &rejected);
    let yes = once(&messages, ada_mail, "Approved", &approved);
    let l40s_zone: String =
        sqlx::query_scalar("SELECT time_zone FROM pool WHERE name = 'lab-l40s'").fetch_one(&db).await.unwrap();
    let in_zone = |zone: chrono_tz::Tz| slot(8 + half).with_timezone(&zone).format("%a %Y-%m-%d %H:%M").to_string();
    let named = slot(8 + half).with_timezone(&chrono_tz::America::New_York).format("%Z").to_string();
    let text = yes["text"].as_str().unwrap();
    assert!(text.contains(&in_zone(chrono_tz::America::New_York)) && text.contains(&named), "{yes}");
    let pool_zone: chrono_tz::Tz = l40s_zone.parse().unwrap();
    assert!(pending["text"].as_str().unwrap().contains(&in_zone(pool_zone)), "{pending}");
    assert!(yes["text"].as_str().unwrap().contains("Comment: enjoy the L40S"), "{yes}");
    assert!(yes["html"].as_bool().unwrap(), "an HTML alternative with links: {yes}");
    let no = once(&messages, ada_mail, "Rejected", &rejected);
    assert!(no["text"].as_str().unwrap().contains("Comment: the lab is closed that day"), "{no}");
    once(&messages, ada_mail, "Booked from the waitlist", &promoted);
    once(&messages, ada_mail, "Starts at", &starting);
    let ready = once(&messages, ada_mail, "Workspace ready", &live);
    assert!(ready["text"].as_str().unwrap().contains(&format!("{}/bookings/{live}/open", server.url)), "{ready}");
    // This berth serves on the simulated cluster, and its mail says so.
    assert!(ready["subject"].as_str().unwrap().ends_with("(simulated cluster)"), "{ready}");
    assert!(ready["text"].as_str().unwrap().contains("This portal runs on a simulated cluster"), "{ready}");
    // What outlives the window, in the ready mail and (always) the ending one.
    let kept = "Your home (/home/jovyan) and model cache (/models) are kept until";
    let rest = "; everything else in this session ends at";
    for mail in [&ready, &once(&messages, ada_mail, "Ends at", &live)] {
        let text = mail["text"].as_str().unwrap();
        assert!(text.contains(kept) && text.contains(rest), "{mail}");
    }
    let ending = once(&messages, ada_mail, "Ends at", &live);
    assert!(
        ending["text"].as_str().unwrap().contains("The hour after it is free: extend it at"),
        "the hour after is free: {ending}"
    );
    let failed = once(&messages, ada_mail, "Failed", &failing);
    assert!(failed["text"].as_str().unwrap().contains("Reason: the image could not be pulled"), "{failed}");
    once(&messages, ada_mail, "Idle GPUs", &live);
    for m in &messages {
        let delivery = m["delivery"].as_str().unwrap();
        assert_eq!(m["message_id"], format!("<{delivery}@127.0.0.1>"), "the delivery id is the Message-ID");
    }

    // Ada's webhook: each of her events once (the first call failed and was
    // retried under the same delivery id), every body signed.
    let deadline = Instant::now() + Duration::from_secs(60);
    let wanted = [
        ("booking.approved", &approved),
        ("booking.rejected", &rejected),
        ("waitlist.promoted", &promoted),
        ("workspace.ready", &live),
        ("booking.ending", &live),
        ("booking.failed", &failing),
        ("booking.idle", &live),
    ];
    let hooked = loop {
        let hooked = receiver.accepted(&secret);
        if wanted.iter().all(|(e, b)| hooked.iter().any(|(he, hb, ..)| he == e && hb == *b)) {
            break hooked;
        }
        assert!(Instant::now() < deadline, "webhook calls so far: {hooked:#?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    for (event, booking) in wanted {
        let n = hooked.iter().filter(|(e, b, ..)| e == event && b == booking).count();
        assert_eq!(n, 1, "{event} for {booking}: {hooked:#?}");
    }
    assert!(hooked.iter().all(|(.., signed)| *signed), "every body signed with the hook's secret");
    assert!(!hooked.iter().any(|(e, ..)| e == "booking.starting"), "switched off for webhooks");
    let first = receiver.calls.lock().unwrap()[0].clone();
    assert_eq!(first.2, 500);
    let retried = first.0.get("x-berth-delivery").unwrap().to_str().unwrap().to_string();
    assert!(hooked.iter().any(|(_, _, d, _)| *d == retried), "the failed call was retried under the same id");

    // A worker restart sends nothing again; the new worker sends new events.
    let before = smtp.messages().len();
    server.signal("TERM");
    drop(server);
    let server = Server::start(&url, &flags);
    let portal = Portal { http: reqwest::Client::new(), url: server.url.clone() };
    let after_restart = portal.book(&ada, &l40s, "nvidia.com/gpu", 1, 40 + half, 42 + half).await;
    let admins: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user WHERE role = 'admin' AND disabled_at IS NULL")
        .fetch_one(&db)
        .await
        .unwrap();
    // Every admin's mail, not just root's: each is its own delivery, and one
    // arriving after root's was once counted as "more" below.
    let messages = wait_for_mail(&smtp, "after restart", |m| {
        !mail_of(m, "root@ops.test", "Approval wanted", &after_restart).is_empty()
            && m.len() >= before + admins as usize
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let messages_later = smtp.messages();
    assert_eq!(messages_later.len(), messages.len(), "nothing more arrives");
    assert!(messages.len() > before);
    assert_eq!(messages.len() - before, admins as usize, "only the new pending booking's mail, once per admin");

    // A send whose "delivered" mark was lost (a crash between the two) is
    // sent again, recognisably: the same X-Berth-Delivery and Message-ID.
    let lost: String = sqlx::query_scalar(
        "UPDATE notification_delivery SET delivered_at = NULL, next_attempt_at = now()
         WHERE id = (SELECT d.id FROM notification_delivery d JOIN notification n ON n.id = d.notification_id
                     WHERE n.event = 'booking.approved' AND d.channel = 'email')
         RETURNING id::text",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    let messages =
        wait_for_mail(&smtp, "resend", |m| m.iter().filter(|x| x["delivery"] == lost.as_str()).count() == 2).await;
    let copies: Vec<&Value> = messages.iter().filter(|x| x["delivery"] == lost.as_str()).collect();
    assert_eq!(copies[0]["message_id"], copies[1]["message_id"]);
}

#[tokio::test]
async fn a_stuck_namespace_is_told_to_admins_once_never_to_the_bookings_people() {
    let f = common::Fixture::new().await;
    let (status, body) = f.book(&f.ada, common::MIG, 1, slot(-1), slot(4)).await;
    assert_eq!(status, 201, "{body}");
    let id: uuid::Uuid = body["id"].as_str().unwrap().parse().unwrap();
    for _ in 0..2 {
        server::notify::outbox::stuck(&f.db, id, "berth-team-a-0f0e0d0c").await.unwrap();
    }
    server::notify::outbox::fan_out(&f.db, true).await.unwrap();
    let told: Vec<String> = sqlx::query_scalar(
        "SELECT u.email FROM notification_delivery d JOIN notification n ON n.id = d.notification_id
         JOIN app_user u ON u.id = d.user_id WHERE n.event = 'session.stuck' AND d.channel = 'email' ORDER BY 1",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    let admins: Vec<String> =
        sqlx::query_scalar("SELECT email FROM app_user WHERE role = 'admin' AND disabled_at IS NULL ORDER BY 1")
            .fetch_all(&f.db)
            .await
            .unwrap();
    assert!(!admins.is_empty());
    assert_eq!(told, admins, "the admins, once each; not ada");
    let due = server::notify::outbox::claim(&f.db, 100).await.unwrap();
    let due = due.iter().find(|d| d.event == "session.stuck").expect("a delivery to send");
    let message = server::notify::message::render("https://berth.example.org", due, false);
    assert_eq!(message.subject, "Stuck terminating: berth-team-a-0f0e0d0c");
    assert!(message.text.contains("kubectl get pods,pvc -n berth-team-a-0f0e0d0c"), "{}", message.text);
    assert!(!message.text.contains("simulated"), "{}", message.text);
    // On the simulated cluster, mails about what it provisioned say so.
    let simulated = server::notify::message::render("https://berth.example.org", due, true);
    assert_eq!(simulated.subject, "Stuck terminating: berth-team-a-0f0e0d0c (simulated cluster)");
    assert!(
        simulated.text.contains("This portal runs on a simulated cluster: no workspace runs"),
        "{}",
        simulated.text
    );
}
