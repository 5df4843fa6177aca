//! The one writer of booking state, `bookings::change`: no other statement
//! in the code or the migrations writes `booking.state`, and what a change
//! does besides — the audit event, the open extension request withdrawn,
//! the waitlist served, the notification queued, the window cut — is tested
//! here once, for every kind of caller: a user, an admin, the worker, expiry,
//! idle reclaim, a blackout, a disabled user, a canceled series.

use crate::common;

use app::backend::bookings::change::{change, close, settle, Change, End, EXTENDED_NO_LONGER_RUNS};
use app::rules::state_machine::Action;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use common::{slot, Fixture, GPU};
use serde_json::json;
use uuid::Uuid;

/// Files whose text holds SQL, under the workspace root.
fn sources(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "sql") {
            found.push(path);
        }
    }
}

#[test]
fn no_statement_but_change_writes_booking_state() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for dir in ["app/src", "server/src", "migrations"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "the scan found the sources: {}", files.len());
    let mut writers = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap().to_lowercase();
        // Each UPDATE of booking, up to its WHERE (or its end).
        for (at, _) in text.match_indices("update booking") {
            let statement = &text[at..];
            let head = statement.split(" where ").next().unwrap_or(statement);
            let head = head.split(';').next().unwrap_or(head);
            let table_is_booking = statement["update booking".len()..].starts_with([' ', '\n']);
            if table_is_booking && head.split([' ', ',', '\n']).any(|word| word == "state") {
                writers.push(format!("{}: {}", file.display(), head.lines().next().unwrap_or_default()));
            }
        }
    }
    let expected = root.join("app/src/backend/bookings/change.rs").display().to_string();
    assert!(writers.iter().all(|w| w.starts_with(&expected)), "other writers of booking.state: {writers:#?}");
    assert_eq!(writers.len(), 1, "change.rs writes it once: {writers:#?}");
}

/// One booking of ada's, 1 whole GPU (the demo pool's only one), in `state`
/// over slots `[from, to)`, with an open extension request for the slot
/// after it; bob waits for slots [1, 2) if the booking holds them.
struct Scene {
    f: Fixture,
    booking: Uuid,
    request: Uuid,
    waiting: Option<Uuid>,
    ada: Uuid,
    admin: Uuid,
}

async fn scene(state: &str, from: i64, to: i64) -> Scene {
    let f = Fixture::new().await;
    let user = |email: &'static str| {
        let db = f.db.clone();
        async move {
            sqlx::query_scalar::<_, Uuid>("SELECT id FROM app_user WHERE email = $1").bind(email).fetch_one(&db).await
        }
    };
    let (ada, admin) = (user("ada@a.test").await.unwrap(), user("root@ops.test").await.unwrap());
    let insert = |state: String, start: DateTime<Utc>, end: DateTime<Utc>, extends: Option<Uuid>| {
        let db = f.db.clone();
        async move {
            sqlx::query_scalar::<_, Uuid>(
                "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, extends_id)
                 SELECT $1, $2, m.user_id, m.tenant_id, 1, 'interactive', $3, $4, $5, $6 FROM membership m WHERE m.user_id = $7 LIMIT 1
                 RETURNING id",
            )
            .bind(pool(&db).await)
            .bind(GPU)
            .bind(start)
            .bind(end)
            .bind(state)
            .bind(extends)
            .bind(ada)
            .fetch_one(&db)
            .await
            .unwrap()
        }
    };
    let booking = insert(state.to_string(), slot(from), slot(to), None).await;
    let request = insert("pending".to_string(), slot(to), slot(to + 1), Some(booking)).await;
    let holds = ["pending", "approved", "active"].contains(&state) && from <= 1 && to >= 2;
    let waiting = match holds {
        false => None,
        true => {
            let body = json!({ "pool_id": f.lab, "kind": GPU, "quantity": 1, "start": slot(1), "end": slot(2),
                "mode": "interactive", "waitlist": true });
            let (status, entry) = f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(body)).await;
            assert_eq!(status, StatusCode::ACCEPTED, "bob waits: {entry}");
            Some(entry["id"].as_str().unwrap().parse().unwrap())
        }
    };
    Scene { f, booking, request, waiting, ada, admin }
}

async fn pool(db: &sqlx::PgPool) -> Uuid {
    sqlx::query_scalar("SELECT id FROM pool WHERE name = $1").bind(server::seed::DEMO_POOL).fetch_one(db).await.unwrap()
}

/// What a user would notice of a change.
#[derive(Debug, PartialEq)]
struct Seen {
    state: String,
    /// The last audit event: actor, from, to, reason.
    event: (Option<Uuid>, Option<String>, String, String),
    /// The extension request's state, and its last event's reason.
    request: (String, String),
    /// Bob's waitlist entry, if he waited.
    waiting: Option<String>,
    /// Notifications queued for the booking.
    notices: Vec<String>,
    /// Ends now (the window cut), and why it was let go.
    cut: bool,
    released_as: Option<String>,
}

