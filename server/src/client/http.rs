//! The REST API as the commands call it: bearer token, JSON in and out, and
//! an error's own message (`{"error", "message", "field"}`) as the failure.

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::Value;

pub struct Api {
    pub base: String,
    token: String,
    http: reqwest::Client,
}

/// A non-2xx answer, with the body the API sent.
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
}

impl Answer {
    /// The body of a success, or the API's message as the error.
    pub fn ok(self) -> anyhow::Result<Value> {
        if self.status.is_success() {
            return Ok(self.body);
        }
        let message = self.body["message"].as_str().map(str::to_owned).unwrap_or_else(|| self.status.to_string());
        Err(anyhow::anyhow!("{message}"))
    }
}

impl Api {
    pub fn new(base: String, token: String) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .user_agent(concat!("berth-cli/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { base, token, http })
    }

    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> anyhow::Result<Answer> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.with_context(|| format!("cannot reach {}", self.base))?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED {
            anyhow::bail!("the portal did not accept the token: run `berth login` again (or check BERTH_TOKEN)");
        }
        let location =
            response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let text = response.text().await?;
        let body = match (location, serde_json::from_str(&text)) {
            (Some(location), _) if status.is_redirection() => serde_json::json!({ "location": location }),
            (_, Ok(json)) => json,
            (_, Err(_)) => Value::String(text),
        };
        Ok(Answer { status, body })
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.call(Method::GET, path, None).await?.ok()
    }

    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(Method::POST, path, Some(body)).await?.ok()
    }
}
