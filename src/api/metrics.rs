//! Prometheus metrics: requests by route and status, latency histograms, queue depth.

use crate::app::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::time::Instant;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    queue_depth: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("canon");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            // 0.5 ms … ~16 s
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        let queue_depth = Gauge::default();
        registry.register("http_requests", "HTTP requests by route and status", requests.clone());
        registry.register("http_request_duration_seconds", "HTTP request latency by route", latency.clone());
        registry.register("job_queue_depth", "Jobs queued or running", queue_depth.clone());
        Self { registry, requests, latency, queue_depth }
    }
}

/// Middleware: counts and times every request under its route template.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(request).await;
    let metrics = &state.metrics;
    metrics
        .requests
        .get_or_create(&RequestLabels {
            method: method.clone(),
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    metrics.latency.get_or_create(&RouteLabels { method, route }).observe(started.elapsed().as_secs_f64());
    response
}

/// `GET /metrics` in the OpenMetrics text format (Prometheus reads it).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "OpenMetrics text exposition", body = String,
        content_type = "application/openmetrics-text")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.records.queue_depth().await {
        Ok(depth) => {
            state.metrics.queue_depth.set(depth);
        }
        Err(err) => tracing::warn!(error = %err, "cannot read the queue depth"),
    }
    let mut body = String::new();
    if let Err(err) = prometheus_client::encoding::text::encode(&mut body, &state.metrics.registry) {
        tracing::error!(error = %err, "cannot encode metrics");
    }
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], body)
        .into_response()
}
