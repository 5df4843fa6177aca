//! Single sign-on against a real OpenID provider (npm `oidc-provider`) on
//! 127.0.0.1: logins that must work, logins that must be refused (each ends
//! on an error page and never in a session), sessions, and key rotation.

use crate::common;

use common::fresh_db;
use common::provider::{get_json, http_client, me_with_cookie, Browser, Portal};
use serde_json::json;

async fn portal() -> Portal {
    Portal::start(fresh_db().await, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_maps_groups_to_role_and_tenants_under_a_new_session_id() {
    let portal = portal().await;
    let browser = portal.browser();
    let callback = browser.sign_in_at_provider("mia", None).await;
    let before = browser.session_cookie().expect("the login's session exists before the callback");
    let landing = browser.deliver(&callback).await;
    assert_eq!(landing.status(), 200);
    assert_eq!(landing.url().path(), "/");
    let page = landing.text().await.unwrap();
    assert!(page.contains("Mia Manager"), "the page greets the user by name");

    let after = browser.session_cookie().unwrap();
    assert_ne!(before, after, "the session id changes at login (no fixation)");
    assert_eq!(me_with_cookie(&portal.url, &before).await, 401, "the pre-login id is worthless");
    assert_eq!(me_with_cookie(&portal.url, &after).await, 200);

    let (status, me) = browser.me().await;
    assert_eq!(status, 200);
    assert_eq!(me["email"], "mia@example.test");
    assert_eq!(me["name"], "Mia Manager");
    assert_eq!(me["role"], "manager");
    assert_eq!(me["tenants"].as_array().unwrap().iter().map(|t| t["slug"].clone()).collect::<Vec<_>>(), [json!("a")]);
}

/// A login whose groups take a role away takes it from the person's API
/// tokens too, at once: their cached rights are forgotten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_that_takes_a_role_away_takes_it_from_the_persons_tokens_at_once() {
    let portal = portal().await;
    assert_eq!(portal.browser().login("mia").await.status(), 200);
    // As if an earlier login (or an operator) had made her an admin.
    let mia: uuid::Uuid =
        sqlx::query_scalar("UPDATE app_user SET role = 'admin' WHERE email = 'mia@example.test' RETURNING id")
            .fetch_one(&portal.db)
            .await
            .unwrap();
    let token = app::backend::accounts::tokens::issue(
        &portal.db,
        mia,
        "script",
        chrono::Duration::days(1),
        app::model::TokenScope::Full,
    )
    .await
    .unwrap()
    .token;
    let role = || async { get_json(&format!("{}/api/v1/me", portal.url), Some(&token)).await["role"].clone() };
    assert_eq!(role().await, "admin", "read once, and remembered for a few seconds");
    // Her groups at the provider make her a manager.
    assert_eq!(portal.browser().login("mia").await.status(), 200);
    assert_eq!(role().await, "manager", "her token lost the role with her login");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_are_known_by_issuer_and_subject_and_keep_hand_assigned_tenants() {
    let portal = portal().await;
    let browser = portal.browser();
    assert_eq!(browser.login("ada").await.status(), 200);
    let (_, me) = browser.me().await;
    let ada: uuid::Uuid = me["user_id"].as_str().unwrap().parse().unwrap();

    // An admin adds ada to another tenant by hand; her next login keeps it.
    let admin = app::backend::accounts::principals::by_user_id(&portal.db, {
        let root = portal.browser();
        root.login("root").await;
        root.me().await.1["user_id"].as_str().unwrap().parse().unwrap()
    })
    .await
    .unwrap()
    .unwrap();
    // Only to an existing tenant: a slug that names none is refused, and
    // no tenant is made of it.
    let refused = app::backend::accounts::users::assign_tenant(&portal.db, &admin, ada, "shared").await.unwrap_err();
    assert_eq!(refused.field_error().map(|e| e.field), Some("tenant".to_string()), "{refused:?}");
    app::backend::accounts::users::ensure_tenant(&portal.db, "shared", "Shared").await.unwrap();
    app::backend::accounts::users::assign_tenant(&portal.db, &admin, ada, "shared").await.unwrap();

    let again = portal.browser();
    assert_eq!(again.login("ada").await.status(), 200);
    let (_, me) = again.me().await;
    assert_eq!(me["user_id"].as_str().unwrap(), ada.to_string(), "the same user, found by issuer + subject");
    let slugs: Vec<&str> = me["tenants"].as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["a", "shared"]);
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user").fetch_one(&portal.db).await.unwrap();
    assert_eq!(users, 2, "ada and root, no duplicates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admins_get_admin_navigation_and_tenantless_users_are_asked_to_see_an_admin() {
    let portal = portal().await;
    let root = portal.browser();
    let page = root.login("root").await.text().await.unwrap();
    assert!(page.contains("id=\"admin-nav\""), "admin navigation for admins");
    assert_eq!(root.me().await.1["role"], "admin");

    let ada = portal.browser();
    let page = ada.login("ada").await.text().await.unwrap();
    assert!(!page.contains("id=\"admin-nav\""), "no admin navigation for users");

    let nobody = portal.browser();
    let landing = nobody.login("nobody").await;
    assert_eq!(landing.status(), 200);
    let page = landing.text().await.unwrap();
    assert!(page.contains("id=\"ask-your-admin\""), "a clear page instead of an error: {page}");
    assert!(!page.contains("Could not load"), "no error on the page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_returns_to_a_local_next_path_only() {
    let portal = portal().await;
    let browser = portal.browser();
    let callback = browser.sign_in_at_provider("ada", Some("/tokens")).await;
    assert_eq!(browser.deliver(&callback).await.url().path(), "/tokens");
    let elsewhere = portal.browser();
    let callback = elsewhere.sign_in_at_provider("ada", Some("//evil.test/x")).await;
    let landing = elsewhere.deliver(&callback).await;
    assert_eq!(landing.url().as_str(), format!("{}/", portal.url));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_ends_the_session_and_the_providers_too() {
    let portal = portal().await;
    let browser = portal.browser();
    browser.login("ada").await;
    let cookie = browser.session_cookie().unwrap();
    let no_follow = http_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let out = no_follow
        .post(format!("{}/auth/logout", portal.url))
        .header("cookie", format!("berth_session={cookie}"))
        .header("origin", &portal.url)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303);
    let to = out.headers()["location"].to_str().unwrap();
    let issuer = portal.provider.as_ref().unwrap().issuer();
    assert!(to.starts_with(&format!("{issuer}/session/end?")), "on to the provider's end-session endpoint: {to}");
    assert!(to.contains("id_token_hint=") && to.contains("post_logout_redirect_uri="), "{to}");
    assert_eq!(me_with_cookie(&portal.url, &cookie).await, 401, "a cookie from before logout no longer works");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_or_missing_state_is_refused() {
    let portal = portal().await;
    let browser = portal.browser();
    let callback = browser.sign_in_at_provider("ada", None).await;
    let url = url::Url::parse(&callback).unwrap();
    let state: String = url.query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();

    let wrong = callback.replace(&format!("state={state}"), "state=forged");
    let refused = browser.deliver(&wrong).await;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("state"), "the page says why");
    assert_eq!(browser.me().await.0, 401, "no session");
    // The attempt is spent: the genuine callback cannot be used after a forged one.
    assert_eq!(browser.deliver(&callback).await.status(), 400);
    assert_eq!(browser.me().await.0, 401);

    let again = browser.sign_in_at_provider("ada", None).await;
    let missing = again.replace(&format!("state={}", state_of(&again)), "");
    assert_eq!(browser.deliver(&missing).await.status(), 400);
    assert_eq!(browser.me().await.0, 401);
}

fn state_of(callback: &str) -> String {
    url::Url::parse(callback).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_authorization_code_is_refused() {
    let portal = portal().await;
    let victim = portal.browser();
    let first = victim.sign_in_at_provider("ada", None).await;
    assert_eq!(victim.deliver(&first).await.status(), 200);

    // Same browser, a fresh login attempt (so the state matches), but the old code.
    let attacker = portal.browser();
    let fresh = attacker.sign_in_at_provider("bob", None).await;
    let old_code = url::Url::parse(&first).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let new_code = url::Url::parse(&fresh).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let replay = fresh.replace(&new_code, &old_code);
    let refused = attacker.deliver(&replay).await;
    assert_eq!(refused.status(), 401, "the provider refuses a used code");
    assert_eq!(attacker.me().await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_id_tokens_are_refused() {
    let db = fresh_db().await;
    let forgeries = [
        ("aud", "Invalid audiences"),
        ("iss", "Invalid issuer"),
        ("signature", "Signature verification failed: Crypto error"),
        ("none", "Signature verification failed: No signature found"),
        ("nonce", "nonce mismatch"),
        ("no-nonce", "missing nonce claim"),
        ("expired", "ID token expired"),
        // An unknown kid, with one and with three keys published: refused after the
        // portal fetched the keys again (in case the provider rotated them).
        ("kid", "Signature verification failed: No matching key found"),
        ("kid-many", "Signature verification failed: No matching key found"),
        ("no-kid-many", "JWK set must only contain one eligible public key"),
    ];
    let mut refused_for_the_reason = 0;
    for (forge, reason) in forgeries {
        let portal = Portal::start(db.clone(), Some(forge)).await;
        let browser = portal.browser();
        let refused = browser.login("ada").await;
        assert_eq!(refused.status(), 401, "forged {forge}");
        let page = refused.text().await.unwrap();
        assert!(page.contains("Sign-in failed"), "forged {forge}: an error page");
        assert!(page.contains(reason), "forged {forge}: refused because {reason}: {page}");
        assert_eq!(browser.me().await.0, 401, "forged {forge}: no session");
        refused_for_the_reason += 1;
    }
    // The reliability table's row: refused for their reason / tried.
    println!("OIDC forgeries refused for their reason: {refused_for_the_reason} / {}", forgeries.len());
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user").fetch_one(&db).await.unwrap();
    assert_eq!(users, 0, "no forged login created a user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_document_naming_another_issuer_is_refused() {
    let db = fresh_db().await;
    let portal = Portal::start(db.clone(), Some("discovery-issuer")).await;
    let client = http_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let answer = client.get(format!("{}/auth/login", portal.url)).send().await.unwrap();
    assert_eq!(answer.status(), 502, "no redirect to a provider whose discovery names another issuer");
    let page = answer.text().await.unwrap();
    assert!(page.contains("Sign-in failed") && page.contains("answered unexpectedly"), "{page}");
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM app_user").fetch_one(&db).await.unwrap();
    assert_eq!(users, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_keep_working_when_the_provider_rotates_its_keys() {
    let mut portal = portal().await;
    assert_eq!(portal.browser().login("ada").await.status(), 200);
    portal.rotate_provider_keys().await;
    let browser = portal.browser();
    let landing = browser.login("ada").await;
    assert_eq!(landing.status(), 200, "the new key is fetched when a token names it");
    assert_eq!(browser.me().await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_end_after_their_absolute_lifetime() {
    let portal = Portal::start_with(fresh_db().await, None, |config| {
        config.absolute_lifetime = std::time::Duration::from_secs(1);
    })
    .await;
    let browser = portal.browser();
    browser.login("ada").await;
    assert_eq!(browser.me().await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(browser.me().await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookies_are_http_only_and_same_site_lax() {
    let portal = portal().await;
    let browser = Browser::new(&portal.url);
    let response = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/auth/login", portal.url))
        .send()
        .await
        .unwrap();
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("berth_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain http here; https public URLs get Secure: {cookie}");
    drop(browser);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unverified_email_cannot_take_over_an_account_an_admin_created() {
    let portal = portal().await;
    let victim = app::backend::accounts::users::upsert_user(
        &portal.db,
        "victim@example.test",
        "Victim",
        app::model::Role::Admin,
        "ops",
    )
    .await
    .unwrap();
    let eve = portal.browser();
    let page = eve.login("eve").await;
    assert_eq!(page.status(), 403);
    let text = page.text().await.unwrap();
    assert!(text.contains("has not verified"), "a clear page says why: {text}");
    assert_eq!(eve.me().await.0, 401, "no session came of it");
    let linked: Option<String> = sqlx::query_scalar("SELECT oidc_subject FROM app_user WHERE id = $1")
        .bind(victim)
        .fetch_one(&portal.db)
        .await
        .unwrap();
    assert_eq!(linked, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_binds_a_verified_name_never_an_unverified_email() {
    let portal = portal().await;
    let cluster_name = |email: &'static str| {
        let db = portal.db.clone();
        async move {
            sqlx::query_scalar::<_, Option<String>>("SELECT cluster_username FROM app_user WHERE email = $1")
                .bind(email)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    assert_eq!(portal.browser().login("ada").await.status(), 200);
    assert_eq!(cluster_name("ada@example.test").await.as_deref(), Some("ada@example.test"));
    // Eve's provider vouches for nothing: she may use the portal, but no
    // session of hers binds the address she claims on the cluster.
    assert_eq!(portal.browser().login("eve").await.status(), 200);
    assert_eq!(cluster_name("victim@example.test").await, None);
    let (owner,): (Option<String>,) =
        sqlx::query_as("SELECT cluster_user(u) FROM app_user u WHERE email = 'victim@example.test'")
            .fetch_one(&portal.db)
            .await
            .unwrap();
    assert_eq!(owner, None, "what the worker would bind for her");
}
