//! Prometheus metrics: requests by route and status, latency histograms, queue depth.
//!
//! Labels come from a fixed vocabulary so that nothing a client sends adds a series: the
//! method is one of the methods the router serves (anything else counts as `other`) and the
//! route is the router's own template of the matched route (anything unmatched counts as
//! `unmatched`). The series are therefore bounded by the routes × methods × statuses canon
//! itself has.

use axum::http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
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

/// The label of a request's method: one of the methods canon serves, else `other`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The label of a request's route: the router's template when a route matched.
pub const UNMATCHED_ROUTE: &str = "unmatched";

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

    /// Counts and times one request. `route` must be a route template of the router (or
    /// [`UNMATCHED_ROUTE`]), never a path a client sent.
    pub fn record(&self, method: &Method, route: &str, status: u16, took: Duration) {
        let method = method_label(method);
        self.requests.get_or_create(&RequestLabels { method, route: route.to_string(), status }).inc();
        self.latency
            .get_or_create(&RouteLabels { method, route: route.to_string() })
            .observe(took.as_secs_f64());
    }

    pub fn set_queue_depth(&self, depth: i64) {
        self.queue_depth.set(depth);
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut body = String::new();
        if let Err(err) = prometheus_client::encoding::text::encode(&mut body, &self.registry) {
            tracing::error!(error = %err, "cannot encode metrics");
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_methods_share_one_series() {
        let metrics = Metrics::new();
        for i in 0..50 {
            let method = Method::from_bytes(format!("MADEUP{i}").as_bytes()).unwrap();
            metrics.record(&method, UNMATCHED_ROUTE, 405, Duration::from_millis(1));
        }
        let text = metrics.encode();
        assert!(text.contains("method=\"other\""), "{text}");
        assert!(!text.contains("MADEUP"), "a client's method became a label: {text}");
        let series = text.lines().filter(|l| l.starts_with("canon_http_requests_total")).count();
        assert_eq!(series, 1, "{text}");
    }
}
