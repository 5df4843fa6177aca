//! A token's scope, applied to every request it comes with
//! (`app::rules::scope` decides). The MCP endpoint is let through here: a
//! tool's call is one REST request made for the assistant, and that request
//! meets this same layer inside `crate::mcp`.

use app::backend::accounts::identity::Identity;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Where assistants speak MCP (Streamable HTTP).
pub const MCP_PATH: &str = "/mcp";

pub async fn enforce(request: Request, next: Next) -> Response {
    let scope = request.extensions().get::<Identity>().and_then(|identity| identity.token).map(|token| token.scope);
    if let Some(scope) = scope {
        let path = request.uri().path();
        if path != MCP_PATH && !app::rules::scope::allows(scope, request.method().as_str(), path) {
            let message =
                format!("this token may {} (scope {}); use a token that may do more", scope.says(), scope.as_str());
            return (
                StatusCode::FORBIDDEN,
                axum::Json(json!({"error": "beyond_token_scope", "message": message, "field": null})),
            )
                .into_response();
        }
    }
    next.run(request).await
}
