//! The GraphQL transport at `/graphql`: POST runs a query, GET serves the GraphiQL explorer.
//! Resolvers only: every field calls the service functions REST calls, and lists of
//! entities load their mentions and relations through per-request DataLoaders (one graph
//! statement per level, never one per entity).
//!
//! Auth is REST's: `x-api-key`, or a dashboard token in `Authorization: Bearer`. Decision: a
//! request refused before it runs (no or bad credential, rate limit) answers with REST's HTTP
//! status (401, 429) and a GraphQL body `{"errors": [{"message", "extensions": {"code"}}]}`;
//! once a query runs, the status is 200 and each failed field's error carries
//! `extensions.code` = the status REST gives the same service error (400 for a query the
//! schema or depth limits reject). A request over the cost budget ([`cost`]: every root
//! field and alias counts) is refused before anything runs with HTTP 400, its cost and the
//! limit (`extensions.cost`, `extensions.limit`).

pub mod cost;
pub mod loaders;
pub mod mutation;
pub mod query;
pub mod timeline;
pub mod types;

use crate::access::browser_ui::{self, BrowserUi};
use crate::access::caller::Caller;
use crate::access::error::ApiError;
use crate::access::state::AppState;
use crate::error::ServiceError;
use async_graphql::{EmptySubscription, ErrorExtensions, Schema};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use std::sync::OnceLock;

pub use mutation::MutationRoot;
pub use query::QueryRoot;

pub type CanonSchema = Schema<QueryRoot, MutationRoot, EmptySubscription>;

/// Deepest selection a query may nest.
pub const MAX_DEPTH: usize = 12;
/// Most a request may cost: each field is 1, lists multiply their children by `first` (or
/// `limit`), each root field or alias adds [`cost::ROOT_FIELD_COST`].
pub const MAX_COMPLEXITY: usize = 10_000;

/// Deepest selection of a schema introspection: the standard query GraphiQL sends nests seven
/// `ofType` under `__schema { types { fields { args { type` (13 levels, over `MAX_DEPTH`).
pub const MAX_INTROSPECTION_DEPTH: usize = 20;

/// The schema (built once; request data carries the state and the caller).
pub fn schema() -> &'static CanonSchema {
    static SCHEMA: OnceLock<CanonSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| build_schema(MAX_DEPTH))
}

/// The schema for requests named `IntrospectionQuery` (what GraphiQL and codegen tools send),
/// run in introspection-only mode: only `__schema` and `__type` resolve (other fields are
/// null, mutations do nothing), so its deeper limit reaches no data.
fn introspection_schema() -> &'static CanonSchema {
    static SCHEMA: OnceLock<CanonSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| build_schema(MAX_INTROSPECTION_DEPTH))
}

fn build_schema(max_depth: usize) -> CanonSchema {
    Schema::build(QueryRoot, MutationRoot, EmptySubscription)
        .limit_depth(max_depth)
        .extension(cost::CostBudget { limit: MAX_COMPLEXITY })
        .finish()
}

/// The SDL committed as `graphql/schema.graphql`.
pub fn sdl() -> String {
    schema().sdl()
}

/// What each resolver needs besides its arguments.
pub struct RequestContext {
    pub state: AppState,
    pub caller: Caller,
}

/// GraphiQL 1.9 and React 17: what the explorer page loads.
pub const GRAPHIQL: BrowserUi = BrowserUi {
    dir: "graphiql",
    route: "/graphql/assets/",
    files: &[
        ("graphiql.min.css", browser_ui::CSS, "https://unpkg.com/graphiql@1.9.9/graphiql.min.css"),
        ("graphiql.min.js", browser_ui::JS, "https://unpkg.com/graphiql@1.9.9/graphiql.min.js"),
        (
            "react.production.min.js",
            browser_ui::JS,
            "https://unpkg.com/react@17.0.2/umd/react.production.min.js",
        ),
        (
            "react-dom.production.min.js",
            browser_ui::JS,
            "https://unpkg.com/react-dom@17.0.2/umd/react-dom.production.min.js",
        ),
    ],
};

/// GET /graphql: the GraphiQL explorer (put your key in its Headers pane as
/// `{"x-api-key": "…"}`).
pub async fn graphiql(State(state): State<AppState>) -> Html<String> {
    Html(GRAPHIQL.page(&state.vendor_dir, include_str!("graphiql.html")))
}

