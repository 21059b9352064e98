//! REST transport for workflow calls: submission (JSON with base64 content, or a multipart
//! upload), reading calls and their traces.
//!
//! Decisions: `wait` is read from the query (JSON requests, as `bem-sdk` sends it) or from
//! the form (multipart). `inputContent` is base64; for text-like types (text, json, csv,
//! html, email) content that is not valid base64 is taken as the text itself, as the bem
//! CLI embeds text files. A multipart part without `inputType` gets it from its file name's
//! extension or its content type. A failed call answers 200 (with `wait=true`) like a
//! completed one — node failures never change the status (the spec's execution errors) —
//! and carries `error` naming the first failure.

use super::extract::{parse_json, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, bool_param, int_param};
use crate::access::state::AppState;
use crate::calls::{CallRequest, SubmittedFile};
use crate::engines;
use crate::pagination::{Limits, Order, PageRequest};
use crate::store::records::calls::CallFilter;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::{IntoParams, ToSchema};

const LIMITS: Limits = Limits { default: 50, max: 100 };

/// One file of a JSON call.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileInput {
    /// Base64 of the file. (The server also reads a text-like type's text sent as it is,
    /// which the pattern leaves out: send base64.)
    pub input_content: String,
    /// text, json, csv, html, email, pdf, png, jpeg, webp or tiff, or an alias (txt, htm, eml,
    /// jpg, jfif, tif), in any case.
    pub input_type: String,
    #[serde(rename = "itemReferenceID")]
    pub item_reference_id: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct BatchFiles {
    pub inputs: Vec<FileInput>,
}

