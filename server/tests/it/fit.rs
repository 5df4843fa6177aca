//! `GET /api/v1/fit` (issue 48): the memory a run needs, with its
//! arithmetic, and which kind of the pools the caller may book holds it —
//! over HTTP, as the booking form and `berth fit` ask it.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Fixture, GPU, MIG};
use serde_json::json;

#[tokio::test]
async fn an_8b_model_at_8k_with_4_sequences_does_not_fit_the_24_gb_slice_but_fits_the_whole_gpu() {
    let f = Fixture::new().await;
    let (status, answer) =
        f.call(Method::GET, "/api/v1/fit?model=llama-3.1-8b&context=8192&sequences=4", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let total = answer["estimate"]["total_gb"].as_f64().unwrap();
    assert!((total - 24.4).abs() < 0.1, "{answer}");
    assert!(answer["estimate"]["arithmetic"][0].as_str().unwrap().starts_with("weights = 8.03B parameters × 2 bytes"));
    let kind = |name: &str| answer["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == name).cloned().unwrap();
    assert_eq!(kind(MIG)["units"], serde_json::Value::Null, "{answer}");
    assert_eq!(kind(GPU)["units"], 1, "{answer}");
    assert_eq!(answer["kinds"][0]["kind"], GPU, "the one that holds it first");
    assert!(answer["verdict"].as_str().unwrap().starts_with("Needs about 24 GB: 1 × nvidia.com/gpu on lab-h100"));

    // The same model with one sequence at 4k fits the slice, which is then the smallest.
    let (_, small) = f.call(Method::GET, "/api/v1/fit?model=llama-3.1-8b&context=4096", Some(&f.ada), None).await;
    assert_eq!(small["kinds"][0]["kind"], MIG, "{small}");
}

#[tokio::test]
async fn only_pools_the_caller_may_book_are_offered() {
    let f = Fixture::new().await;
    let body = json!({"name": "team-b-only", "gpu_model": "NVIDIA L40S", "tenants": ["team-b"],
        "kinds": [{"kind": GPU, "capacity": 2, "vram_gb_per_unit": 48}]});
    let (status, made) = f.call(Method::POST, "/api/v1/pools", Some(&f.admin), Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let pools = |answer: &serde_json::Value| -> Vec<String> {
        answer["kinds"].as_array().unwrap().iter().map(|k| k["pool"].as_str().unwrap().to_string()).collect()
    };
    let (_, ada) = f.call(Method::GET, "/api/v1/fit?model=qwen2.5-7b", Some(&f.ada), None).await;
    assert!(!pools(&ada).contains(&"team-b-only".to_string()), "ada is in team-a: {ada}");
    let (_, bob) = f.call(Method::GET, "/api/v1/fit?model=qwen2.5-7b", Some(&f.bob), None).await;
    assert!(pools(&bob).contains(&"team-b-only".to_string()), "{bob}");
}

#[tokio::test]
async fn a_question_that_cannot_be_answered_is_422_naming_the_field() {
    let f = Fixture::new().await;
    for (query, field) in [
        ("precision=fp4&model=qwen3-8b", "precision"),
        ("model=gpt-5", "model"),
        ("workload=pretraining&model=qwen3-8b", "workload"),
        ("params_b=13", "layers"),
        ("params_b=NaN&workload=full", "params_b"),
        ("model=qwen3-8b&context=0", "context"),
        ("model=qwen3-8b&context=lots", "context"),
        ("model=qwen3-8b&sequences=-1", "sequences"),
        ("", "params_b"),
    ] {
        let (status, err) = f.call(Method::GET, &format!("/api/v1/fit?{query}"), Some(&f.ada), None).await;
        assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(field)), "{query}: {err}");
    }
    let (status, _) = f.call(Method::GET, "/api/v1/fit?model=qwen3-8b", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