async fn seen(s: &Scene, ends_before: DateTime<Utc>) -> Seen {
    let db = &s.f.db;
    let (state, ends_at, released_as): (String, DateTime<Utc>, Option<String>) =
        sqlx::query_as("SELECT state, ends_at, released_as FROM booking WHERE id = $1")
            .bind(s.booking)
            .fetch_one(db)
            .await
            .unwrap();
    let last = |id: Uuid| async move {
        sqlx::query_as::<_, (Option<Uuid>, Option<String>, String, String)>(
            "SELECT actor_id, from_state, to_state, reason FROM booking_event WHERE booking_id = $1 ORDER BY id DESC LIMIT 1",
        )
        .bind(id)
        .fetch_one(db)
        .await
        .unwrap()
    };
    let request_state: String =
        sqlx::query_scalar("SELECT state FROM booking WHERE id = $1").bind(s.request).fetch_one(db).await.unwrap();
    let waiting = match s.waiting {
        Some(id) => Some(
            sqlx::query_scalar("SELECT state FROM waitlist_entry WHERE id = $1").bind(id).fetch_one(db).await.unwrap(),
        ),
        None => None,
    };
    let notices = sqlx::query_scalar("SELECT event FROM notification WHERE booking_id = $1 ORDER BY id")
        .bind(s.booking)
        .fetch_all(db)
        .await
        .unwrap();
    Seen {
        state,
        event: last(s.booking).await,
        request: (request_state, last(s.request).await.3),
        waiting,
        notices,
        cut: ends_at < ends_before,
        released_as,
    }
}

