//! The review dashboard at `/review`: the pages where reviewers work the review queue and the
//! merge suggestions and curate one entity, a thin transport over the same REST endpoints any
//! client uses (nothing here decides; `src/graph/` does).
//!
//! Why this stack. The pages are HTML rendered by canon with askama (templates checked at
//! compile time, escaping on by default) plus one small hand-written script for the keys and
//! the calls; every asset is compiled into the binary with `include_str!`, so `/review`
//! works offline, with no CDN, no web font and nothing to build or provision. A bundled
//! single-page app would bring a JavaScript toolchain to a Rust service for four pages; htmx
//! would need its responses rendered server-side per request, but the credential lives in the
//! tab (see below), so a page load carries none: the server can only send the page's frame,
//! and the script fills it from the JSON API, which also keeps every number the API's own.
//!
//! Sign-in: an API key or a reviewer's dashboard token, kept in `sessionStorage` (this tab
//! only) and sent as a header (`x-api-key`, or `Authorization: Bearer` for a token), never a
//! cookie, so no other site can make the browser act as the reviewer. With a token, actions
//! are attributed to that reviewer, as on REST.
//!
//! Hostile data: names, synonyms and document text are tenant input. The templates carry
//! none of it except the entity ID in the path (escaped by askama); the script only ever sets
//! `textContent` and attributes, never HTML; and the Content-Security-Policy allows scripts
//! from canon's own files only, so no inline script, injected or not, runs.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::access::state::AppState;
use askama::Template;

/// Scripts and styles from canon only, calls to canon only, nothing framed or framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

/// The dashboard's routes (merged into the REST router; no state needed: data comes from
/// `/v3` calls the page makes with the reviewer's credential).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/review", get(queue))
        .route("/review/suggestions", get(suggestions))
        .route("/review/entities/{entityID}", get(entity))
        .route("/review/assets/{file}", get(asset))
}

#[derive(Template)]
#[template(path = "queue.html", config = "src/dashboard/askama.toml")]
struct QueuePage {
    active: &'static str,
}

#[derive(Template)]
#[template(path = "suggestions.html", config = "src/dashboard/askama.toml")]
struct SuggestionsPage {
    active: &'static str,
}

#[derive(Template)]
#[template(path = "entity.html", config = "src/dashboard/askama.toml")]
struct EntityPage {
    active: &'static str,
    entity_id: String,
}

async fn queue() -> Response {
    page(QueuePage { active: "queue" }.render())
}

async fn suggestions() -> Response {
    page(SuggestionsPage { active: "suggestions" }.render())
}

async fn entity(Path(entity_id): Path<String>) -> Response {
    page(EntityPage { active: "entity", entity_id }.render())
}

/// A rendered page with the headers every dashboard page carries.
fn page(rendered: askama::Result<String>) -> Response {
    match rendered {
        Ok(html) => with_headers(html, "text/html; charset=utf-8", "no-store"),
        Err(err) => {
            tracing::error!(%err, "rendering a dashboard page");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be rendered; see canon's log")
                .into_response()
        }
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    match file.as_str() {
        "dashboard.js" => with_headers(SCRIPT, "text/javascript; charset=utf-8", "no-cache"),
        "dashboard.css" => with_headers(STYLE, "text/css; charset=utf-8", "no-cache"),
        _ => (StatusCode::NOT_FOUND, "no such dashboard asset").into_response(),
    }
}

fn with_headers(body: impl IntoResponse, content_type: &'static str, cache: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}
