//! Berth as a Model Context Protocol server (Streamable HTTP at `/mcp`, and
//! `berth mcp` over stdio): an AI assistant lists pools, sizes a model,
//! finds free time, books, extends, ends and cancels as its person.
//!
//! Each tool is one REST request made for the assistant (`tools::TOOLS`),
//! through the same layers a direct request meets after sign-in — the
//! token's scope, the per-person budget of expensive requests — and the
//! same handlers: a tool can do exactly what the same token could do on
//! `/api/v1`, refused with the same rules and words. Tool schemas are read
//! from the OpenAPI document (`schema`). Only a bearer token signs in here;
//! cookies and sessions play no part.

mod answer;
mod call;
mod clients;
mod resources;
mod schema;
mod tools;

pub use tools::TOOLS;

use crate::auth::scope::MCP_PATH;
use crate::state::AppState;
use app::backend::accounts::identity::Identity;
use app::backend::provenance::{self, Provenance};
use axum::extract::{FromRef, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;

/// Where a client learns how to get a token for `/mcp` (RFC 9728).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The largest REST answer a tool passes on (a year of bookings is less).
const ANSWER_LIMIT: usize = 4 << 20;

/// `/mcp` and its protected-resource metadata.
pub fn router(state: &AppState) -> Router<AppState> {
    let tools = Berth::new(state);
    let mut config = StreamableHttpServerConfig::default();
    // One JSON answer per call: no session, nothing kept between calls.
    config.json_response = true;
    config.legacy_session_mode = false;
    // DNS rebinding: only requests for the portal's own host (and loopback).
    let public = &state.auth.config.public_url;
    config.allowed_hosts = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if let Some(host) = public.host_str() {
        config.allowed_hosts.push(host.to_string());
    }
    let service =
        StreamableHttpService::new(move || Ok(tools.clone()), Arc::new(LocalSessionManager::default()), config);
    Router::new()
        .route_service(MCP_PATH, service)
        .route_layer(middleware::from_fn_with_state(state.clone(), token_only))
        .route(METADATA_PATH, get(metadata))
        .route(&format!("{METADATA_PATH}{MCP_PATH}"), get(metadata))
}

/// `/mcp` answers a live API token, or the provider's access token for it
/// (`auth::oauth`), only; anything else gets 401 with the metadata's
/// address, as the MCP authorization spec asks.
async fn token_only(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let signed_in = request.extensions().get::<Identity>().is_some_and(|i| i.token.is_some() && i.principal.is_some());
    if signed_in {
        return next.run(request).await;
    }
    let metadata = state.auth.config.public_url.join(&METADATA_PATH[1..]).map(|u| format!("{u}{MCP_PATH}"));
    let mut response = crate::api::ApiError::unauthorized().into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("Bearer resource_metadata=\"{}\"", metadata.unwrap_or_default()))
    {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// RFC 9728: what `/mcp` is and who issues its tokens: the OpenID
/// provider where single sign-on is configured (an access token for this
/// resource, `auth::oauth`), else the portal itself (API tokens, made on
/// the Tokens page or with `berth token create`, which `/mcp` takes too).
async fn metadata(State(state): State<AppState>) -> Json<Value> {
    let public = &state.auth.config.public_url;
    let resource = public.join(&MCP_PATH[1..]).map(|u| u.to_string()).unwrap_or_default();
    let tokens_page = public.join("tokens").map(|u| u.to_string()).unwrap_or_default();
    let issuer = match &state.auth.oidc {
        Some(oidc) => oidc.issuer().to_string(),
        None => public.as_str().trim_end_matches('/').to_string(),
    };
    Json(json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": app::model::TokenScope::ALL.map(|s| s.as_str()),
        "resource_name": "Berth GPU booking",
        "resource_documentation": tokens_page,
    }))
}

/// The tools' server: the REST API behind the layers a signed-in request
/// meets, and the OpenAPI document the tools' schemas come from.
#[derive(Clone)]
struct Berth {
    api: Router,
    portal: url::Url,
    introduced: clients::Introduced,
}

/// The signed-in caller of a request (`token_only` lets no other through).
fn caller(context: &RequestContext<RoleServer>) -> Option<&Identity> {
    context.extensions.get::<axum::http::request::Parts>().and_then(|parts| parts.extensions.get::<Identity>())
}

impl Berth {
    fn new(state: &AppState) -> Self {
        let auth = crate::auth::AuthState::from_ref(state);
        let api = Router::new()
            .nest("/api/v1", crate::api::router())
            .layer(middleware::from_fn_with_state(auth, crate::auth::rate_limit::limit_expensive))
            .layer(middleware::from_fn(crate::auth::scope::enforce))
            .with_state(state.clone());
        Self { api, portal: state.auth.config.public_url.clone(), introduced: Default::default() }
    }