/// How a caller asks for its change.
enum Ask {
    Change(Action, bool, End, Option<&'static str>),
    Close,
}

#[tokio::test]
async fn every_caller_gets_the_same_decision_audit_withdrawal_waitlist_and_notification() {
    let withdrawn = || ("canceled".to_string(), EXTENDED_NO_LONGER_RUNS.to_string());
    let open = || ("pending".to_string(), "seeded".to_string());
    // (caller, state, window in slots, ask (action, by a person?, end, released as), expected)
    type Expected = (&'static str, bool, Option<&'static str>, Option<&'static str>, bool, Option<&'static str>);
    type Case = (&'static str, &'static str, (i64, i64), Ask, Expected);
    let cases: Vec<Case> = vec![
        // expected: (state, request withdrawn, waitlist entry, notice, cut, released as)
        (
            "a user cancels",
            "approved",
            (1, 3),
            Ask::Change(Action::Cancel, true, End::Keep, None),
            ("canceled", true, Some("admitted"), None, false, None),
        ),
        (
            "an admin approves",
            "pending",
            (1, 3),
            Ask::Change(Action::Approve, true, End::Keep, None),
            ("approved", false, Some("waiting"), Some("booking.approved"), false, None),
        ),
        (
            "an admin rejects",
            "pending",
            (1, 3),
            Ask::Change(Action::Reject, true, End::Keep, None),
            ("rejected", true, Some("admitted"), Some("booking.rejected"), false, None),
        ),
        (
            "expiry rejects",
            "pending",
            (-1, 3),
            Ask::Change(Action::Reject, false, End::Keep, None),
            ("rejected", true, Some("admitted"), Some("booking.rejected"), false, None),
        ),
        (
            "the worker activates",
            "approved",
            (-1, 3),
            Ask::Change(Action::Activate, false, End::Keep, None),
            ("active", false, Some("waiting"), None, false, None),
        ),
        (
            "the worker completes at the window's end",
            "active",
            (-3, -1),
            Ask::Change(Action::Complete, false, End::Keep, None),
            ("completed", true, None, None, false, None),
        ),
        (
            "the worker fails it",
            "active",
            (-1, 3),
            Ask::Change(Action::Fail, false, End::Keep, None),
            ("failed", true, Some("admitted"), Some("booking.failed"), false, None),
        ),
        (
            "a user ends it early",
            "active",
            (-1, 3),
            Ask::Change(Action::Complete, true, End::Now, Some("ended_early")),
            ("completed", true, Some("admitted"), None, true, Some("ended_early")),
        ),
        (
            "idle reclaim",
            "active",
            (-1, 3),
            Ask::Change(Action::Complete, false, End::Now, Some("idle")),
            ("completed", true, Some("admitted"), None, true, Some("idle")),
        ),
        (
            "a blackout over a running one",
            "active",
            (-1, 3),
            Ask::Close,
            ("completed", true, Some("admitted"), None, true, None),
        ),
        (
            "a disabled user's coming one",
            "approved",
            (1, 3),
            Ask::Close,
            ("canceled", true, Some("admitted"), None, false, None),
        ),
        (
            "a canceled series' occurrence",
            "pending",
            (1, 3),
            Ask::Change(Action::Cancel, true, End::Keep, None),
            ("canceled", true, Some("admitted"), None, false, None),
        ),
    ];
    for (caller, state, (from, to), ask, expected) in cases {
        let s = scene(state, from, to).await;
        sqlx::query("INSERT INTO booking_event (booking_id, actor_id, from_state, to_state, reason) VALUES ($1, NULL, NULL, 'pending', 'seeded')")
            .bind(s.request)
            .execute(&s.f.db)
            .await
            .unwrap();
        let ends_before: DateTime<Utc> = sqlx::query_scalar("SELECT ends_at FROM booking WHERE id = $1")
            .bind(s.booking)
            .fetch_one(&s.f.db)
            .await
            .unwrap();
        let mut tx = s.f.db.begin().await.unwrap();
        let (actor, changed) = match ask {
            Ask::Change(action, by_person, end, released_as) => {
                let actor = by_person.then_some(if action == Action::Cancel { s.ada } else { s.admin });
                let asked = Change::new(action, actor, caller).ending(end, released_as);
                (actor, change(&mut tx, s.booking, asked).await.unwrap())
            }
            Ask::Close => (Some(s.admin), close(&mut tx, s.booking, Some(s.admin), caller).await.unwrap().unwrap()),
        };
        let from_state = changed.from.as_str().to_string();
        tx.commit().await.unwrap();
        settle(&s.f.db, [changed]).await;

        let (to, withdraws, waiting, notice, cut, released_as) = expected;
        let seen = seen(&s, ends_before).await;
        assert_eq!(seen.state, to, "{caller}");
        assert_eq!(
            seen.event,
            (actor, Some(from_state), to.to_string(), caller.to_string()),
            "{caller}: the audit event"
        );
        assert_eq!(seen.request, if withdraws { withdrawn() } else { open() }, "{caller}: the extension request");
        assert_eq!(seen.waiting.as_deref(), waiting, "{caller}: bob's waitlist entry");
        assert_eq!(seen.notices, notice.into_iter().map(String::from).collect::<Vec<_>>(), "{caller}: notifications");
        assert_eq!((seen.cut, seen.released_as.as_deref()), (cut, released_as), "{caller}: the window");
    }
}

#[tokio::test]
async fn a_change_the_state_machine_refuses_writes_nothing() {
    let s = scene("completed", -3, -1).await;
    let mut tx = s.f.db.begin().await.unwrap();
    let refused = change(&mut tx, s.booking, Change::new(Action::Cancel, Some(s.ada), "too late")).await;
    assert!(refused.is_err(), "a completed booking cannot be canceled");
    drop(tx);
    let state: String =
        sqlx::query_scalar("SELECT state FROM booking WHERE id = $1").bind(s.booking).fetch_one(&s.f.db).await.unwrap();
    assert_eq!(state, "completed");
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM booking_event WHERE booking_id = $1")
        .bind(s.booking)
        .fetch_one(&s.f.db)
        .await
        .unwrap();
    assert_eq!(events, 0);
}

/// A state Berth does not know (written past the CHECK by hand, or by a
/// newer version) is a decode error: the booking is not shown as failed,
/// approved or anything else, and nothing is done to it as if it were.
#[tokio::test]
async fn an_unknown_booking_state_is_a_decode_error_not_another_state() {
    let f = common::Fixture::new().await;
    let (status, booked) = f.book(&f.ada, common::MIG, 1, common::slot(8), common::slot(10)).await;
    assert_eq!(status, 201, "{booked}");
    let id: uuid::Uuid = booked["id"].as_str().unwrap().parse().unwrap();
    sqlx::query("ALTER TABLE booking DROP CONSTRAINT booking_state_known").execute(&f.db).await.unwrap();
    sqlx::query("UPDATE booking SET state = 'paused' WHERE id = $1").bind(id).execute(&f.db).await.unwrap();
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let read = app::backend::bookings::get(&f.db, &ada, id).await;
    assert!(read.is_err(), "read as {:?}", read.map(|b| b.state));
    let (status, body) = f.call(axum::http::Method::GET, &format!("/api/v1/bookings/{id}"), Some(&f.ada), None).await;
    assert_eq!(status, 500, "{body}");
    assert!(!body.to_string().contains("paused"), "database text never reaches a client: {body}");
    let canceled = app::backend::bookings::cancel(&f.db, &ada, id, "test").await;
    assert!(canceled.is_err(), "not canceled as if it were approved");
    let state: String =
        sqlx::query_scalar("SELECT state FROM booking WHERE id = $1").bind(id).fetch_one(&f.db).await.unwrap();
    assert_eq!(state, "paused");
}
