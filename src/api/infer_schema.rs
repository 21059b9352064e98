//! REST transport of `POST /v3/infer-schema` (see [`crate::documents::infer`]).
//!
//! bem-sdk 0.36's `infer_schema.create` sends a broken body (a `(name, bytes, type)` tuple
//! becomes three `file[]` text fields, the bytes their Python repr), so it cannot reach this
//! endpoint unchanged; any multipart client that sends one `file` part does.

use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::documents::infer::{self, Analysis, Upload};
use crate::documents::refine::refine;
use crate::engines;
use axum::extract::{Multipart, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

/// Largest file accepted (bytes).
pub const MAX_FILE: usize = 20 * 1024 * 1024;

#[derive(Serialize, ToSchema)]
pub struct InferSchemaResponse {
    pub filename: String,
    pub analysis: Analysis,
}

/// The multipart form, for the document only: the handler reads the part named `file`
/// (the last one, if several) and skips any other.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct InferSchemaForm {
    /// The file (at most 20 MB); its name's extension, else its content type, says how it is read.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Infer a JSON Schema from a file (multipart part `file`, at most 20 MB): labelled values,
/// tables, JSON and CSV structure with types and formats, plus a description and the kinds
/// of document found. The schema can serve as a transform function's `outputSchema`. When
/// the operator configured a model (`CANON_INFER_SCHEMA_LLM_URL`), it refines the schema and
/// `analysis.refinement` says whether its answer was kept.
#[utoipa::path(post, path = "/v3/infer-schema", tag = "functions",
    request_body(content((InferSchemaForm = "multipart/form-data"))),
    responses((status = 200, body = InferSchemaResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, description = "unsupported or unreadable file", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn infer_schema(
    State(state): State<AppState>,
    caller: Caller,
    mut multipart: Multipart,
) -> Result<Json<InferSchemaResponse>, ApiError> {
    let failed = |err: axum::extract::multipart::MultipartError| ApiError::new(err.status(), err.body_text());
    let mut file = None;
    while let Some(field) = multipart.next_field().await.map_err(failed)? {
        if field.name() != Some("file") {
            continue;
        }
        let name = field.file_name().unwrap_or("upload").to_string();
        let content_type = field.content_type().map(str::to_string);
        let bytes = field.bytes().await.map_err(failed)?;
        file = Some((name, content_type, bytes));
    }
    let Some((name, content_type, bytes)) = file else {
        return Err(ApiError::bad_request(
            "file: a multipart part named file is required",
            Some(json!({ "field": "file" })),
        ));
    };
    if bytes.len() > MAX_FILE {
        return Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "file: larger than 20 MB"));
    }
    crate::text::check("file.filename", &name)?;
    let input_type = input_type(&name, content_type.as_deref()).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("file: cannot read {name:?}; supported types: {}", engines::INPUT_TYPES.join(", ")),
        )
    })?;
    let decoded = {
        let bytes = bytes.clone();
        let input_type = input_type.to_string();
        tokio::task::spawn_blocking(move || engines::decode(&input_type, &bytes))
            .await
            .map_err(|err| crate::error::ServiceError::Internal(err.into()))?
    };
    let document = decoded
        .map_err(|err| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("file: {}", err.message)))?;
    let content_type = content_type
        .filter(|c| c != "application/octet-stream")
        .unwrap_or_else(|| mime_of(input_type).into());
    let upload = Upload { file_name: &name, content_type: &content_type, size_bytes: bytes.len() as i64 };
    // Reads the whole document (up to 32 MiB of text): blocking work, off the async worker.
    let mut analysis = crate::cpu::blocking(|| infer::analyse(&document, &upload));
    if let Some(model) = &state.schema_model {
        let context = state.calls.engines.context(caller.tenant.clone());
        analysis.refinement = Some(refine(model, &document, &mut analysis, &context).await);
    }
    Ok(Json(InferSchemaResponse { filename: name, analysis }))
}

/// The input type by file extension, else by content type.
fn input_type(name: &str, content_type: Option<&str>) -> Option<&'static str> {
    let by_extension = name.rsplit_once('.').and_then(|(_, e)| engines::supported_input_type(e));
    by_extension.or_else(|| {
        let mime = content_type?.split(';').next()?.trim();
        engines::supported_input_type(match mime {
            "text/plain" => "text",
            "application/json" => "json",
            "message/rfc822" => "email",
            "application/pdf" => "pdf",
            "image/png" => "png",
            "image/jpeg" => "jpeg",
            "image/webp" => "webp",
            "image/tiff" => "tiff",
            "text/csv" => "csv",
            "text/html" => "html",
            _ => return None,
        })
    })
}

fn mime_of(input_type: &str) -> &'static str {
    match input_type {
        "json" => "application/json",
        "csv" => "text/csv",
        "html" => "text/html",
        "email" => "message/rfc822",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "tiff" => "image/tiff",
        _ => "text/plain",
    }
}
