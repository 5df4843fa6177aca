//! Readiness follows the database and its migrations; replicas starting
//! together migrate once (sqlx's migrator holds a PostgreSQL advisory lock).

use crate::common;

use app::backend::MIGRATOR;
use common::{call, fresh_db, test_state};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use uuid::Uuid;

async fn empty_database() -> sqlx::PgPool {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let options: PgConnectOptions = url.parse().unwrap();
    let admin = PgPoolOptions::new().max_connections(1).connect_with(options.clone()).await.unwrap();
    let name = format!("berth_test_{}", Uuid::new_v4().simple());
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
    PgPoolOptions::new().max_connections(16).connect_with(options.database(&name)).await.unwrap()
}

#[tokio::test]
async fn readyz_waits_for_every_migration_and_healthz_does_not() {
    let db = empty_database().await;
    let app = server::router(test_state(db.clone()));
    let status = |path: &'static str| {
        let app = app.clone();
        async move { call(&app, axum::http::Method::GET, path, None, None).await.0 }
    };
    assert_eq!(status("/readyz").await, 503, "nothing migrated");
    assert_eq!(status("/healthz").await, 200, "liveness ignores the database");
    MIGRATOR.run(&db).await.unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)")
        .execute(&db)
        .await
        .unwrap();
    assert_eq!(status("/readyz").await, 503, "the newest migration is missing (an older schema)");
    let migrated = fresh_db().await;
    let app = server::router(test_state(migrated));
    assert_eq!(call(&app, axum::http::Method::GET, "/readyz", None, None).await.0, 200);
}

#[tokio::test]
async fn eight_replicas_starting_together_apply_each_migration_once() {
    let db = empty_database().await;
    let runs = (0..8).map(|_| {
        let db = db.clone();
        tokio::spawn(async move { MIGRATOR.run(&db).await })
    });
    for run in futures::future::join_all(runs).await {
        run.unwrap().expect("every replica's migration run succeeds");
    }
    let applied: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT version, count(*) FROM _sqlx_migrations WHERE success GROUP BY version ORDER BY version",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(applied.len(), MIGRATOR.iter().count(), "every migration applied");
    assert!(applied.iter().all(|(_, n)| *n == 1), "{applied:?}");
}
