//! "What is free then" (issue 48): a window first, then every kind of the
//! pools the person may book that is free for all of it, or for its longest
//! part at least as long as asked, and from when.

use crate::common;

use app::backend::accounts::tokens;
use app::backend::calendar::free_then;
use app::model::FreeThenForm;
use common::{slot, Fixture, GPU, MIG};

fn local(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M").to_string()
}

#[tokio::test]
async fn a_window_lists_what_is_free_for_all_of_it_and_for_its_longest_part() {
    let f = Fixture::new().await;
    // Every slice is taken for the window's second and third hour.
    let (status, body) = f.book(&f.carol, MIG, 4, slot(100 + 4), slot(100 + 12)).await;
    assert_eq!(status, 201, "{body}");
    let ada = tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let form = |at_least: &str, memory: &str| FreeThenForm {
        from: local(slot(100)),
        to: local(slot(100 + 20)),
        at_least: at_least.into(),
        units: "1".into(),
        memory_gb: memory.into(),
    };
    let page = free_then::page(&f.db, &ada, form("120", ""), "UTC").await.unwrap();
    let rows = page.rows.unwrap().unwrap();
    let row = |kind: &str| rows.iter().find(|r| r.kind == kind).cloned();
    let gpu = row(GPU).expect("the whole GPU is free");
    assert!(gpu.whole && gpu.window.start == slot(100) && gpu.window.end == slot(120), "{gpu:?}");
    let mig = row(MIG).expect("a slice is free after the third hour");
    assert!(!mig.whole, "{mig:?}");
    assert_eq!((mig.window.start, mig.window.end), (slot(112), slot(120)), "the longest free part: 2 h");
    assert_eq!(rows[0].kind, GPU, "whole windows first");

    // Parts shorter than asked are left out; a memory need leaves out small kinds.
    let longer = free_then::page(&f.db, &ada, form("180", ""), "UTC").await.unwrap().rows.unwrap().unwrap();
    assert!(longer.iter().all(|r| r.kind != MIG), "{longer:?}");
    let big = free_then::page(&f.db, &ada, form("60", "48"), "UTC").await.unwrap().rows.unwrap().unwrap();
    assert!(big.iter().all(|r| r.kind == GPU), "{big:?}");

    // A pool of another tenant's is never offered.
    let body = serde_json::json!({"name": "team-b-only", "tenants": ["team-b"],
        "kinds": [{"kind": GPU, "capacity": 2, "vram_gb_per_unit": 48}]});
    let (status, made) = f.call(axum::http::Method::POST, "/api/v1/pools", Some(&f.admin), Some(body)).await;
    assert_eq!(status, 201, "{made}");
    let seen = free_then::page(&f.db, &ada, form("60", ""), "UTC").await.unwrap().rows.unwrap().unwrap();
    assert!(seen.iter().all(|r| r.pool != "team-b-only"), "{seen:?}");
    let bob = tokens::authenticate(&f.db, &f.bob).await.unwrap().unwrap();
    let theirs = free_then::page(&f.db, &bob, form("60", ""), "UTC").await.unwrap().rows.unwrap().unwrap();
    assert!(theirs.iter().any(|r| r.pool == "team-b-only"), "{theirs:?}");

    // Beyond the pool's horizon nothing is offered: it could not be booked.
    let far = FreeThenForm {
        from: local(slot(100) + chrono::Duration::days(60)),
        to: local(slot(120) + chrono::Duration::days(60)),
        ..form("60", "")
    };
    let none = free_then::page(&f.db, &ada, far, "UTC").await.unwrap().rows.unwrap().unwrap();
    assert!(none.is_empty(), "{none:?}");

    // Bad input names its field (the page shows the sentence beside it) and
    // says why in words.
    let bad = FreeThenForm { to: local(slot(99)), ..form("60", "") };
    let refused = free_then::page(&f.db, &ada, bad, "UTC").await.unwrap().rows.unwrap().unwrap_err();
    assert_eq!((refused.field.as_deref(), refused.sentence.as_str()), (Some("to"), "To must be after From."));
    let words = FreeThenForm { units: "two".into(), ..form("60", "") };
    let refused = free_then::page(&f.db, &ada, words, "UTC").await.unwrap().rows.unwrap().unwrap_err();
    assert_eq!((refused.field.as_deref(), refused.sentence.as_str()), (Some("units"), "Units must be a whole number."));
}
