//! Berth's MCP server driven by a real client: PyPI `mcp`, the reference
//! SDK (tests/mcp/client.py), over Streamable HTTP with an API token as
//! the bearer, against the portal served on a real port.

use crate::common::{self, mcp_client as client, slot, Fixture, GPU};
use app::model::TokenScope;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// The portal on a free port; `/mcp`'s address.
async fn serve(f: &Fixture) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = f.app.clone();
    tokio::spawn(server::web::http_server::serve(
        listener,
        app,
        std::time::Duration::from_secs(10),
        std::future::pending(),
    ));
    format!("http://127.0.0.1:{port}/mcp")
}

/// A pool made by the admin through the REST API.
async fn pool(f: &Fixture, spec: Value) -> Value {
    let (status, pool) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(spec)).await;
    assert_eq!(status, StatusCode::CREATED, "{pool}");
    pool
}

fn text(call: &Value) -> String {
    call["text"].as_array().and_then(|t| t.first()).and_then(Value::as_str).unwrap_or_default().to_string()
}

async fn token(f: &Fixture, email: &str, scope: TokenScope) -> String {
    let user: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = $1").bind(email).fetch_one(&f.db).await.unwrap();
    app::backend::accounts::tokens::issue(&f.db, user, "assistant", chrono::Duration::days(1), scope)
        .await
        .unwrap()
        .token
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_lists_every_tool_and_books_extends_and_cancels_as_the_portal_would() {
    let f = Fixture::new().await;
    let url = serve(&f).await;
    let z = |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (start, end) = (z(slot(8)), z(slot(12)));
    let book = json!({"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": start, "end": end,
                      "mode": "interactive", "idempotency_key": "assistant-1"});
    let mut again = book.clone();
    again["idempotency_key"] = "assistant-2".into();
    let seen = client(json!({
        "url": url, "token": f.ada, "client": "claude-desktop",
        "calls": [
            {"tool": "list_pools"},
            {"tool": "fit", "arguments": {"model": "llama-3.1-8b"}},
            {"tool": "find_free", "arguments": {"from": start, "to": end}},
            {"tool": "book", "arguments": book},
            // A retry with the same key: the first answer, nothing more booked.
            {"tool": "book", "arguments": book},
            // The same window under another key: the one GPU is taken.
            {"tool": "book", "arguments": again},
            {"tool": "my_bookings"},
        ],
    }))
    .await;

    let names: Vec<&str> = seen["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["list_pools", "fit", "find_free", "book", "my_bookings", "booking", "extend", "end_now", "cancel"]
    );
    let tool = |name: &str| seen["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    // Honest hints: clients ask their person before ending or cancelling.
    for (name, read_only, destructive) in [
        ("list_pools", true, false),
        ("find_free", true, false),
        ("book", false, false),
        ("end_now", false, true),
        ("cancel", false, true),
    ] {
        let hints = &tool(name)["annotations"];
        assert_eq!(
            (hints["readOnlyHint"].as_bool(), hints["destructiveHint"].as_bool()),
            (Some(read_only), Some(destructive)),
            "{name}"
        );
    }
    // Schemas come from the REST API's OpenAPI document: the same fields and bounds.
    let schema = &tool("book")["input_schema"];
    assert_eq!(schema["properties"]["quantity"]["minimum"], 1, "{schema}");
    assert_eq!(schema["properties"]["mode"]["enum"], json!(["interactive", "inference"]));
    assert!(schema["properties"]["idempotency_key"]["maxLength"].is_number(), "{schema}");
    for field in ["pool_id", "kind", "quantity", "start", "end", "mode"] {
        assert!(schema["required"].as_array().unwrap().contains(&json!(field)), "{field} required: {schema}");
    }
    assert!(tool("find_free")["description"].as_str().unwrap().contains("at most 14 days"), "its bounds are stated");

    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0]["structured"]["pools"][0]["name"], "lab-h100", "{}", calls[0]);
    assert!(calls[1]["structured"]["estimate"]["arithmetic"].as_array().is_some_and(|a| !a.is_empty()), "{}", calls[1]);
    assert!(calls[2]["structured"]["free"].as_array().unwrap().iter().any(|r| r["kind"] == GPU && r["whole"] == true));
    assert_eq!(calls[3]["is_error"], false, "{}", calls[3]);
    assert!(
        text(&calls[3]).starts_with("Booked GPU × 1 from ") && text(&calls[3]).ends_with(": approved."),
        "{}",
        text(&calls[3])
    );
    let id = calls[3]["structured"]["id"].as_str().unwrap().to_string();
    assert_eq!(calls[4]["structured"]["id"], id.as_str(), "a retried book is the same booking");
    assert_eq!(calls[5]["is_error"], true);
    assert!(text(&calls[5]).starts_with("Not enough free capacity"), "{}", text(&calls[5]));
    assert!(
        text(&calls[5]).contains(&format!("The earliest window of the same length that fits is {end} to ")),
        "{}",
        text(&calls[5])
    );
    assert_eq!(calls[5]["structured"]["next_free"]["start"], end.as_str(), "{}", calls[5]);
    assert!(calls[6]["structured"]["bookings"].as_array().unwrap().iter().any(|b| b["id"] == id.as_str()));

    // The portal and the REST API see the booking; one was made, not two.
    let (status, booking) = f.call(Method::GET, &format!("/api/v1/bookings/{id}"), Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{booking}");
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM booking WHERE starts_at = $1 AND kind = $2")
        .bind(slot(8))
        .bind(GPU)
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(made, 1);
    // Audited with the token and the client that made it, and said on the card.
    assert_eq!(made_by(&f, &id, "booking.create").await, json!(["test", "claude-desktop 1.0"]));
    assert_eq!(
        booked_via(&f, "ada@a.test", &id).await.as_deref(),
        Some("Booked via claude-desktop 1.0 with the API token “test”.")
    );

    let later = z(slot(16));
    let seen = client(json!({
        "url": url, "token": f.ada,
        "calls": [
            {"tool": "booking", "arguments": {"id": id}},
            {"tool": "extend", "arguments": {"id": id, "end": later}},
            {"tool": "extend", "arguments": {"id": id, "end": start}},
            {"tool": "cancel", "arguments": {"id": id, "reason": "plans changed"}},
            {"tool": "booking", "arguments": {"id": id, "colour": "blue"}},
            {"tool": "no_such_tool"},
        ],
    }))
    .await;
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0]["structured"]["portal_url"], format!("http://127.0.0.1:3000/bookings/{id}"));
    assert_eq!(text(&calls[1]), format!("Extended: the booking is now GPU × 1 from {start} to {later}."));
    // A refusal is the portal's sentence about the field.
    assert_eq!(calls[2]["is_error"], true);
    assert_eq!(text(&calls[2]), "End must be later than the current end.");
    assert_eq!(calls[2]["structured"]["field"], "end");
    assert!(text(&calls[3]).starts_with("Canceled: GPU × 1"), "{}", text(&calls[3]));
    assert_eq!(text(&calls[4]), "Colour is not an argument of booking.");
    assert_eq!(calls[5]["protocol_error"], "Berth has no tool named no_such_tool");
    let (_, booking) = f.call(Method::GET, &format!("/api/v1/bookings/{id}"), Some(&f.ada), None).await;
    assert_eq!(booking["state"], "canceled");
    assert_eq!(made_by(&f, &id, "booking.canceled").await, json!(["test", "berth-tests 1.0"]));

    // Through the REST API with the same token: no client named, the token is.
    let rest = json!({"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": z(slot(20)), "end": z(slot(24)),
                      "mode": "interactive"});
    let (status, booked) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(rest)).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");
    let rest_id = booked["id"].as_str().unwrap();
    assert_eq!(made_by(&f, rest_id, "booking.create").await, json!(["test", null]));
    assert_eq!(booked_via(&f, "ada@a.test", rest_id).await.as_deref(), Some("Booked with the API token “test”."));

    // A window running now, ended by the assistant.
    let (status, live) = f.book(&f.ada, GPU, 1, slot(-1), slot(2)).await;
    assert_eq!(status, StatusCode::CREATED, "{live}");
    let seen =
        client(json!({"url": url, "token": f.ada, "calls": [{"tool": "end_now", "arguments": {"id": live["id"]}}]}));
    let ended = &seen.await["calls"][0];
    assert!(
        text(ended).starts_with("Ended: GPU × 1 from ") && text(ended).ends_with("its workspace is being torn down.")
    );
    let (_, after) =
        f.call(Method::GET, &format!("/api/v1/bookings/{}", live["id"].as_str().unwrap()), Some(&f.ada), None).await;
    assert_eq!(after["end"].as_str().map(|end| end < z(slot(2)).as_str()), Some(true), "ended early: {after}");
}

