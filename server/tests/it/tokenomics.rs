//! Tokenomics over REST and the script-less form: the worked check,
//! clear refusals, and a stored, audited cost model per pool.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::Fixture;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

fn worked_check() -> Value {
    json!({
        "capex_per_gpu": 30000, "amortization_years": 4, "power_kw": 0.7, "pue": 1.2,
        "electricity_per_kwh": 0.083, "maintenance_pct_per_year": 10,
        "tokens_per_second": 8088, "utilization": 1.0, "price_per_million_tokens": 0.10,
    })
}

fn near(value: &Value, expected: f64, tolerance: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() <= tolerance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_gives_the_worked_check_to_managers_and_admins_only() {
    let f = Fixture::new().await;
    for token in [&f.mia, &f.admin] {
        let (status, r) = f.call(Method::POST, "/api/v1/tokenomics/evaluate", Some(token), Some(worked_check())).await;
        assert_eq!(status, StatusCode::OK, "{r}");
        assert!(near(&r["cost_per_gpu_hour"], 1.27, 0.01), "{r}");
        assert!(near(&r["cost_per_million_tokens"], 0.044, 0.0005), "{r}");
        assert!(near(&r["break_even_utilization"], 0.436, 0.0005), "{r}");
        assert_eq!(r["gpus_needed"], Value::Null, "not asked: {r}");
    }
    let (status, _) = f.call(Method::POST, "/api/v1/tokenomics/evaluate", Some(&f.ada), Some(worked_check())).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_name_their_field_and_zero_output_explains_itself() {
    let f = Fixture::new().await;
    let mut body = worked_check();
    body["utilization"] = json!(1.5);
    let (status, r) = f.call(Method::POST, "/api/v1/tokenomics/evaluate", Some(&f.mia), Some(body)).await;
    assert_eq!((status, r["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("utilization")), "{r}");
    let mut body = worked_check();
    body.as_object_mut().unwrap().remove("pue");
    let (status, r) = f.call(Method::POST, "/api/v1/tokenomics/evaluate", Some(&f.mia), Some(body)).await;
    assert_eq!((status, r["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pue")), "{r}");

    let mut body = worked_check();
    body["tokens_per_second"] = json!(0);
    body["tokens_per_day"] = json!(1e9);
    let (status, r) = f.call(Method::POST, "/api/v1/tokenomics/evaluate", Some(&f.mia), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!((&r["cost_per_million_tokens"], &r["gpus_needed"]), (&Value::Null, &Value::Null), "{r}");
    assert!(r["notes"][0].as_str().unwrap().contains("0 tokens/s"), "{r}");
    assert!(!r.to_string().contains("inf") && !r.to_string().contains("NaN"), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pools_cost_model_is_stored_audited_and_refused_whole_when_wrong() {
    let f = Fixture::new().await;
    let path = format!("/api/v1/pools/{}/cost-model", f.lab);
    let (status, view) = f.call(Method::GET, &path, Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["updated"], Value::Null, "the default until someone saves: {view}");
    // The demo pool: one whole GPU and four 1g.24gb slices (four fill a GPU).
    assert!(near(&view["gpus_available"], 2.0, 1e-9), "{view}");

    let mut model = view["model"].clone();
    model["capex_per_gpu"] = json!(25000);
    model["utilization"] = json!(0.6);
    let (status, saved) = f.call(Method::PUT, &path, Some(&f.admin), Some(model.clone())).await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    assert_eq!(saved["model"]["capex_per_gpu"], json!(25000.0));
    assert!(saved["updated"][1].as_str().is_some(), "{saved}");
    let audited: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_event WHERE action = 'tokenomics.update'")
        .fetch_one(&f.db)
        .await
        .unwrap();
    assert_eq!(audited, 1);

    let mut wrong = model.clone();
    wrong["pue"] = json!(0.2);
    let (status, r) = f.call(Method::PUT, &path, Some(&f.mia), Some(wrong)).await;
    assert_eq!((status, r["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("pue")), "{r}");
    let (_, after) = f.call(Method::GET, &path, Some(&f.mia), None).await;
    assert_eq!(after["model"]["pue"], model["pue"], "nothing half-written");

    for token in [&f.ada, &f.bob] {
        assert_eq!(f.call(Method::GET, &path, Some(token), None).await.0, StatusCode::FORBIDDEN);
        assert_eq!(f.call(Method::PUT, &path, Some(token), Some(model.clone())).await.0, StatusCode::FORBIDDEN);
    }
    let missing = format!("/api/v1/pools/{}/cost-model", uuid::Uuid::new_v4());
    assert_eq!(f.call(Method::GET, &missing, Some(&f.mia), None).await.0, StatusCode::NOT_FOUND);
}

async fn page(f: &Fixture, path: &str) -> String {
    let request = Request::get(path).header(header::AUTHORIZATION, format!("Bearer {}", f.mia)).body(Body::empty());
    let response = f.app.clone().oneshot(request.unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

/// Posts the cost-model form as a browser without JavaScript would, from the page.
async fn post_form(f: &Fixture, fields: &[(&str, &str)]) -> axum::response::Response {
    let body = std::iter::once(format!("pool_id={}", f.lab))
        .chain(fields.iter().map(|(k, v)| format!("form%5B{k}%5D={}", v.replace(' ', "+"))))
        .collect::<Vec<_>>()
        .join("&");
    let back = format!("http://127.0.0.1:3000/reports/tokenomics?pool={}", f.lab);
    let request = Request::post("/rpc/reports/tokenomics/save")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.mia))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, &back)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap();
    f.app.clone().oneshot(request).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_less_form_saves_and_the_page_shows_the_same_figures_as_the_api() {
    let f = Fixture::new().await;
    let form = [
        ("capex_per_gpu", "30 000"),
        ("amortization_years", "4"),
        ("power_kw", "0.7"),
        ("pue", "1.2"),
        ("electricity_per_kwh", "0.083"),
        ("maintenance_pct_per_year", "10"),
        ("rent_per_gpu_hour", ""),
        ("preset", ""),
        ("tokens_per_second", "8088"),
        ("utilization_pct", "100"),
        ("price_per_million_tokens", "0.10"),
        ("tokens_per_day", ""),
        ("budget_per_day", ""),
    ];
    let response = post_form(&f, &form).await;
    assert_eq!(response.status(), StatusCode::FOUND);
    let location = response.headers()[header::LOCATION].to_str().unwrap().to_string();
    assert!(location.contains("notice_ok=1") && location.contains("1.27"), "{location}");

    let html = page(&f, &location).await;
    let cell = |id: &str| {
        let start = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no {id}"));
        let text = &html[start..];
        let inner = &text[text.find('>').unwrap() + 1..text.find("</td>").unwrap()];
        // The text as a reader sees it: without hydration markers such as `<!>`.
        inner
            .split('<')
            .enumerate()
            .map(|(i, part)| if i == 0 { part } else { part.split_once('>').map_or("", |(_, t)| t) })
            .collect::<String>()
    };
    assert_eq!(cell("tk-cost-hour"), "1.27");
    assert_eq!(cell("tk-cost-mtok"), "0.044");
    assert_eq!(cell("tk-break-even"), "43.6 %");

    let mut bad = form;
    bad[3] = ("pue", "lots");
    let response = post_form(&f, &bad).await;
    let location = response.headers()[header::LOCATION].to_str().unwrap().to_string();
    assert!(location.contains("notice_ok=0") && location.contains("pue"), "{location}");
}
