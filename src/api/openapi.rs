//! The OpenAPI 3.1 document, generated from the handlers' annotations, and a browsable page.

use super::{
    accuracy, buckets, calls, collections, connectors, copies, entities, entity_types, events, fs, functions,
    graph, health, infer_schema, metrics, reviewers, secrets, subscriptions, suggestions, workflows,
};
use super::{datasets, views};
use crate::access::browser_ui::{self, BrowserUi};
use crate::access::error::ErrorBody;
use crate::access::state::AppState;
use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Response};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "canon",
        description = "Turns documents into a curated knowledge graph. Every /v3 request carries an \
            `x-api-key` header; the key decides the account and environment. Every error body is \
            `{message, code, details?}`."
    ),
    paths(
        health::healthz, health::readyz, metrics::metrics,
        buckets::create, buckets::list, buckets::get, buckets::update, buckets::delete,
        entity_types::create, entity_types::list, entity_types::get, entity_types::update, entity_types::delete,
        reviewers::assign, reviewers::list, reviewers::remove, reviewers::assignments,
        entities::bulk, entities::seed_status, entities::get, entities::update, entities::bulk_validate,
        entities::list_synonyms, entities::add_synonym, entities::remove_synonym, entities::merge, entities::merges, entities::unmerge, entities::reopen, entities::timeline,
        suggestions::refresh, suggestions::list, suggestions::accept, suggestions::dismiss, suggestions::reopen, suggestions::bulk_dismiss,
        graph::review_queue, graph::review_counts, graph::bulk_validate_matching, graph::entity_relations, graph::knowledge_graph, graph::create_relation, graph::create_mention,
        collections::create, collections::list, collections::delete, collections::add_items,
        collections::update_items, collections::get_items, collections::delete_item,
        collections::token_count, collections::search,
        calls::submit, calls::list, calls::get, calls::trace,
        events::list_outputs, events::get_output, events::list_errors, events::get_error,
        events::list_legacy, events::get_legacy,
        functions::create, functions::list, functions::get, functions::update, functions::delete,
        functions::versions, functions::version,
        workflows::create, workflows::list, workflows::get, workflows::update, workflows::delete,
        workflows::versions, workflows::version,
        secrets::create, secrets::list, secrets::rotate, secrets::delete,
        subscriptions::create, subscriptions::list, subscriptions::get, subscriptions::update, subscriptions::delete,
        subscriptions::subscription_deliveries, subscriptions::event_deliveries, subscriptions::redeliver,
        subscriptions::generate_secret, subscriptions::read_secret, subscriptions::revoke_secret,
        accuracy::feedback, accuracy::correct_batch, accuracy::trigger, accuracy::results,
        accuracy::legacy_results, accuracy::score_create, accuracy::score_get, accuracy::score_cancel,
        accuracy::metrics, accuracy::review, accuracy::regression, accuracy::regression_corrections,
        accuracy::compare,
        views::create, views::list, views::get, views::update, views::delete, views::table_data,
        views::aggregation_data,
        datasets::create, datasets::from_events, datasets::list, datasets::get, datasets::delete,
        datasets::rows, datasets::get_row, datasets::delete_row, datasets::write_columns,
        fs::navigate, copies::copy_function, copies::copy_workflow, infer_schema::infer_schema,
        connectors::create, connectors::list, connectors::delete,
    ),
    components(schemas(ErrorBody)),
    modifiers(&ApiKeyAuth),
    // Alternatives: either one authenticates (`access::caller`); reviewer routes narrow it.
    security(("apiKey" = []), ("dashboardToken" = [])),
    tags(
        (name = "buckets", description = "Partitions of the knowledge graph"),
        (name = "entity types", description = "The tenant's taxonomy of entities"),
        (name = "entities", description = "Canonical entities: seeding, curation, synonyms, merges"),
        (name = "review", description = "The review queue"),
        (name = "graph", description = "Mentions, relations and the knowledge-graph view"),
        (name = "reviewers", description = "Reviewer assignments (dashboard token only)"),
        (name = "collections", description = "Named, hierarchical groups of embedded items (dots in a \
            name form the hierarchy), embedded asynchronously and searched semantically, by keyword \
            or both. Deleting a collection deletes its whole subtree."),
        (name = "calls", description = "Workflow calls: submission, status, outputs, errors and traces"),
        (name = "events", description = "Terminal events of calls: outputs and errors (KSUID IDs)"),
        (name = "functions", description = "Units of processing with a type, an output schema and \
            immutable numbered versions"),
        (name = "workflows", description = "Versioned DAGs of nodes running pinned function versions"),
        (name = "secrets", description = "Credentials a tenant keeps in canon (encrypted at rest, never \
            returned) and names from function configurations (`apiKeySecret`, `s3AccessKeyIdSecret`, \
            `s3SecretAccessKeySecret`)"),
        (name = "subscriptions", description = "Deliveries of terminal events to webhooks, object storage \
            and Google Drive: subscriptions, the webhook signing secret (`svc-signature`), the delivery log"),
        (name = "accuracy", description = "Function accuracy: corrections, evaluations, score runs, \
            metrics, review sampling, regression runs and version comparison"),
        (name = "views", description = "Tables and charts over the output events of functions: \
            versioned view definitions, table data and aggregations computed in the record store"),
        (name = "datasets", description = "Golden datasets (gds_): rows keyed by row_key with typed \
            values in columns whose role (input, corrected, schema) scoring reads"),
        (name = "connectors", description = "Outside systems that start calls: Box folder watches"),
        (name = "fs", description = "Shell verbs over parsed documents and the entity memory, for agents"),
        (name = "operations", description = "Health, readiness and metrics (no key needed)"),
    )
)]
pub struct ApiDoc;