/// Exactly one of `singleFile` or `batchFiles`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallInput {
    pub single_file: Option<FileInput>,
    pub batch_files: Option<BatchFiles>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallBody {
    pub input: CallInput,
    /// Bucket NAME that linked entities land in (checked only when a function links).
    pub bucket: Option<String>,
    /// Deduplication key: the same value for the same workflow within a day returns the
    /// existing call.
    #[serde(rename = "callReferenceID")]
    pub call_reference_id: Option<String>,
    /// A JSON object (at most 4 KB), stored on the call and given to outputs as `_metadata`.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

/// The multipart form of a call, for the document only: `read_multipart` reads the parts one
/// by one (any other part name is a 400). At least one `file` or `files` part is needed.
#[derive(Default, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[allow(dead_code)]
pub struct CallForm {
    /// A file per part; repeat the part for a batch.
    #[schema(value_type = Vec<String>, format = Binary)]
    file: Vec<Vec<u8>>,
    /// The same as `file` (also read as `files[]`).
    #[schema(value_type = Vec<String>, format = Binary)]
    files: Vec<Vec<u8>>,
    /// Every file's input type (any case); without it (or empty), each file's name extension
    /// or content type.
    #[serde(rename = "inputType")]
    input_type: String,
    /// Block until the call finishes, as the query's `wait` does.
    wait: bool,
    /// Bucket NAME that linked entities land in.
    bucket: String,
    /// Deduplication key, as in the JSON body.
    #[serde(rename = "callReferenceID")]
    call_reference_id: String,
    /// A JSON object, the part's text (at most 4 KB of it).
    #[schema(value_type = Object)]
    metadata: String,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitParam {
    /// Block until the call finishes, up to 30 s (then 202 with the running call).
    #[param(value_type = Option<bool>)]
    pub wait: Option<String>,
}

/// Call a workflow: `{call: …}`, 202 while it runs, 200 once finished (with `wait=true`).
/// A multipart request sends `file` (or `files`) parts plus optional `inputType`, `wait`,
/// `bucket`, `callReferenceID` and `metadata` (JSON) fields.
#[utoipa::path(post, path = "/v3/workflows/{workflowName}/call", tag = "calls",
    params(("workflowName" = String, Path), WaitParam), request_body(content(
        (CallBody = "application/json"),
        (CallForm = "multipart/form-data"))),
    responses((status = 200, description = "finished call", body = Object), (status = 202, description = "running call", body = Object),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn submit(
    State(state): State<AppState>,
    auth: Caller,
    Path(workflow_name): Path<String>,
    ApiQuery(query): ApiQuery<WaitParam>,
    request: Request,
) -> Result<Response, ApiError> {
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let mut call = if is_multipart {
        let multipart = Multipart::from_request(request, &state)
            .await
            .map_err(|rejection| ApiError::bad_request(rejection.body_text(), None))?;
        read_multipart(multipart).await?
    } else {
        let bytes = axum::body::Bytes::from_request(request, &state)
            .await
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))?;
        read_json(parse_json(&bytes)?)?
    };
    if let Some(wait) = bool_param("wait", query.wait.as_deref())? {
        call.wait = wait;
    }
    let submitted = state.calls.submit(&auth.tenant, &workflow_name, call).await?;
    let status = if submitted.finished { StatusCode::OK } else { StatusCode::ACCEPTED };
    Ok((status, Json(envelope(submitted.call))).into_response())
}

/// `{call}`, with `error` when the call failed.
fn envelope(call: Value) -> Value {
    let error = (call.get("status").and_then(Value::as_str) == Some("failed")).then(|| {
        call.pointer("/errors/0/message")
            .and_then(Value::as_str)
            .unwrap_or("the call could not be run to the end (no node reported an error)")
            .to_string()
    });
    match error {
        Some(error) => json!({ "call": call, "error": error }),
        None => json!({ "call": call }),
    }
}

fn read_json(body: CallBody) -> Result<CallRequest, ApiError> {
    let files = match (body.input.single_file, body.input.batch_files) {
        (Some(file), None) => vec![file],
        (None, Some(batch)) if !batch.inputs.is_empty() => batch.inputs,
        _ => {
            return Err(ApiError::bad_request(
                "input: send exactly one of singleFile or batchFiles (with at least one input)",
                Some(json!({ "field": "input" })),
            ))
        }
    };
    let files = files
        .into_iter()
        .enumerate()
        .map(|(i, file)| {
            let bytes = content_bytes(&file.input_type, &file.input_content).ok_or_else(|| {
                ApiError::bad_request(
                    format!("input file {i}: inputContent must be base64"),
                    Some(json!({ "field": format!("inputs[{i}].inputContent") })),
                )
            })?;
            Ok(SubmittedFile {
                input_type: file.input_type,
                bytes,
                item_reference_id: file.item_reference_id,
                file_name: None,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(CallRequest {
        files,
        wait: false,
        bucket: body.bucket,
        call_reference_id: body.call_reference_id,
        metadata: body.metadata,
    })
}

/// Base64 content, or for text-like types the text itself (when the content is not
/// base64 of UTF-8 text: `test` is valid base64, but of bytes that are not text).
fn content_bytes(input_type: &str, content: &str) -> Option<Vec<u8>> {
    let compact: String = content.chars().filter(|c| !c.is_whitespace()).collect();
    let decoded = base64::engine::general_purpose::STANDARD.decode(&compact).ok();
    let text_like =
        matches!(engines::supported_input_type(input_type), Some("text" | "json" | "csv" | "html" | "email"));
    if text_like {
        return Some(
            decoded
                .filter(|bytes| std::str::from_utf8(bytes).is_ok())
                .unwrap_or_else(|| content.as_bytes().to_vec()),
        );
    }
    decoded
}

async fn read_multipart(mut multipart: Multipart) -> Result<CallRequest, ApiError> {
    let mut call = CallRequest::default();
    let mut input_type: Option<String> = None;
    let mut parts: Vec<(Option<String>, Option<String>, Vec<u8>)> = Vec::new();
    let bad = |err: axum::extract::multipart::MultipartError| ApiError::bad_request(err.body_text(), None);
    while let Some(field) = multipart.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_string();
        match name.as_str() {
            "file" | "files" | "files[]" => {
                let file_name = field.file_name().map(str::to_string);
                let content_type = field.content_type().map(str::to_string);
                parts.push((file_name, content_type, field.bytes().await.map_err(bad)?.to_vec()));
            }
            _ => {
                let text = field.text().await.map_err(bad)?;
                match name.as_str() {
                    // An empty one is none given, as an empty query value is.
                    "inputType" => input_type = Some(text).filter(|t| !t.trim().is_empty()),
                    "wait" => call.wait = bool_param("wait", Some(&text))?.unwrap_or(false),
                    "bucket" => call.bucket = Some(text),
                    "callReferenceID" => call.call_reference_id = Some(text),
                    "metadata" => {
                        call.metadata = Some(parse_json(text.as_bytes()).map_err(|_| {
                            ApiError::bad_request("metadata: must be a JSON object", Some(json!({ "field": "metadata" })))
                        })?)
                    }
                    other => {
                        return Err(ApiError::bad_request(
                            format!("unknown form field {other:?}: send file, inputType, wait, bucket, callReferenceID or metadata"),
                            Some(json!({ "field": other })),
                        ))
                    }
                }
            }
        }
    }
    for (file_name, content_type, bytes) in parts {
        let guessed =
            input_type.clone().or_else(|| guess_type(file_name.as_deref(), content_type.as_deref()));
        let input_type = guessed.ok_or_else(|| {
            ApiError::bad_request(
                "unsupported inputType: send an inputType field or a file name with a known extension",
                Some(json!({ "field": "inputType" })),
            )
        })?;
        call.files.push(SubmittedFile { input_type, bytes, item_reference_id: None, file_name });
    }
    Ok(call)
}

/// The input type a file name's extension or a content type names (aliases such as `eml`
/// and `jpg` normalised by the engines' own table).
fn guess_type(file_name: Option<&str>, content_type: Option<&str>) -> Option<String> {
    let extension = file_name.and_then(|n| n.rsplit_once('.')).map(|(_, e)| e.to_lowercase());
    let by_extension = extension.as_deref().map(|e| if e == "md" { "text" } else { e });
    let by_content_type = content_type.map(|c| match c.split(';').next().unwrap_or_default().trim() {
        "text/plain" => "text",
        "application/json" => "json",
        "message/rfc822" => "email",
        "application/pdf" => "pdf",
        "image/png" => "png",
        "image/jpeg" => "jpeg",
        "image/webp" => "webp",
        "text/csv" => "csv",
        "text/html" => "html",
        other => other,
    });
    let guessed = by_extension.or(by_content_type)?;
    Some(engines::supported_input_type(guessed).unwrap_or(guessed).to_string())
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListCalls {
    /// Page size, 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    #[serde(rename = "callIDs", alias = "callIDs[]", default)]
    pub call_ids: Vec<String>,
    #[serde(rename = "workflowIDs", alias = "workflowIDs[]", default)]
    pub workflow_ids: Vec<String>,
    #[serde(rename = "workflowNames", alias = "workflowNames[]", default)]
    pub workflow_names: Vec<String>,
    #[serde(rename = "referenceIDs", alias = "referenceIDs[]", default)]
    pub reference_ids: Vec<String>,
    /// Case-insensitive substring of `callReferenceID`.
    #[serde(rename = "referenceIDSubstring")]
    pub reference_id_substring: Option<String>,
    /// pending, running, completed, failed.
    #[serde(alias = "statuses[]", default)]
    pub statuses: Vec<String>,
    /// Workflow calls are the only calls canon makes; `workflow` matches them all.
    #[serde(rename = "callTypes", alias = "callTypes[]", default)]
    pub call_types: Vec<String>,
    /// `asc` (default) or `desc`.
    pub sort_order: Option<String>,
    pub starting_after: Option<String>,
    pub ending_before: Option<String>,
}

/// List calls: `{calls, totalCount}`, each call with its terminal outputs and errors.
#[utoipa::path(get, path = "/v3/calls", tag = "calls", params(ListCalls),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListCalls>,
) -> Result<Json<Value>, ApiError> {
    let page = PageRequest::parse(
        int_param("limit", query.limit.as_deref())?,
        query.starting_after,
        query.ending_before,
        LIMITS,
        "wc",
    )?;
    let statuses = array_param("statuses", &query.statuses)?;
    if let Some(bad) = statuses.iter().find(|s| !crate::calls::STATUSES.contains(&s.as_str())) {
        return Err(ApiError::bad_request(
            format!("statuses: {bad:?} is not one of {}", crate::calls::STATUSES.join(", ")),
            Some(json!({ "field": "statuses" })),
        ));
    }
    let filter = CallFilter {
        call_ids: array_param("callIDs", &query.call_ids)?,
        workflow_ids: array_param("workflowIDs", &query.workflow_ids)?,
        workflow_names: array_param("workflowNames", &query.workflow_names)?,
        reference_ids: array_param("referenceIDs", &query.reference_ids)?,
        reference_id_substring: query.reference_id_substring.filter(|s| !s.is_empty()),
        statuses,
    };
    let call_types = array_param("callTypes", &query.call_types)?;
    if !call_types.is_empty() && !call_types.iter().any(|t| t == "workflow") {
        return Ok(Json(json!({ "calls": [], "totalCount": 0 })));
    }
    let (calls, total) = state
        .calls
        .list(&auth.tenant, &filter, &page, Order::parse(query.sort_order.as_deref())? == Order::Asc)
        .await?;
    Ok(Json(json!({ "calls": calls, "totalCount": total })))
}

/// One call: `{call: {callID, status, outputs, errors, url, traceUrl, …}}`.
#[utoipa::path(get, path = "/v3/calls/{callID}", tag = "calls", params(("callID" = String, Path)),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(envelope(state.calls.get(&auth.tenant, &id).await?)))
}

/// A call's trace: every node run with its input, output, timing and error, and every event.
#[utoipa::path(get, path = "/v3/calls/{callID}/trace", tag = "calls", params(("callID" = String, Path)),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn trace(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(state.calls.trace(&auth.tenant, &id).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_types_are_guessed_from_names_then_content_types() {
        assert_eq!(guess_type(Some("mail.EML"), None).as_deref(), Some("email"));
        assert_eq!(guess_type(Some("scan"), Some("image/png")).as_deref(), Some("png"));
        assert_eq!(guess_type(None, None), None);
    }

    #[test]
    fn text_content_may_be_sent_as_is() {
        assert_eq!(content_bytes("text", "not base64!").unwrap(), b"not base64!");
        assert_eq!(content_bytes("text", "aGk=").unwrap(), b"hi");
        assert_eq!(content_bytes("text", "test").unwrap(), b"test");
        assert!(content_bytes("pdf", "not base64!").is_none());
    }
}
