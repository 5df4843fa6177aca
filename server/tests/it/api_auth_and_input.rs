//! The wire rules every endpoint shares: bearer auth, the error shape,
//! malformed / oversized / unknown input, and the OpenAPI document.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::{raw, slot, Fixture, MIG};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_live_token_get_401() {
    let f = Fixture::new().await;
    for token in [None, Some("berth_0000"), Some("not-a-berth-token")] {
        let (status, body) = f.call(Method::GET, "/api/v1/pools", token, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(body["error"], "unauthorized");
    }
    // Expired and revoked tokens stop working.
    sqlx::query("UPDATE api_token SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM app_user WHERE email = 'ada@a.test')")
        .execute(&f.db).await.unwrap();
    assert_eq!(f.call(Method::GET, "/api/v1/pools", Some(&f.ada), None).await.0, StatusCode::UNAUTHORIZED);
    sqlx::query(
        "UPDATE api_token SET revoked_at = now() WHERE user_id = (SELECT id FROM app_user WHERE email = 'bob@b.test')",
    )
    .execute(&f.db)
    .await
    .unwrap();
    assert_eq!(f.call(Method::GET, "/api/v1/pools", Some(&f.bob), None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(f.call(Method::GET, "/api/v1/pools", Some(&f.carol), None).await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn me_returns_the_principal_and_records_last_use() {
    let f = Fixture::new().await;
    let (status, me) = f.call(Method::GET, "/api/v1/me", Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(me["email"], "mia@a.test");
    assert_eq!(me["role"], "manager");
    assert_eq!(me["tenants"][0]["slug"], "team-a");
    let used: Option<chrono::DateTime<chrono::Utc>> = sqlx::query_scalar(
        "SELECT last_used_at FROM api_token t JOIN app_user u ON u.id = t.user_id WHERE u.email = 'mia@a.test'",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!(used.is_some());
}

fn booking_request(f: &Fixture, body: &str, content_type: &str) -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri("/api/v1/bookings")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_400_and_nothing_is_written() {
    let f = Fixture::new().await;
    for body in ["{\"pool_id\": ", "not json", "{} trailing"] {
        let (status, err) = raw(&f.app, booking_request(&f, body, "application/json")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(err["error"], "malformed_json");
        assert!(err.get("field").is_some(), "every error carries `field`");
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM booking").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_are_413_and_non_json_is_415() {
    let f = Fixture::new().await;
    let huge = json!({ "note": "x".repeat(100 * 1024) }).to_string();
    let (status, err) = raw(&f.app, booking_request(&f, &huge, "application/json")).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(err["error"], "payload_too_large");
    let (status, err) = raw(&f.app, booking_request(&f, "pool_id=1", "application/x-www-form-urlencoded")).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(err["error"], "unsupported_media_type");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_missing_and_mistyped_fields_are_422_naming_the_field() {
    let f = Fixture::new().await;
    let valid = json!({
        "pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(4), "end": slot(8), "mode": "interactive"
    });
    let with = |key: &str, value: Value| {
        let mut body = valid.clone();
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = valid.clone();
        body.as_object_mut().unwrap().remove(key);
        body
    };
    let cases = [
        (with("colour", json!("blue")), "colour"),
        (without("kind"), "kind"),
        (with("quantity", json!("two")), "quantity"),
        (with("mode", json!("batch")), "mode"),
        (with("start", json!("tomorrow")), "start"),
        (with("pool_id", json!("not-a-uuid")), "pool_id"),
    ];
    for (body, field) in cases {
        let (status, err) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(err["error"], "invalid");
        assert_eq!(err["field"], field, "{err}");
        assert!(err["message"].as_str().unwrap().starts_with(field));
    }
    let (status, _) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(valid)).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_and_malformed_ids_are_json_404s() {
    let f = Fixture::new().await;
    for path in ["/api/v1/nothing-here", "/api/v1/bookings/not-a-uuid", "/api/v1/pools/123"] {
        let (status, err) = f.call(Method::GET, path, Some(&f.ada), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(err["error"], "not_found");
    }
}

/// Every operation the router serves, as (method, OpenAPI path).
const OPERATIONS: &[(&str, &str)] = &[
    ("get", "/openapi.json"),
    ("get", "/me"),
    ("get", "/pools"),
    ("post", "/pools"),
    ("get", "/pools/{id}"),
    ("patch", "/pools/{id}"),
    ("delete", "/pools/{id}"),
    ("get", "/pools/{id}/availability"),
    ("get", "/pools/{id}/slots"),
    ("get", "/bookings"),
    ("post", "/bookings"),
    ("get", "/bookings/{id}"),
    ("post", "/bookings/{id}/cancel"),
    ("post", "/bookings/{id}/extend"),
    ("post", "/bookings/{id}/move"),
    ("post", "/bookings/{id}/end"),
    ("post", "/bookings/{id}/approve"),
    ("post", "/bookings/{id}/reject"),
    ("post", "/bookings/{id}/co-owners"),
    ("delete", "/bookings/{id}/co-owners/{email}"),
    ("get", "/tenants"),
    ("post", "/tenants"),
    ("patch", "/tenants/{slug}"),
    ("put", "/tenants/{slug}/quotas"),
    ("get", "/tenants/{slug}/usage"),
    ("get", "/tenants/{slug}/dashboard"),
    ("get", "/audit"),
    ("get", "/audit.csv"),
    ("get", "/worker/status"),
    ("get", "/pools/{id}/blackouts"),
    ("post", "/pools/{id}/blackouts"),
    ("delete", "/blackouts/{id}"),
    ("get", "/waitlist"),
    ("delete", "/waitlist/{id}"),
    ("post", "/tokenomics/evaluate"),
    ("get", "/pools/{id}/cost-model"),
    ("put", "/pools/{id}/cost-model"),
    ("get", "/reports/utilization"),
    ("get", "/reports/utilization.csv"),
    ("get", "/pools/{id}/idle-policy"),
    ("put", "/pools/{id}/idle-policy"),
    ("get", "/me/calendar-feed"),
    ("post", "/me/calendar-feed"),
    ("get", "/me/time-zone"),
    ("put", "/me/time-zone"),
    ("get", "/calendar-feeds/{file}"),
    ("get", "/me/notifications"),
    ("put", "/me/notifications"),
    ("post", "/me/webhooks"),
    ("get", "/tenants/{slug}/webhooks"),
    ("post", "/tenants/{slug}/webhooks"),
    ("delete", "/webhooks/{id}"),
    ("post", "/series/preview"),
    ("post", "/series"),
    ("post", "/series/{id}/cancel"),
    ("get", "/homes"),
    ("delete", "/homes/{id}"),
    ("put", "/tenants/{slug}/homes"),
    ("put", "/homes/price"),
    ("get", "/fit"),
    ("get", "/free"),
    ("get", "/clusters"),
    ("post", "/clusters"),
    ("get", "/clusters/{id}"),
    ("put", "/clusters/{id}"),
    ("delete", "/clusters/{id}"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_document_describes_exactly_the_served_operations() {
    let f = Fixture::new().await;
    let (status, doc) = f.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK, "served without a token");
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| ops.as_object().unwrap().keys().map(move |m| (m.clone(), path.clone())))
        .collect();
    documented.sort();
    let mut served: Vec<(String, String)> = OPERATIONS.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    served.sort();
    assert_eq!(documented, served);
    // Each listed operation really is routed: without a token it is 401, not 404/405.
    // The two public ones answer for themselves: the document, and a feed
    // whose secret is its credential (an unknown one is that feed's 404).
    let public = ["/openapi.json", "/calendar-feeds/{file}"];
    let (status, err) = f.call(Method::GET, "/api/v1/calendar-feeds/bcal_00.ics", None, None).await;
    assert_eq!((status, err["message"].as_str()), (StatusCode::NOT_FOUND, Some("calendar feed not found")), "{err}");
    let id = uuid::Uuid::new_v4().to_string();
    for (method, path) in OPERATIONS.iter().filter(|(_, p)| !public.contains(p)) {
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let (status, _) = f
            .call(
                method.clone(),
                &format!(
                    "/api/v1{}",
                    path.replace("{id}", &id).replace("{slug}", "team-a").replace("{email}", "x%40a.test")
                ),
                None,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Every schema reference resolves.
    let text = doc.to_string();
    for name in text.split("#/components/schemas/").skip(1).map(|s| s.split('"').next().unwrap()) {
        assert!(doc["components"]["schemas"].get(name).is_some(), "missing schema {name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_path_that_cannot_be_a_slug_is_404_not_a_database_error() {
    let f = Fixture::new().await;
    for slug in ["a%00b", "Team-A", "team_a", "%E2%9C%93"] {
        for path in ["usage", "webhooks", "dashboard"] {
            let (status, err) =
                f.call(Method::GET, &format!("/api/v1/tenants/{slug}/{path}"), Some(&f.admin), None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{slug}/{path}: {err}");
            assert_eq!(err["error"], "not_found");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_character_in_json_text_is_422_naming_the_field_and_nothing_is_written() {
    let f = Fixture::new().await;
    let booking = json!({
        "pool_id": f.lab, "kind": MIG, "quantity": 1, "start": slot(4), "end": slot(8), "mode": "interactive",
        "note": "a\u{0}b",
    });
    let cases = [
        (Method::POST, "/api/v1/bookings", booking, "note"),
        (Method::POST, "/api/v1/tenants", json!({ "slug": "t-nul", "name": "a\u{0}" }), "name"),
        (
            Method::PUT,
            "/api/v1/me/notifications",
            json!({ "preferences": [{ "event": "booking.idle\u{0}", "email": true, "webhook": true }] }),
            "preferences[0].event",
        ),
    ];
    for (method, path, body, field) in cases {
        let (status, err) = f.call(method, path, Some(&f.admin), Some(body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {err}");
        assert_eq!(err["field"], field, "{path}: {err}");
    }
    let written: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM booking) + (SELECT count(*) FROM tenant WHERE slug = 't-nul')",
    )
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert_eq!(written, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_number_written_with_a_fraction_is_an_integer_and_any_other_fraction_is_422() {
    // JSON Schema (and so the OpenAPI document) counts `4.0` as the integer 4.
    let f = Fixture::new().await;
    let body = |quantity: f64| {
        json!({
            "pool_id": f.lab, "kind": MIG, "quantity": quantity, "start": slot(4), "end": slot(8), "mode": "interactive",
        })
    };
    let (status, booked) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body(2.0))).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");
    assert_eq!(booked["quantity"], 2);
    let (status, err) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body(2.5))).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity")), "{err}");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM booking").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 1, "only the whole-number request booked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_character_in_a_query_parameter_is_422_naming_it_not_a_database_error() {
    let f = Fixture::new().await;
    for (path, name) in [
        ("/api/v1/audit?user=a%00b", "user"),
        ("/api/v1/audit.csv?action=%00", "action"),
        ("/api/v1/pools/00000000-0000-0000-0000-000000000000/availability?kind=a%00", "kind"),
    ] {
        let (status, err) = f.call(Method::GET, path, Some(&f.admin), None).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(name)), "{path}: {err}");
    }
}

/// Server fns (the pages' calls) refuse U+0000 the same way, before any
/// query sees it: the audit page's filter used to reach PostgreSQL and come
/// back as a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_character_in_a_server_fn_argument_is_422_naming_it() {
    let f = Fixture::new().await;
    let audit = |query: &str, body: &str| {
        Request::post(format!("/rpc/admin/audit{query}"))
            .header(header::AUTHORIZATION, format!("Bearer {}", f.admin))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    for (request, name) in
        [(audit("", "filter[user]=a%00b"), "filter[user]"), (audit("?x%00=1", "filter[user]=ada"), "x")]
    {
        let (status, body) = raw(&f.app, request).await;
        let text = body.as_str().unwrap_or_default();
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
        // Named in words: "User (filter) must not contain the NUL character."
        let named = text.contains(name) || text.contains(&app::model::field_words(name));
        assert!(text.starts_with("ServerError|") && named && text.contains("NUL"), "{text}");
    }
    // Without the NUL the server fn itself answers.
    let (status, body) = raw(&f.app, audit("", "filter[user]=ab")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_document_lists_exactly_the_time_zones_the_server_accepts() {
    let f = Fixture::new().await;
    let (_, doc) = f.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    let zone = &doc["components"]["schemas"]["TimeZone"];
    assert!(zone.get("x-berth-enum").is_none(), "the placeholder is replaced");
    let names: Vec<&str> = zone["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(names.len() > 400 && names.contains(&"Europe/Berlin") && names.contains(&"UTC"), "{}", names.len());
    assert!(names.iter().all(|n| n.parse::<chrono_tz::Tz>().is_ok()));
    // A pool in a listed zone is accepted; an unlisted one is 422 naming time_zone.
    for (zone, expected) in
        [("America/Sao_Paulo", StatusCode::OK), ("Mars/Olympus_Mons", StatusCode::UNPROCESSABLE_ENTITY)]
    {
        let (status, body) = f
            .call(
                Method::PATCH,
                &format!("/api/v1/pools/{}", f.lab),
                Some(&f.admin),
                Some(json!({ "time_zone": zone })),
            )
            .await;
        assert_eq!(status, expected, "{zone}: {body}");
    }
}

/// The responses every operation shares, by what it takes (its parameters and
/// body): the contract run relies on each being documented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_documents_the_answers_its_inputs_can_get() {
    let f = Fixture::new().await;
    let (_, doc) = f.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let has = |code: &str| op["responses"].get(code).is_some();
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let takes = |place: &str| params.iter().any(|p| p["in"] == place);
            let public = ["/openapi.json", "/calendar-feeds/{file}"].contains(&path.as_str());
            let mut expected = vec![];
            if !public {
                expected.extend(["401", "429"]);
            }
            if method != "get" {
                expected.push("403");
            }
            if takes("path") {
                expected.push("404");
            }
            if takes("query") {
                expected.push("422");
            }
            if op.get("requestBody").is_some() {
                expected.extend(["400", "413", "415", "422"]);
            }
            for code in expected {
                assert!(has(code), "{method} {path} does not document {code}");
            }
        }
    }
}
