//! `/mcp`: the Model Context Protocol over streamable HTTP, for agents. The tools
//! ([`tools`]) are thin calls of the services REST uses: the `POST /v3/fs` ops, the
//! knowledge-graph neighbourhood, entity search and the review actions.
//!
//! `/mcp` is not REST, so it is not in the served OpenAPI document (`/openapi.json`): MCP
//! describes its tools itself (`tools/list`, with a JSON Schema per tool).
//!
//! - Credentials are REST's: `x-api-key` or a dashboard `Authorization: Bearer` token, checked
//!   by the same extractor before the protocol runs, so a refusal is the 401 REST answers.
//! - Stateless: no MCP session is kept between requests (any instance answers any request)
//!   and each POST is answered with plain JSON rather than an event stream.

mod args;
pub mod tools;

use crate::access::caller::Caller;
use crate::access::state::AppState;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use tools::CanonTools;

pub const PATH: &str = "/mcp";

/// The `/mcp` route, authenticated.
pub fn router(state: &AppState) -> Router<AppState> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        // Host checks guard unauthenticated local servers against DNS rebinding; every
        // request here carries a credential, and canon answers under any host name.
        .disable_allowed_hosts();
    let tools_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(CanonTools::new(tools_state.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service(PATH, service)
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate))
}

/// Refuses a request without valid credentials exactly as REST does, else hands the caller
/// to the tools through the request's extensions.
async fn authenticate(caller: Caller, mut request: Request, next: Next) -> Response {
    request.extensions_mut().insert(caller);
    next.run(request).await
}