    /// Asks the REST API as `provenance` says; its status and JSON answer.
    async fn ask(&self, rest: Request, provenance: Provenance) -> Result<(StatusCode, Value), ErrorData> {
        let Ok(response) = provenance::scoped(provenance, self.api.clone().oneshot(rest)).await;
        let status = response.status();
        let bytes = http_body_util::Limited::new(response.into_body(), ANSWER_LIMIT).collect().await;
        let body = bytes.ok().and_then(|b| serde_json::from_slice(&b.to_bytes()).ok()).unwrap_or(Value::Null);
        if status == StatusCode::INTERNAL_SERVER_ERROR || body.is_null() {
            return Err(ErrorData::internal_error("internal error; it has been logged", None));
        }
        Ok((status, body))
    }
}

/// The caller and how they act: their token, and the client the call is
/// recorded as made by.
fn acting(context: &RequestContext<RoleServer>, introduced: &clients::Introduced) -> Option<(Identity, Provenance)> {
    let who = caller(context)?;
    let token = who.token?;
    let client = introduced.of_call(token.id, context.meta.client_info());
    Some((who.clone(), Provenance { token: token.api_token(), client }))
}

fn unsigned() -> ErrorData {
    ErrorData::internal_error("the call came without its sign-in", None)
}

/// Every tool as MCP describes it, read from the OpenAPI document once.
fn described() -> &'static [Tool] {
    static DESCRIBED: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    DESCRIBED.get_or_init(|| TOOLS.iter().map(describe).collect())
}

fn describe(tool: &tools::Tool) -> Tool {
    let (method, fixed) = tool.operation();
    let doc = crate::api::openapi::document();
    let mut input = schema::input(doc, &method, tool.path, &fixed);
    if let Some(series) = tool.series {
        input = schema::either(input, schema::input(doc, &method, series, &fixed));
    }
    let hints = ToolAnnotations::with_title(tool.title).open_world(false);
    let hints = match tool.effect {
        tools::Effect::Reads => hints.read_only(true).destructive(false).idempotent(true),
        tools::Effect::Adds { idempotent } => hints.read_only(false).destructive(false).idempotent(idempotent),
        tools::Effect::Destroys => hints.read_only(false).destructive(true).idempotent(true),
    };
    let mut described = Tool::new(tool.name, tool.description, Arc::new(input)).with_title(tool.title);
    described.annotations = Some(hints);
    described
}

impl ServerHandler for Berth {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_instructions(
                "Berth books GPU time on Kubernetes for this person, within their rights. list_pools first; \
             fit sizes a model; find_free finds time; book, then extend, end_now or cancel. Times are RFC \
             3339; windows are half-open and on the pool's step. The resources berth://pools and \
             berth://bookings/upcoming keep the pools and this person's bookings in view.",
            );
        info.server_info = Implementation::new("berth", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(token) = caller(&context).and_then(|who| who.token) {
            self.introduced.remember(token.id, &request.client_info);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(described().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(format!("Berth has no tool named {}", request.name), None));
        };
        let (who, provenance) = acting(&context, &self.introduced).ok_or_else(unsigned)?;
        let doc = crate::api::openapi::document();
        let rest = match call::request(doc, tool, request.arguments.unwrap_or_default(), who) {
            Ok(rest) => rest,
            Err(sentence) => return Ok(CallToolResult::error(vec![ContentBlock::text(sentence)]).into()),
        };
        let (status, body) = self.ask(rest, provenance).await?;
        Ok(answer::result(tool, status, body, &self.portal).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::listed()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(source) = resources::find(&request.uri) else {
            return Err(ErrorData::resource_not_found(format!("Berth has no resource {}", request.uri), None));
        };
        let (who, provenance) = acting(&context, &self.introduced).ok_or_else(unsigned)?;
        let mut rest = Request::get(format!("/api/v1{}", source.path))
            .body(axum::body::Body::empty())
            .map_err(|_| ErrorData::internal_error("the resource's request could not be made", None))?;
        rest.extensions_mut().insert(who);
        let (status, body) = self.ask(rest, provenance).await?;
        if !status.is_success() {
            let message = body["message"].as_str().unwrap_or("the portal refused the read").to_string();
            return Err(ErrorData::invalid_request(message, None));
        }
        let text = serde_json::to_string_pretty(&body).unwrap_or_default();
        let contents = ResourceContents::text(text, source.uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
