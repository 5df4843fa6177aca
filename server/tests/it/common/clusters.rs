//! Several clusters, as the tests of issue 49 set them up: a cluster added
//! through the API as an admin, and a pool on it.

use super::Fixture;
use axum::http::Method;
use serde_json::{json, Value};
use uuid::Uuid;

impl Fixture {
    /// Adds cluster `name` reached as `access`, then the pool `pool` (the
    /// API's body, without its cluster) on it; the pool's id.
    pub async fn pool_on_new_cluster(&self, name: &str, access: &str, mut pool: Value) -> Uuid {
        let body = json!({"name": name, "access": access});
        let (status, cluster) = self.call(Method::POST, "/api/v1/clusters", Some(&self.admin), Some(body)).await;
        assert_eq!(status, 201, "{cluster}");
        pool["cluster"] = json!(name);
        let (status, pool) = self.call(Method::POST, "/api/v1/pools", Some(&self.admin), Some(pool)).await;
        assert_eq!(status, 201, "{pool}");
        pool["id"].as_str().unwrap().parse().unwrap()
    }

    /// A booking's state, as the database has it now.
    pub async fn booking_state(&self, id: Uuid) -> String {
        sqlx::query_scalar("SELECT state::text FROM booking WHERE id = $1").bind(id).fetch_one(&self.db).await.unwrap()
    }
}