/// The token and client of the audit log's `action` on booking `id`, as an
/// admin reads the log through the REST API.
async fn made_by(f: &Fixture, id: &str, action: &str) -> Value {
    let (status, log) = f.call(Method::GET, &format!("/api/v1/audit?action={action}"), Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK, "{log}");
    let entry = log["entries"].as_array().unwrap().iter().find(|e| e["target"] == id).cloned();
    let entry = entry.unwrap_or_else(|| panic!("no {action} of {id} in {log}"));
    json!([entry["token"], entry["client"]])
}

/// What `email`'s My bookings says of how booking `id` was made.
async fn booked_via(f: &Fixture, email: &str, id: &str) -> Option<String> {
    let user: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM app_user WHERE email = $1").bind(email).fetch_one(&f.db).await.unwrap();
    let me = app::backend::accounts::principals::by_user_id(&f.db, user).await.unwrap().unwrap();
    let page = app::backend::bookings::mine::load(&f.db, &me, "UTC").await.unwrap();
    let card = page.live.into_iter().chain(page.upcoming).chain(page.past).find(|c| c.booking.id.to_string() == id);
    card.unwrap_or_else(|| panic!("{id} is not on {email}'s My bookings")).booked_via
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_token_cannot_book_and_no_one_reaches_another_tenants_pool_or_booking() {
    let f = Fixture::new().await;
    let url = serve(&f).await;
    // A pool for team-a alone, and ada's booking in the demo pool.
    let team_pool =
        pool(&f, json!({"name": "team-a-only", "tenants": ["team-a"], "kinds": [{"kind": GPU, "capacity": 2}]})).await;
    let (status, adas) = f.book(&f.ada, GPU, 1, slot(8), slot(12)).await;
    assert_eq!(status, StatusCode::CREATED, "{adas}");
    let window = |pool: &Value| json!({"pool_id": pool, "kind": GPU, "quantity": 1, "start": slot(20), "end": slot(24), "mode": "interactive"});

    let read_only = token(&f, "ada@a.test", TokenScope::Read).await;
    let resources = ["berth://bookings/upcoming", "berth://pools", "berth://secrets"];
    let seen = client(json!({"url": url, "token": read_only, "read": resources, "calls": [
        {"tool": "list_pools"},
        {"tool": "book", "arguments": window(&team_pool["id"])},
        {"tool": "cancel", "arguments": {"id": adas["id"]}},
    ]}))
    .await;
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "reading is what it may do");
    // Resources are reads too: ada's booking and her tenant's pool.
    let listed: Vec<&str> = seen["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(listed, resources[..2]);
    let read = |seen: &Value, k: usize| -> Value {
        let read = &seen["read"][k];
        assert_eq!(read["mime_type"], "application/json", "{read}");
        serde_json::from_str(read["text"][0].as_str().unwrap()).unwrap()
    };
    assert!(read(&seen, 0).as_array().unwrap().iter().any(|b| b["id"] == adas["id"]), "{}", seen["read"][0]);
    assert!(read(&seen, 1).as_array().unwrap().iter().any(|p| p["name"] == "team-a-only"), "{}", seen["read"][1]);
    assert_eq!(seen["read"][2]["protocol_error"], "Berth has no resource berth://secrets");
    for refused in &calls[1..] {
        assert_eq!(refused["structured"]["status"], 403, "{refused}");
        assert!(text(refused).starts_with("This token may read only"), "{}", text(refused));
    }

    let seen = client(json!({"url": url, "token": f.bob, "read": resources[..2], "calls": [
        {"tool": "list_pools"},
        {"tool": "book", "arguments": window(&team_pool["id"])},
        {"tool": "booking", "arguments": {"id": adas["id"]}},
        {"tool": "cancel", "arguments": {"id": adas["id"]}},
        {"tool": "end_now", "arguments": {"id": adas["id"]}},
    ]}))
    .await;
    let calls = seen["calls"].as_array().unwrap();
    let pools: Vec<&str> =
        calls[0]["structured"]["pools"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(!pools.contains(&"team-a-only"), "{pools:?}");
    assert_eq!(read(&seen, 0), json!([]), "bob has no bookings, and sees none of ada's");
    assert!(read(&seen, 1).as_array().unwrap().iter().all(|p| p["name"] != "team-a-only"), "{}", seen["read"][1]);
    for (call, answer) in calls[1..].iter().zip([
        (422, "Pool ID: no pool with this id that your tenant may book."),
        (404, "Booking not found."),
        (404, "Booking not found."),
        (404, "Booking not found."),
    ]) {
        assert_eq!((call["structured"]["status"].as_u64(), text(call).as_str()), (Some(answer.0), answer.1), "{call}");
    }
    let (_, still) =
        f.call(Method::GET, &format!("/api/v1/bookings/{}", adas["id"].as_str().unwrap()), Some(&f.ada), None).await;
    assert_eq!(still["state"], "approved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_that_needs_approval_answers_pending_and_no_token_gets_in() {
    let f = Fixture::new().await;
    let url = serve(&f).await;
    let pool =
        pool(&f, json!({"name": "approved-only", "requires_approval": true, "kinds": [{"kind": GPU, "capacity": 1}]}))
            .await;
    let book_only = token(&f, "ada@a.test", TokenScope::Book).await;
    let seen = client(json!({"url": url, "token": book_only, "calls": [
        {"tool": "book", "arguments": {"pool_id": pool["id"], "kind": GPU, "quantity": 1,
                                       "start": slot(8), "end": slot(12), "mode": "interactive"}},
    ]}))
    .await;
    let call = &seen["calls"][0];
    assert_eq!(call["structured"]["state"], "pending", "{call}");
    assert!(text(call).contains(": pending, because this pool needs an admin's approval"), "{}", text(call));

    // Without a token (a cookie, nothing, or a revoked one): 401, naming where to learn more.
    let http = reqwest::Client::new();
    let answer =
        http.post(&url).json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).send().await.unwrap();
    assert_eq!(answer.status(), 401);
    let challenge = answer.headers()["www-authenticate"].to_str().unwrap().to_string();
    let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.contains("resource_metadata=\"http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp\""),
        "{challenge}"
    );
    let described: Value = http.get(&metadata).send().await.unwrap().json().await.unwrap();
    assert_eq!(described["resource"], "http://127.0.0.1:3000/mcp");
    assert_eq!(described["scopes_supported"], json!(["read", "book", "full"]));
    let (_, session) = common::dev_login(&f.app, "ada@a.test").await;
    let with_cookie = http
        .post(&url)
        .header("cookie", session.unwrap_or_default())
        .header("origin", "http://127.0.0.1:3000")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), 401, "a session cookie plays no part");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn berth_mcp_offers_the_same_tools_over_stdio_with_the_saved_login() {
    let f = Fixture::new().await;
    let url = serve(&f).await;
    let portal = url.trim_end_matches("/mcp").to_string();
    // The saved login, as `berth login` writes it (the environment is empty of BERTH_*).
    let home = std::env::temp_dir().join(format!("berth-mcp-{}", uuid::Uuid::new_v4()));
    let config = home.join("berth");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), format!("url = \"{portal}\"\ntoken = \"{}\"\n", f.ada)).unwrap();
    let (start, end) = (slot(8), slot(12));
    let seen = client(json!({
        "command": [env!("CARGO_BIN_EXE_berth"), "mcp"],
        "env": {"XDG_CONFIG_HOME": home, "HOME": home, "PATH": std::env::var("PATH").unwrap()},
        "calls": [
            {"tool": "book", "arguments": {"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": start, "end": end,
                                           "mode": "interactive"}},
            {"tool": "cancel", "arguments": {"id": uuid::Uuid::new_v4()}},
            {"tool": "no_such_tool"},
        ],
        "read": ["berth://bookings/upcoming"],
    }))
    .await;
    std::fs::remove_dir_all(&home).unwrap();
    assert_eq!(seen["resources"].as_array().unwrap().len(), 2, "{}", seen["resources"]);
    assert!(seen["read"][0]["text"][0].as_str().unwrap().contains("\"state\": \"approved\""), "{}", seen["read"][0]);
    let names: Vec<&str> = seen["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 9, "{names:?}");
    let calls = seen["calls"].as_array().unwrap();
    assert!(text(&calls[0]).ends_with(": approved."), "{}", calls[0]);
    let id = calls[0]["structured"]["id"].as_str().unwrap();
    let (_, booking) = f.call(Method::GET, &format!("/api/v1/bookings/{id}"), Some(&f.ada), None).await;
    assert_eq!(booking["state"], "approved", "booked as ada, in the portal");
    // The assistant behind the relay is the client the log names.
    assert_eq!(made_by(&f, id, "booking.create").await, json!(["test", "berth-tests 1.0, via berth mcp"]));
    assert_eq!(text(&calls[1]), "Booking not found.");
    assert_eq!(calls[2]["protocol_error"], "Berth has no tool named no_such_tool");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn book_with_repeat_books_a_series_and_names_what_it_left_out() {
    let f = Fixture::new().await;
    let url = serve(&f).await;
    let z = |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let day = chrono::Duration::days(1);
    // The second day's window is taken already.
    let taken = json!({"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": z(slot(8) + day),
                       "end": z(slot(12) + day), "mode": "interactive"});
    assert_eq!(f.call(Method::POST, "/api/v1/bookings", Some(&f.bob), Some(taken)).await.0, StatusCode::CREATED);
    let series = json!({"pool_id": f.lab, "kind": GPU, "quantity": 1, "start": z(slot(8)), "end": z(slot(12)),
                        "mode": "interactive", "repeat": "daily", "time_zone": "UTC",
                        "until": (slot(8) + day * 2).date_naive(), "idempotency_key": "series-1"});
    let mut all_or_none = series.clone();
    all_or_none["occurrences"] = json!([z(slot(8)), z(slot(8) + day)]);
    all_or_none["idempotency_key"] = "series-2".into();
    let seen = client(json!({
        "url": url, "token": f.ada,
        "calls": [
            {"tool": "book", "arguments": series},
            {"tool": "book", "arguments": series},
            {"tool": "book", "arguments": all_or_none},
        ],
    }))
    .await;
    let book = seen["tools"].as_array().unwrap().iter().find(|t| t["name"] == "book").unwrap().clone();
    let schema = &book["input_schema"];
    assert_eq!(schema["properties"]["repeat"]["enum"], json!(["daily", "weekly"]), "{schema}");
    assert!(schema["properties"]["waitlist"].is_object() && schema["properties"]["until"].is_object());
    assert!(!schema["required"].as_array().unwrap().contains(&json!("repeat")), "one window needs no repeat");

    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    let said = text(&calls[0]);
    assert!(said.starts_with("Booked a series, daily until "), "{said}");
    assert!(said.contains(": 2 bookings, the first from ") && said.contains("; 2 approved."), "{said}");
    assert!(said.contains(&format!("Not booked, for they do not fit: {} (not enough free capacity", z(slot(8) + day))));
    let id = calls[0]["structured"]["id"].as_str().unwrap();
    assert_eq!(calls[1]["structured"]["id"], id, "a retried series is the same series");
    // Chosen occurrences are all or none: one is taken, nothing is booked.
    assert_eq!(calls[2]["is_error"], true, "{}", calls[2]);
    assert_eq!(calls[2]["structured"]["status"], 409, "{}", calls[2]);
    let ada: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM booking b JOIN app_user u ON u.id = b.user_id WHERE u.email = 'ada@a.test'",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert_eq!(ada, 2);
}