/// GET /graphql/assets/{file}: the explorer's scripts and styles from `vendor/graphiql/`.
pub async fn graphiql_asset(
    State(state): State<AppState>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    GRAPHIQL.asset(&state.vendor_dir, &file).await
}

/// POST /graphql: runs one GraphQL request for the authenticated caller.
pub async fn execute(
    State(state): State<AppState>,
    caller: Result<Caller, ApiError>,
    body: Bytes,
) -> Response {
    let caller = match caller {
        Ok(caller) => caller,
        Err(err) => return refused(err),
    };
    let request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(err) => {
            return refused(ApiError::bad_request(
                format!(
                "the body must be a GraphQL request {{\"query\", \"variables\"?, \"operationName\"?}}: {err}"
            ),
                None,
            ))
        }
    };
    let loaders = loaders::Loaders::new(&state, &caller.tenant);
    let request = request.data(RequestContext { state, caller }).data(loaders);
    let mut response = if request.operation_name.as_deref() == Some("IntrospectionQuery") {
        introspection_schema().execute(request.only_introspection()).await
    } else {
        schema().execute(request).await
    };
    for error in &mut response.errors {
        let has_code = error.extensions.as_ref().is_some_and(|ext| ext.get("code").is_some());
        if !has_code {
            if error.message.contains("nested too deep") {
                error.message = format!("{} (at most {MAX_DEPTH} levels)", error.message);
            }
            error.extensions.get_or_insert_with(Default::default).set("code", 400);
        }
    }
    let over_budget = response
        .errors
        .iter()
        .any(|error| error.extensions.as_ref().is_some_and(|ext| ext.get(cost::COST_EXTENSION).is_some()));
    let status = if over_budget { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    (status, Json(response)).into_response()
}

/// A request refused before it ran: REST's status and retry headers (`Retry-After`,
/// `x-should-retry`, so bem-sdk-style clients do not retry a 401), a GraphQL-shaped body.
fn refused(err: ApiError) -> Response {
    let status = err.status();
    let body = serde_json::json!({
        "errors": [{ "message": err.message(), "extensions": { "code": status.as_u16() } }]
    });
    let status = if status == StatusCode::OK { StatusCode::BAD_REQUEST } else { status };
    let rest = err.into_response();
    let mut response = (status, Json(body)).into_response();
    for name in [axum::http::header::RETRY_AFTER.as_str(), crate::access::error::SHOULD_RETRY] {
        if let Some(value) = rest.headers().get(name) {
            response.headers_mut().insert(name, value.clone());
        }
    }
    response
}

/// A service error as a GraphQL error: REST's message, `extensions.code` = REST's status
/// (through the one `ServiceError` → `ApiError` mapping), and `details` when there are any.
pub fn gql_error(err: ServiceError) -> async_graphql::Error {
    api_error(ApiError::from(err))
}

pub fn api_error(err: ApiError) -> async_graphql::Error {
    let code = err.status().as_u16();
    let details = err.details().cloned().and_then(|d| async_graphql::Value::from_json(d).ok());
    async_graphql::Error::new(err.message()).extend_with(|_, ext| {
        ext.set("code", code);
        if let Some(details) = details {
            ext.set("details", details);
        }
    })
}

/// `?` for service results inside resolvers.
pub trait OrGql<T> {
    fn gql(self) -> async_graphql::Result<T>;
}

impl<T> OrGql<T> for Result<T, ServiceError> {
    fn gql(self) -> async_graphql::Result<T> {
        self.map_err(gql_error)
    }
}

impl<T> OrGql<T> for Result<T, ApiError> {
    fn gql(self) -> async_graphql::Result<T> {
        self.map_err(api_error)
    }
}

/// The caller's dashboard identity, for reviewer operations (REST's 401 for an API key; the
/// services then check the role: 403).
pub fn dashboard_user<'a>(
    ctx: &async_graphql::Context<'a>,
) -> async_graphql::Result<&'a crate::graph::reviewers::DashboardIdentity> {
    request(ctx).caller.user.as_ref().ok_or_else(|| {
        api_error(ApiError::unauthorized(
            "reviewer operations are dashboard-only: send a dashboard token as Authorization: Bearer (API keys are not accepted)",
        ))
    })
}

/// The request's state and caller.
pub fn request<'a>(ctx: &async_graphql::Context<'a>) -> &'a RequestContext {
    ctx.data_unchecked::<RequestContext>()
}
