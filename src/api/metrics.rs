//! The metrics middleware and `GET /metrics` (the registry is [`crate::access::metrics`]).

use crate::access::metrics::UNMATCHED_ROUTE;
use crate::access::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Instant;

/// Middleware: counts and times every request under its route template.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().map(|path| path.as_str().to_string());
    let response = next.run(request).await;
    let route = route.as_deref().unwrap_or(UNMATCHED_ROUTE);
    state.metrics.record(&method, route, response.status().as_u16(), started.elapsed());
    response
}

/// `GET /metrics` in the OpenMetrics text format (Prometheus reads it).
#[utoipa::path(get, path = "/metrics", tag = "operations", security(()),
    responses((status = 200, description = "OpenMetrics text exposition", body = String,
        content_type = "application/openmetrics-text")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.records.queue_depth().await {
        Ok(depth) => state.metrics.set_queue_depth(depth),
        Err(err) => tracing::warn!(error = %err, "cannot read the queue depth"),
    }
    (
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        state.metrics.encode(),
    )
        .into_response()
}
