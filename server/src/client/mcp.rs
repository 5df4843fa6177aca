//! `berth mcp`: the portal's MCP tools over stdio, for desktop assistants
//! that start a command rather than open a URL. A relay: an MCP server on
//! stdin and stdout that asks each request of the portal's `/mcp` as an MCP
//! client, with the saved login's token (`berth login`, or `BERTH_URL` and
//! `BERTH_TOKEN`). The portal does the work, so stdio and HTTP offer the
//! same tools, with the same rights and the same refusals.

use super::config;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientConfig, ClientRequest, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    RequestMetaObject, ServerConfig, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};

struct Relay {
    portal: Peer<RoleClient>,
    info: ServerConfig,
}

/// The portal's own protocol errors (an unknown tool) pass as they are;
/// a portal that could not be asked is a server error.
fn relayed(err: rmcp::ServiceError) -> ErrorData {
    match err {
        rmcp::ServiceError::McpError(error) => error,
        err => ErrorData::internal_error(format!("the portal did not answer: {err}"), None),
    }
}

impl ServerHandler for Relay {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.portal.list_tools(request).await.map_err(relayed)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.portal.list_resources(request).await.map_err(relayed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.portal.read_resource(request).await.map(Into::into).map_err(relayed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The portal records the assistant behind the relay as the client.
        let meta = context.peer.peer_info().map(|assistant| {
            let mut client = assistant.client_info.clone();
            client.version = format!("{}, via berth mcp", client.version);
            let mut meta = RequestMetaObject::new();
            meta.set_client_info(client);
            meta
        });
        let mut options = PeerRequestOptions::no_options();
        options.meta = meta;
        let asked = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let answer = match self.portal.send_request_with_option(asked, options).await {
            Ok(handle) => handle.await_response().await,
            Err(err) => Err(err),
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result.into()),
            Ok(_) => Err(ErrorData::internal_error("the portal answered another question", None)),
            Err(err) => Err(relayed(err)),
        }
    }
}

pub async fn run() -> anyhow::Result<()> {
    let (base, token) = config::load()?;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token),
    );
    let mut me = ClientConfig::default();
    me.client_info = Implementation::new("berth-mcp", env!("CARGO_PKG_VERSION"));
    let portal = me.serve(transport).await?;
    // What the portal said of itself is what the assistant is told.
    let said = portal.peer_info().ok_or_else(|| anyhow::anyhow!("the portal did not introduce itself"))?;
    let mut info = ServerConfig::new(said.capabilities.clone());
    info.instructions = said.instructions.clone();
    if let Some(server) = said.server_info.clone() {
        info.server_info = server;
    }
    let relay = Relay { portal: portal.peer().clone(), info };
    let served = relay.serve(rmcp::transport::stdio()).await?;
    served.waiting().await?;
    portal.cancel().await?;
    Ok(())
}
