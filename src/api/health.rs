//! Liveness and readiness.

use crate::access::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
}

/// Per-backend readiness.
#[derive(Serialize, ToSchema)]
pub struct Readiness {
    /// `ready` when every backend answered, else `unavailable`.
    pub status: &'static str,
    pub backends: BTreeMap<String, BackendStatus>,
}

#[derive(Serialize, ToSchema)]
pub struct BackendStatus {
    /// Which engine serves this concern (`falkordb`, `neo4j`, `sqlite`, `postgres`,
    /// `qdrant-edge`, `qdrant`).
    pub engine: String,
    /// `up` or `down`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the backend is still building after a start while it already answers (the
    /// graph's indexes: reads are slower and writes wait until they are built).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub building: Option<String>,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations", security(()), responses((status = 200, body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// Every backend is reachable (503 otherwise, with the status of each).
#[utoipa::path(get, path = "/readyz", tag = "operations", security(()),
    responses((status = 200, body = Readiness), (status = 503, body = Readiness)))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let engine = state.graph.engine();
    let vectors = state.collections.vectors();
    let (graph, records, vector_store) = tokio::join!(engine.ping(), state.records.ping(), vectors.ping());
    let mut backends = BTreeMap::new();
    let mut graph = backend(engine.name(), graph.map_err(|e| e.to_string()));
    graph.building = engine.building();
    backends.insert("graph".to_string(), graph);
    backends.insert(
        "records".to_string(),
        backend(state.records.backend_name(), records.map_err(|e| e.to_string())),
    );
    backends.insert("vectors".to_string(), backend(vectors.name(), vector_store.map_err(|e| e.to_string())));
    let ready = backends.values().all(|b| b.status == "up");
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let mut response =
        (status, Json(Readiness { status: if ready { "ready" } else { "unavailable" }, backends }))
            .into_response();
    if !ready {
        // Unready is passing (a backend restarting): a retry helps.
        let retry = axum::http::HeaderValue::from_static("true");
        response.headers_mut().insert(crate::access::error::SHOULD_RETRY, retry);
    }
    response
}

fn backend(engine: &str, result: Result<(), String>) -> BackendStatus {
    match result {
        Ok(()) => BackendStatus { engine: engine.into(), status: "up", error: None, building: None },
        Err(err) => BackendStatus { engine: engine.into(), status: "down", error: Some(err), building: None },
    }
}
