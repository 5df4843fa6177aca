//! `/mcp` as an OAuth resource server: an assistant signs its person in at
//! the real OpenID provider (npm `oidc-provider`, PKCE, a resource
//! indicator for `/mcp`) and calls the tools with the access token, with
//! the rights of its scope; every other token the provider could hand out
//! is refused.

use crate::common::provider::{get_json, http_client, Browser, Portal};
use crate::common::{fresh_db, mcp_client, slot, GPU};
use openidconnect::PkceCodeChallenge;
use serde_json::{json, Value};

/// The assistant's sign-in as `login` at the provider: an authorization
/// code for `resource` with `scope`, exchanged for the token response.
async fn assistant_tokens(portal: &Portal, login: &str, resource: &str, scope: &str) -> Value {
    let issuer = portal.provider.as_ref().unwrap().issuer();
    let browser = Browser::new(&portal.url);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let redirect = "http://127.0.0.1:1/auth/callback";
    let mut ask = url::Url::parse(&format!("{issuer}/auth")).unwrap();
    ask.query_pairs_mut()
        .append_pair("client_id", "assistant")
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", redirect)
        .append_pair("scope", &format!("openid {scope}"))
        .append_pair("resource", resource)
        .append_pair("code_challenge", challenge.as_str())
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "assistant-state");
    let page = browser.client.get(ask).send().await.unwrap();
    assert_eq!(page.status(), 200, "the provider's login page");
    let form = page.url().clone();
    let answer =
        browser.client.post(form).form(&[("prompt", "login"), ("login", login), ("password", "any")]).send().await;
    let answer = answer.unwrap();
    assert!(answer.status().is_redirection(), "stopped before the callback: {}", answer.status());
    let back = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let code = back.query_pairs().find(|(k, _)| k == "code").map(|(_, v)| v.to_string());
    let code = code.unwrap_or_else(|| panic!("no code in {back}"));
    let tokens = http_client()
        .build()
        .unwrap()
        .post(format!("{issuer}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", redirect),
            ("client_id", "assistant"),
            ("code_verifier", verifier.secret()),
            ("resource", resource),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(tokens.status(), 200, "the token endpoint");
    tokens.json().await.unwrap()
}

/// `tools/list` at `/mcp` with `bearer`: the HTTP status.
async fn list_with(portal: &Portal, bearer: &str) -> u16 {
    let response = http_client()
        .build()
        .unwrap()
        .post(format!("{}/mcp", portal.url))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_books_with_the_providers_access_token_for_mcp_and_no_other_token_gets_in() {
    let portal = Portal::start(fresh_db().await, None).await;
    let mcp = format!("{}/mcp", portal.url);
    // Ada and the admin have signed in to the portal once; the admin makes a pool for ada's tenant.
    for who in ["ada", "root"] {
        assert_eq!(portal.browser().login(who).await.status(), 200);
    }
    let root = app::backend::accounts::principals::by_provider_subject(
        &portal.db,
        &portal.provider.as_ref().unwrap().issuer(),
        "root",
    )
    .await
    .unwrap()
    .expect("root signed in");
    let spec =
        serde_json::from_value(json!({"name": "lab", "tenants": ["a"], "kinds": [{"kind": GPU, "capacity": 1}]}));
    let pool = app::backend::pools::create(&portal.db, &root, spec.unwrap()).await.unwrap();

    // The metadata names the provider as the issuer of tokens for /mcp.
    let metadata = get_json(&format!("{}/.well-known/oauth-protected-resource/mcp", portal.url), None).await;
    assert_eq!(metadata["resource"], mcp);
    assert_eq!(metadata["authorization_servers"], json!([portal.provider.as_ref().unwrap().issuer()]));

    let tokens = assistant_tokens(&portal, "ada", &mcp, "book").await;
    let access = tokens["access_token"].as_str().unwrap();
    let (start, end) = (slot(8), slot(12));
    let seen = mcp_client(json!({
        "url": mcp, "token": access, "client": "goose",
        "calls": [
            {"tool": "book", "arguments": {"pool_id": pool.id, "kind": GPU, "quantity": 1, "start": start,
                                           "end": end, "mode": "interactive"}},
            {"tool": "my_bookings"},
        ],
    }))
    .await;
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    let id = calls[0]["structured"]["id"].as_str().unwrap().to_string();
    assert!(calls[1]["structured"]["bookings"].as_array().unwrap().iter().any(|b| b["id"] == id.as_str()));
    // Booked as ada, by the client, with no API token.
    let (owner, token, client): (String, Option<uuid::Uuid>, String) = sqlx::query_as(
        "SELECT u.email, e.token_id, e.client FROM booking b JOIN app_user u ON u.id = b.user_id
         JOIN booking_event e ON e.booking_id = b.id AND e.from_state IS NULL WHERE b.id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&portal.db)
    .await
    .unwrap();
    assert_eq!((owner.as_str(), token, client.as_str()), ("ada@example.test", None, "goose 1.0"));
    // Its scope is book: cancelling is beyond it.
    let seen = mcp_client(json!({"url": mcp, "token": access, "calls": [
        {"tool": "cancel", "arguments": {"id": id}},
    ]}))
    .await;
    assert_eq!(seen["calls"][0]["structured"]["status"], 403, "{}", seen["calls"][0]);

    // Refused: a token for another resource, the ID token, a tampered
    // signature, a person who never signed in to the portal, and the
    // access token anywhere but /mcp.
    let elsewhere = assistant_tokens(&portal, "ada", "http://127.0.0.1:1/mcp", "full").await;
    let stranger = assistant_tokens(&portal, "bob", &mcp, "full").await;
    // The signature's first character, not its last: the last one carries
    // padding bits a decoder may ignore, so changing it can leave the
    // signature as it was (CI once met exactly that).
    let at = access.rfind('.').unwrap() + 1;
    let first = &access[at..at + 1];
    let tampered = format!("{}{}{}", &access[..at], if first == "A" { "B" } else { "A" }, &access[at + 1..]);
    assert_eq!(list_with(&portal, access).await, 200);
    for (what, bearer) in [
        ("for another resource", elsewhere["access_token"].as_str().unwrap()),
        ("an ID token", tokens["id_token"].as_str().unwrap()),
        ("tampered", tampered.as_str()),
        ("of a person unknown to the portal", stranger["access_token"].as_str().unwrap()),
    ] {
        assert_eq!(list_with(&portal, bearer).await, 401, "{what}");
    }
    let rest = http_client().build().unwrap().get(format!("{}/api/v1/me", portal.url)).bearer_auth(access).send();
    assert_eq!(rest.await.unwrap().status(), 401, "an access token for /mcp opens nothing else");
}
