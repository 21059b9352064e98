//! The REST transport: routes, middleware and the OpenAPI document. Handlers only parse,
//! call a service and shape the answer.

pub mod accuracy;
pub mod auth;
pub mod buckets;
pub mod calls;
pub mod collections;
pub mod connectors;
pub mod contract;
pub mod copies;
pub mod datasets;
pub mod entities;
pub mod entity_types;
pub mod events;
pub mod extract;
pub mod fs;
pub mod functions;
pub mod graph;
pub mod health;
pub mod infer_schema;
pub mod listener;
pub mod metrics;
pub mod openapi;
pub mod reviewers;
pub mod secrets;
pub mod subscriptions;
pub mod suggestions;
pub mod views;
pub mod workflows;

use crate::access::error::ApiError;
use crate::access::state::AppState;
use axum::extract::Request;
use axum::http::{HeaderName, StatusCode};
use axum::middleware;
use axum::routing::{delete, get, patch, post};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole HTTP surface.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::metrics))
        .route("/openapi.json", get(openapi::spec))
        .route("/docs", get(openapi::docs))
        .route("/docs/assets/{file}", get(openapi::docs_asset))
        .route("/graphql", get(crate::graphql::graphiql).post(crate::graphql::execute))
        .route("/graphql/assets/{file}", get(crate::graphql::graphiql_asset))
        .nest("/v3", v3())
        .nest("/v1-alpha", v1_alpha())
        .nest("/v1-beta", v1_beta())
        .merge(crate::mcp::router(&state))
        .merge(crate::dashboard::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(CatchPanicLayer::custom(panicked))
        .layer(middleware::map_response(crate::access::error::normalize_errors))
        .layer(middleware::from_fn_with_state(state.clone(), metrics::track))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let request_id = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            tracing::info_span!("request", method = %request.method(), uri = %request.uri().path(), request_id)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

/// The current surface.
fn v3() -> Router<AppState> {
    Router::new()
        .route("/buckets", get(buckets::list).post(buckets::create))
        .route("/buckets/{bucketID}", get(buckets::get).patch(buckets::update).delete(buckets::delete))
        .route("/collections", get(collections::list).post(collections::create).delete(collections::delete))
        .route(
            "/collections/items",
            get(collections::get_items)
                .post(collections::add_items)
                .put(collections::update_items)
                .delete(collections::delete_item),
        )
        .route("/collections/token-count", post(collections::token_count))
        .route("/collections/search", post(collections::search))
        .route("/entity-types", get(entity_types::list).post(entity_types::create))
        .route(
            "/entity-types/{typeID}",
            get(entity_types::get).patch(entity_types::update).delete(entity_types::delete),
        )
        .route("/entity-types/{typeID}/reviewers", get(reviewers::list).post(reviewers::assign))
        .route("/entity-types/{typeID}/reviewers/{userID}", delete(reviewers::remove))
        .route("/users/{userID}/reviewer-assignments", get(reviewers::assignments))
        .route("/entities/bulk", post(entities::bulk))
        .route("/entities/bulk-validate", post(entities::bulk_validate))
        .route("/entities/seed/{id}", get(entities::seed_status))
        .route("/entities/{id}", get(entities::get).patch(entities::update))
        .route("/entities/{id}/synonyms", get(entities::list_synonyms).post(entities::add_synonym))
        .route("/entities/{id}/synonyms/{synonymID}", delete(entities::remove_synonym))
        .route("/entities/{id}/relations", get(graph::entity_relations))
        .route("/entities/{id}/reopen", post(entities::reopen))
        .route("/entities/{id}/merge", post(entities::merge))
        .route("/entities/{id}/merges", get(entities::merges))
        .route("/entities/{id}/timeline", get(entities::timeline))
        .route("/merges/{mergeID}/undo", post(entities::unmerge))
        .route("/relations", post(graph::create_relation))
        .route("/mentions", post(graph::create_mention))
        .route("/review-queue", get(graph::review_queue))
        .route("/review-queue/counts", get(graph::review_counts))
        .route("/review-queue/bulk-validate", post(graph::bulk_validate_matching))
        .route("/knowledge-graph", get(graph::knowledge_graph))
        .route("/merge-suggestions", get(suggestions::list))
        .route("/merge-suggestions/refresh", post(suggestions::refresh))
        .route("/merge-suggestions/bulk-dismiss", post(suggestions::bulk_dismiss))
        .route("/merge-suggestions/{suggestionID}/accept", post(suggestions::accept))
        .route("/merge-suggestions/{suggestionID}/dismiss", post(suggestions::dismiss))
        .route("/merge-suggestions/{suggestionID}/reopen", post(suggestions::reopen))
        .route("/workflows/{workflowName}/call", post(calls::submit))
        .route("/calls", get(calls::list))
        .route("/calls/{callID}", get(calls::get))
        .route("/calls/{callID}/trace", get(calls::trace))
        .route("/outputs", get(events::list_outputs))
        .route("/outputs/{eventID}", get(events::get_output))
        .route("/errors", get(events::list_errors))
        .route("/errors/{eventID}", get(events::get_error))
        // Static paths before `/functions/{functionName}` (matchit prefers them anyway).
        .route("/functions/metrics", get(accuracy::metrics))
        .route("/functions/review", post(accuracy::review))
        .route("/functions/regression", post(accuracy::regression))
        .route("/functions/regression/corrections", post(accuracy::regression_corrections))
        .route("/functions/compare", post(accuracy::compare))
        .route("/eval", post(accuracy::trigger))
        .route("/eval/results", get(accuracy::results))
        .route("/eval/score", post(accuracy::score_create))
        .route("/eval/score/{scoreRunID}", get(accuracy::score_get))
        .route("/eval/score/{scoreRunID}/cancel", post(accuracy::score_cancel))
        .route("/events/{eventID}/feedback", post(accuracy::feedback))
        .route("/functions", get(functions::list).post(functions::create))
        .route(
            "/functions/{functionName}",
            get(functions::get).patch(functions::update).delete(functions::delete),
        )
        .route("/functions/{functionName}/versions", get(functions::versions))
        .route("/functions/{functionName}/versions/{versionNum}", get(functions::version))
        .route("/secrets", get(secrets::list).post(secrets::create))
        .route("/subscriptions", get(subscriptions::list).post(subscriptions::create))
        .route(
            "/subscriptions/{subscriptionID}",
            get(subscriptions::get).patch(subscriptions::update).delete(subscriptions::delete),
        )
        .route("/subscriptions/{subscriptionID}/deliveries", get(subscriptions::subscription_deliveries))
        .route("/events/{eventID}/deliveries", get(subscriptions::event_deliveries))
        .route("/deliveries/{deliveryID}/redeliver", post(subscriptions::redeliver))
        .route(
            "/webhook-secret",
            get(subscriptions::read_secret)
                .post(subscriptions::generate_secret)
                .delete(subscriptions::revoke_secret),
        )
        .route("/secrets/{name}", axum::routing::put(secrets::rotate).delete(secrets::delete))
        .route("/workflows", get(workflows::list).post(workflows::create))
        .route(
            "/workflows/{workflowName}",
            get(workflows::get).patch(workflows::update).delete(workflows::delete),
        )
        .route("/workflows/{workflowName}/versions", get(workflows::versions))
        .route("/workflows/{workflowName}/versions/{versionNum}", get(workflows::version))
        .route("/views", get(views::list).post(views::create))
        .route("/views/table-data", post(views::table_data))
        .route("/views/aggregation-data", post(views::aggregation_data))
        .route("/views/{viewID}", get(views::get).put(views::update).delete(views::delete))
        .route("/datasets", get(datasets::list).post(datasets::create))
        .route("/datasets/from-events", post(datasets::from_events))
        .route("/datasets/{datasetID}", get(datasets::get).delete(datasets::delete))
        .route("/datasets/{datasetID}/rows", get(datasets::rows))
        .route("/datasets/{datasetID}/rows/{row_key}", get(datasets::get_row).delete(datasets::delete_row))
        .route("/datasets/{datasetID}/rows/{row_key}/columns", post(datasets::write_columns))
        .route("/fs", post(fs::navigate))
        .route("/connectors", get(connectors::list).post(connectors::create))
        .route("/connectors/{connectorID}", delete(connectors::delete))
        .route("/functions/copy", post(copies::copy_function))
        .route("/workflows/copy", post(copies::copy_workflow))
        .route(
            "/infer-schema",
            post(infer_schema::infer_schema)
                .layer(axum::extract::DefaultBodyLimit::max(infer_schema::MAX_FILE + 64 * 1024)),
        )
}

/// Legacy alpha surface (subscriptions land here with their issue).
fn v1_alpha() -> Router<AppState> {
    Router::new()
        .route("/events", get(events::list_legacy))
        .route("/events/{eventID}", get(events::get_legacy))
        .route("/subscriptions", post(subscriptions::create))
        .fallback(not_found)
}

/// Deprecated beta surface (transformations land here with their issue).
fn v1_beta() -> Router<AppState> {
    Router::new()
        .route("/transformations", patch(accuracy::correct_batch))
        .route("/transformations/eval/results", post(accuracy::legacy_results))
        .fallback(not_found)
}

/// A handler that panicked answers as any internal error does (logged, a 500 in the error
/// envelope; hyper would drop the connection with no answer at all).
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    let cause =
        crate::error::ServiceError::Internal(anyhow::anyhow!("a request handler panicked: {message}"));
    axum::response::IntoResponse::into_response(ApiError::from(cause))
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such route; see /openapi.json for the API")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed on this route; see /openapi.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_handler_that_panics_answers_the_error_envelope_s_500_without_its_message() {
        let app: Router = Router::new()
            .route("/boom", get(|| async { panic!("secret detail") as &str }))
            .layer(CatchPanicLayer::custom(panicked));
        let request = axum::http::Request::get("/boom").body(axum::body::Body::empty()).unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 4096).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["code"], 500, "{body}");
        assert_eq!(body["message"], "internal error; retry with backoff");
        assert!(!body.to_string().contains("secret"), "{body}");
    }
}