/// Two ways in: an API key (`x-api-key`) or a dashboard token (`Authorization: Bearer`).
struct ApiKeyAuth;

impl Modify for ApiKeyAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(crate::access::caller::API_KEY_HEADER))),
        );
        components.add_security_scheme(
            "dashboardToken",
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("JWT").build(),
            ),
        );
    }
}

/// `GET /openapi.json`: the generated document with the terms annotations cannot state. It
/// depends on nothing at run time, so it is built on the first request (generating and
/// completing it walks every schema) and the same bytes are served after.
pub async fn spec() -> Response {
    static DOCUMENT: std::sync::OnceLock<axum::body::Bytes> = std::sync::OnceLock::new();
    let document = DOCUMENT.get_or_init(|| {
        let generated = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        serde_json::to_vec(&super::contract::complete(generated)).unwrap_or_default().into()
    });
    ([(axum::http::header::CONTENT_TYPE, "application/json")], document.clone()).into_response()
}

/// Swagger UI 5 (its standalone bundle): what `/docs` loads.
pub const SWAGGER_UI: BrowserUi = BrowserUi {
    dir: "swagger-ui",
    route: "/docs/assets/",
    files: &[
        ("swagger-ui.css", browser_ui::CSS, "https://unpkg.com/swagger-ui-dist@5.35.0/swagger-ui.css"),
        (
            "swagger-ui-bundle.js",
            browser_ui::JS,
            "https://unpkg.com/swagger-ui-dist@5.35.0/swagger-ui-bundle.js",
        ),
    ],
};

/// `GET /docs`: an API reference page rendering `/openapi.json`.
pub async fn docs(State(state): State<AppState>) -> Html<String> {
    Html(SWAGGER_UI.page(&state.vendor_dir, include_str!("docs.html")))
}

/// `GET /docs/assets/{file}`: the reference page's script and styles from `vendor/swagger-ui/`.
pub async fn docs_asset(State(state): State<AppState>, Path(file): Path<String>) -> Response {
    SWAGGER_UI.asset(&state.vendor_dir, &file).await
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    /// The document keys schemas by name: two types of one name are one schema there, the
    /// other's fields lost (a call's `FileInput` lost `itemReferenceID` to a score pair's).
    #[test]
    fn no_two_documented_types_share_a_schema_name() {
        let derive = regex::Regex::new(
            r"#\[derive\([^)]*ToSchema[^)]*\)\]\s*((?:#\[[^\]]*\]\s*)*)pub(?:\([a-z]+\))?\s+(?:struct|enum)\s+(\w+)",
        )
        .unwrap();
        let renamed = regex::Regex::new(r"#\[schema\([^\]]*\bas\s*=\s*(?:\w+::)*(\w+)").unwrap();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut clashes = Vec::new();
        let mut pending = vec![crate::provision::source_dir().join("src")];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let source = std::fs::read_to_string(&path).unwrap();
                    for found in derive.captures_iter(&source) {
                        let name =
                            renamed.captures(&found[1]).map_or(&found[2], |as_| as_.get(1).unwrap().as_str());
                        let here = relative(&path);
                        if let Some(there) = seen.insert(name.to_string(), here.clone()) {
                            clashes.push(format!("{name}: {there} and {here}"));
                        }
                    }
                }
            }
        }
        assert!(seen.len() > 100, "the scan found the documented types ({})", seen.len());
        assert!(clashes.is_empty(), "schema names used twice: {clashes:?}");
    }

    fn relative(path: &Path) -> String {
        path.strip_prefix(crate::provision::source_dir()).unwrap_or(path).display().to_string()
    }
}
