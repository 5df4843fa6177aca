//! Several clusters, as the tests of issue 49 set them up: a cluster added
//! through the API as an admin, and a pool on it; and a member cluster's
//! worker signed in to the database as its own role (issue 60).

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

    /// A new login role made `cluster`'s worker (`berth member-role`), and
    /// its URL to this fixture's database (the test server trusts local
    /// logins). Roles are the server's, so each is unique to its test.
    pub async fn member_role(&self, cluster: &str) -> (String, String) {
        let role = format!("berth_member_{}", &Uuid::new_v4().simple().to_string()[..12]);
        sqlx::query(&format!("CREATE ROLE {role} LOGIN")).execute(&self.db).await.unwrap();
        server::member_role::grant(&self.db, cluster, &role).await.unwrap();
        let database: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&self.db).await.unwrap();
        let mut url: url::Url = std::env::var("DATABASE_URL").unwrap().parse().unwrap();
        url.set_username(&role).unwrap();
        url.set_path(&database);
        (role, url.to_string())
    }
}

/// A database signed in as `Fixture::member_role`'s URL.
pub async fn signed_in(url: &str) -> sqlx::PgPool {
    sqlx::postgres::PgPoolOptions::new().max_connections(8).connect(url).await.unwrap()
}
