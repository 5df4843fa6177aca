//! The demo seed and API tokens as the command line uses them.

use crate::common;

use app::backend::{accounts::tokens, accounts::users};
use app::model::Role;
use chrono::Duration;
use common::fresh_db;

#[tokio::test]
async fn seeding_twice_leaves_one_demo_pool_like_the_reference_lab() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    let again = server::seed::demo(&db).await.unwrap();
    assert!(again.contains("already exists"));
    let kinds: Vec<(String, i32, i32, i32)> =
        sqlx::query_as("SELECT kind, capacity, replicas_per_unit, vram_gb_per_unit FROM pool_kind ORDER BY kind")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(kinds, [("nvidia.com/gpu".to_string(), 1, 4, 96), ("nvidia.com/mig-1g.24gb".to_string(), 4, 2, 24)]);
}

#[tokio::test]
async fn tokens_are_stored_hashed_and_stop_at_expiry() {
    let db = fresh_db().await;
    let user = users::upsert_user(&db, "t@x.test", "T", Role::User, "x").await.unwrap();
    let issued = tokens::issue(&db, user, "cli", Duration::days(30)).await.unwrap();
    assert!(issued.token.starts_with("berth_") && issued.token.len() == 70);
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM api_token").fetch_one(&db).await.unwrap();
    assert_eq!(stored.len(), 32);
    assert!(!String::from_utf8_lossy(&stored).contains(&issued.token[6..]));
    let principal = tokens::authenticate(&db, &issued.token).await.unwrap().expect("live token");
    assert_eq!(principal.email, "t@x.test");
    assert_eq!(principal.tenants[0].slug, "x");
    sqlx::query("UPDATE api_token SET expires_at = now()").execute(&db).await.unwrap();
    assert!(tokens::authenticate(&db, &issued.token).await.unwrap().is_none());
    let bad_tenant = users::upsert_user(&db, "u@x.test", "U", Role::User, "Not A Slug").await;
    assert!(matches!(bad_tenant, Err(app::backend::ServiceError::Invalid(f)) if f.field == "tenant"));
}

#[tokio::test]
async fn the_token_cache_remembers_a_principal_for_its_ttl_only() {
    let db = fresh_db().await;
    let user = users::upsert_user(&db, "c@x.test", "C", Role::User, "x").await.unwrap();
    let issued = tokens::issue(&db, user, "cli", Duration::days(1)).await.unwrap();
    let cache = tokens::TokenCache::new(std::time::Duration::from_millis(300));
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_some());
    sqlx::query("UPDATE api_token SET revoked_at = now()").execute(&db).await.unwrap();
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_some(), "still remembered");
    tokio::time::sleep(std::time::Duration::from_millis(350)).await;
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_none(), "revocation took effect after the ttl");
    assert!(cache.authenticate(&db, "berth_unknown").await.unwrap().is_none());
    assert!(cache.authenticate(&db, "other").await.unwrap().is_none());
}
