//! How a verified login becomes a user: found by issuer + subject, linked to
//! a user an admin pre-created by email, never merged into another identity.

use crate::common;

use app::backend::accounts::users::FederatedLogin;
use app::backend::{accounts::principals, accounts::users};
use app::model::Role;
use common::fresh_db;

fn login(subject: &str, email: &str, role: Role, tenants: &[&str]) -> FederatedLogin {
    FederatedLogin {
        issuer: "https://id.example.org".into(),
        subject: subject.into(),
        email: email.into(),
        email_verified: true,
        cluster_username: Some(email.into()),
        name: format!("User {subject}"),
        role,
        tenant_slugs: tenants.iter().map(|t| t.to_string()).collect(),
    }
}

#[tokio::test]
async fn a_changed_email_updates_the_same_user_and_groups_replace_group_tenants() {
    let db = fresh_db().await;
    let first = users::record_login(&db, &login("s-1", "old@x.test", Role::Admin, &["a", "b"])).await.unwrap();
    let again = users::record_login(&db, &login("s-1", "new@x.test", Role::User, &["b", "c"])).await.unwrap();
    assert_eq!(first, again, "issuer + subject identify the user");
    let me = principals::by_user_id(&db, first).await.unwrap().unwrap();
    assert_eq!(me.email, "new@x.test");
    assert_eq!(me.role, Role::User, "the role follows the groups at every login");
    let slugs: Vec<&str> = me.tenants.iter().map(|t| t.slug.as_str()).collect();
    assert_eq!(slugs, ["b", "c"]);
}

#[tokio::test]
async fn a_pre_created_user_is_linked_once_and_another_identity_cannot_take_their_email() {
    let db = fresh_db().await;
    let local = users::upsert_user(&db, "ada@x.test", "Ada", Role::User, "lab").await.unwrap();
    let linked = users::record_login(&db, &login("s-ada", "ada@x.test", Role::User, &["a"])).await.unwrap();
    assert_eq!(local, linked, "the admin's user gets the identity on first login");
    let me = principals::by_user_id(&db, linked).await.unwrap().unwrap();
    let slugs: Vec<&str> = me.tenants.iter().map(|t| t.slug.as_str()).collect();
    assert_eq!(slugs, ["a", "lab"], "the hand-made membership stays beside the group's");

    let intruder = users::record_login(&db, &login("s-other", "ada@x.test", Role::Admin, &[])).await;
    let err = intruder.expect_err("a second identity with the same email is refused");
    assert_eq!(err.status(), 409);
    assert!(err.public_message().contains("ask your admin"), "{}", err.public_message());
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user").fetch_one(&db).await.unwrap();
    assert_eq!(count, 1);
    let role: String = sqlx::query_scalar("SELECT role FROM app_user").fetch_one(&db).await.unwrap();
    assert_eq!(role, "user", "nothing of the refused login was written");
}

#[tokio::test]
async fn an_unverified_address_never_links_to_a_pre_created_user() {
    let db = fresh_db().await;
    let local = users::upsert_user(&db, "boss@x.test", "Boss", Role::Admin, "lab").await.unwrap();
    let mut claim = login("s-eve", "boss@x.test", Role::User, &["a"]);
    claim.email_verified = false;
    let err = users::record_login(&db, &claim).await.unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(err.public_message().contains("not verified"), "{}", err.public_message());
    let linked: Option<String> =
        sqlx::query_scalar("SELECT oidc_subject FROM app_user WHERE id = $1").bind(local).fetch_one(&db).await.unwrap();
    assert_eq!(linked, None, "the admin's account keeps no foreign identity");
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user").fetch_one(&db).await.unwrap();
    assert_eq!(users, 1, "and no second account appeared");

    // An unverified address nobody uses yet makes a fresh account, linked to nothing else.
    let mut fresh = login("s-new", "new@x.test", Role::User, &["a"]);
    fresh.email_verified = false;
    let new = users::record_login(&db, &fresh).await.unwrap();
    assert_ne!(new, local);
}

#[tokio::test]
async fn a_disabled_user_cannot_sign_in_again_until_enabled() {
    let db = fresh_db().await;
    let admin_id = users::upsert_user(&db, "root@x.test", "Root", Role::Admin, "ops").await.unwrap();
    let admin = principals::by_user_id(&db, admin_id).await.unwrap().unwrap();
    let ada = users::record_login(&db, &login("s-ada", "ada@x.test", Role::User, &["a"])).await.unwrap();
    let cache = app::backend::accounts::tokens::TokenCache::new(std::time::Duration::from_secs(10));
    let summary = app::backend::accounts::disable::disable(&db, &cache, &admin, ada, "left the lab").await.unwrap();
    assert_eq!(summary.disabled.as_deref(), Some("left the lab"));
    let err = users::record_login(&db, &login("s-ada", "ada@x.test", Role::User, &["a"])).await.unwrap_err();
    assert_eq!((err.status(), err.public_message()), (403, "this account has been disabled by a Berth admin".into()));
    assert!(principals::by_user_id(&db, ada).await.unwrap().is_none(), "no principal while disabled");
    let refused = app::backend::accounts::disable::disable(&db, &cache, &admin, admin_id, "oops").await.unwrap_err();
    assert_eq!(refused.status(), 409, "admins cannot lock themselves out");
    let blank = app::backend::accounts::disable::disable(&db, &cache, &admin, ada, "  ").await.unwrap_err();
    assert_eq!(blank.status(), 422);
    app::backend::accounts::disable::enable(&db, &admin, ada).await.unwrap();
    assert_eq!(users::record_login(&db, &login("s-ada", "ada@x.test", Role::User, &["a"])).await.unwrap(), ada);
}
