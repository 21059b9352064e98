//! Engines: what a function does to its input. Inputs are decoded into a [`Document`]
//! (text, pages, JSON, CSV rows, e-mail headers, attachments, image bytes); each function
//! kind turns a [`Payload`] into an [`Outcome`] or an [`EngineError`].
//!
//! The built-in engines are deterministic and need nothing outside canon; a function whose
//! `extraConfig.llm` is set runs extract / transform / analyze / classify on an
//! OpenAI-compatible chat-completions endpoint instead ([`llm`]).
//!
//! What each engine returns (the executor wraps it into the event):
//! - transform / extract / analyze: `Outcome::Output(transformedContent)`, validated against
//!   `outputSchema` when there is one ([`transform`], [`extract`], [`analyze`]);
//! - classify: `Outcome::Routed { outlet: <route name>, output: {choice, method, scores…} }`
//!   ([`classify`]);
//! - split: `Outcome::Items`, each with the payload for downstream nodes and the split
//!   event's `{outputType, printPageOutput: {itemOffset, itemCount}}` ([`split`]);
//! - join: the merged content ([`join`]); send: `{deliveryStatus, destinationType,
//!   webhookOutput | s3Output, deliveredContent}` ([`send`]); enrich: the enriched JSON
//!   (`enrichedContent`, [`enrich`]).
//!
//! Errors carry a `kind`: `input_decoding`, `unsupported_input`, `invalid_config` (also a
//! destination the egress guard refuses, or a credential that cannot be resolved),
//! `output_schema`, `unsupported`, `send_failed`, `classification_failed`,
//! `embedding_error`, `search_error`, `model_error`.
//!
//! [`decode`] runs external programs (pdftotext, pdftoppm, tesseract, under rlimits; up to 60 s for a PDF,
//! 120 s per image) and blocks: call it from `tokio::task::spawn_blocking`.

pub mod analyze;
pub mod call_rules;
pub mod classify;
pub mod csv;
pub mod email;
pub mod enrich;
pub mod extract;
pub mod html;
pub mod input_types;
pub mod inputs;
pub mod join;
pub mod labels;
pub mod limits;
pub mod llm;
pub mod schema;
pub mod send;
pub mod sigv4;
pub mod split;
mod tools;
pub mod transform;
pub mod typed;

use crate::collections::CollectionsService;
use crate::egress::Egress;
use crate::embeddings::Embedder;
use crate::graph::Tenant;
use crate::secrets::SecretsService;
use crate::versions::{FunctionVersion, Kind};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A decoded input file.
/// Serializable, so a split's items can be checkpointed and a resumed call reuses them.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Document {
    /// Normalised input type (`jfif` and `jpg` become `jpeg`).
    pub input_type: String,
    /// All text: the file's text, a PDF's text layer, an image's OCR text, the body of an
    /// e-mail, JSON pretty-printed, CSV as lines.
    pub text: String,
    /// Text per page (PDF pages; one page for everything else).
    pub pages: Vec<String>,
    /// The parsed value of a JSON input.
    pub json: Option<Value>,
    /// The rows of a CSV input, keyed by the header line.
    pub rows: Option<Vec<Map<String, Value>>>,
    /// Headers of an e-mail input.
    pub email: Option<EmailHeaders>,
    /// Attachments of an e-mail, decoded.
    pub attachments: Vec<Document>,
    /// File name, when the input had one (attachments, multipart uploads).
    pub file_name: Option<String>,
    /// The raw bytes of an image input, for the vision path of a language model.
    pub image: Option<Vec<u8>>,
}

/// `inboundEmail` of an event.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailHeaders {
    pub to: String,
    pub delivered_to: String,
    pub from: String,
    pub subject: String,
}

/// What flows along an edge: the call's input document, or an upstream node's JSON output.
// Payloads are built once per node run and passed by reference: boxing the document would
// only add an indirection to every match on it.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Payload {
    Document(Document),
    Json(Value),
}

/// One piece of a split.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SplitItem {
    /// What the downstream nodes receive for this item.
    pub payload: Payload,
    /// What the split's event reports for this item.
    pub output: Value,
}

/// A successful run.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// transform, extract, analyze, join, enrich, send.
    Output(Value),
    /// classify: the chosen route (the outlet whose edges fire) and the event's content.
    Routed { outlet: String, output: Value },
    /// split: one item per piece, in order.
    Items(Vec<SplitItem>),
}

/// A failed run: becomes an error event with this `kind` and `message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct EngineError {
    pub kind: String,
    pub message: String,
}

impl EngineError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self { kind: kind.into(), message: message.into() }
    }

    /// An input that could not be read as its type says (`input_decoding`).
    pub fn decoding(message: impl Into<String>) -> Self {
        Self::new("input_decoding", message)
    }
}

/// What engines may reach.
#[derive(Clone)]
pub struct Context {
    pub tenant: Tenant,
    pub embedder: Arc<dyn Embedder>,
    pub collections: Arc<CollectionsService>,
    /// Every tenant-directed URL, folder and server variable goes through it.
    pub egress: Arc<Egress>,
    /// The tenant's credentials (`…Secret` fields).
    pub secrets: SecretsService,
    /// What the call's classify runs share (a fresh one outside a call).
    pub rules: Arc<call_rules::CallRules>,
}

/// The input types canon decodes, with aliases normalised (`jfif`/`jpg` → `jpeg`), or
/// `None` for an unsupported type (the API answers 400 "unsupported inputType").
pub fn supported_input_type(input_type: &str) -> Option<&'static str> {
    input_types::supported_input_type(input_type)
}

pub use input_types::{INPUT_TYPES, INPUT_TYPE_NAMES};

/// Decodes a file of a supported input type.
pub fn decode(input_type: &str, bytes: &[u8]) -> Result<Document, EngineError> {
    inputs::decode(input_type, bytes)
}

/// Runs one function on one payload (every kind but join).
pub async fn run(
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Outcome, EngineError> {
    // A shaping expression is exact by definition: it never goes to a model.
    let shaping = setting(function, "shapingSchema").is_some();
    let model = if shaping { None } else { llm::LlmConfig::of(function)? };
    match (function.kind(), model) {
        (Kind::Transform | Kind::Extract, Some(model)) => {
            llm::extract(&model, function, input, context).await.map(Outcome::Output)
        }
        (Kind::Analyze, Some(model)) => analyze::run_with_model(&model, function, input, context).await,
        (Kind::Classify, Some(model)) => llm::classify(&model, function, input, context).await,
        // Built-in engines run patterns, paths and schemas over the input: off the async workers.
        (Kind::Transform, None) => {
            crate::cpu::blocking(|| transform::run(function, input)).map(Outcome::Output)
        }
        (Kind::Extract, None) => {
            crate::cpu::blocking(|| transform::extract(function, input)).map(Outcome::Output)
        }
        (Kind::Analyze, None) => crate::cpu::blocking(|| analyze::run(function, input)),
        (Kind::Classify, None) => classify::run(function, input, context).await,
        (Kind::Split, _) => crate::cpu::blocking(|| split::run(function, input)).map(Outcome::Items),
        (Kind::Send, _) => send::run(function, input, context).await.map(Outcome::Output),
        (Kind::Enrich, _) => enrich::run(function, input, context).await.map(Outcome::Output),
        (Kind::Join, _) => join(function, &[payload_value(input)], context).await.map(Outcome::Output),
    }
}

/// Runs a join over the outputs of its upstream runs, in the order they finished.
pub async fn join(
    function: &FunctionVersion,
    inputs: &[Value],
    context: &Context,
) -> Result<Value, EngineError> {
    let _ = context;
    crate::cpu::blocking(|| join::run(function, inputs))
}

/// A payload as JSON: a JSON payload as is, a document as [`document_value`].
pub fn payload_value(payload: &Payload) -> Value {
    match payload {
        Payload::Json(value) => value.clone(),
        Payload::Document(document) => document_value(document),
    }
}

/// A document as JSON (what send delivers and a schema-less transform returns):
/// `{inputType, text, pages?, json?, rows?, inboundEmail?, attachments?, fileName?}`; `pages`
/// only with more than one page, the image bytes never.
pub fn document_value(document: &Document) -> Value {
    let mut map = Map::new();
    map.insert("inputType".into(), Value::String(document.input_type.clone()));
    map.insert("text".into(), Value::String(document.text.clone()));
    if document.pages.len() > 1 {
        map.insert("pages".into(), Value::from(document.pages.clone()));
    }
    if let Some(json) = &document.json {
        map.insert("json".into(), json.clone());
    }
    if let Some(rows) = &document.rows {
        map.insert("rows".into(), Value::Array(rows.iter().cloned().map(Value::Object).collect()));
    }
    if let Some(email) = &document.email {
        map.insert("inboundEmail".into(), serde_json::to_value(email).unwrap_or_default());
    }
    if !document.attachments.is_empty() {
        map.insert(
            "attachments".into(),
            Value::Array(document.attachments.iter().map(document_value).collect()),
        );
    }
    if let Some(name) = &document.file_name {
        map.insert("fileName".into(), Value::String(name.clone()));
    }
    Value::Object(map)
}

/// A setting of the function's body (camelCase, as the API returns it).
pub fn setting<'a>(function: &'a FunctionVersion, name: &str) -> Option<&'a Value> {
    function.body.get(name).filter(|v| !v.is_null())
}

/// The function's `outputSchema`, when it has one; a `parse` function's is
/// `parseConfig.schema` (bem-sdk's parse functions carry no `outputSchema`).
pub fn output_schema(function: &FunctionVersion) -> Option<&Value> {
    let non_empty = |s: &&Value| s.as_object().is_some_and(|m| !m.is_empty());
    setting(function, "outputSchema")
        .filter(non_empty)
        .or_else(|| function.body.pointer("/parseConfig/schema").filter(non_empty))
}

/// A setting a call cannot run (see `functions::type_settings`), named by its path.
impl From<crate::functions::type_settings::SettingError> for EngineError {
    fn from(err: crate::functions::type_settings::SettingError) -> Self {
        use crate::functions::type_settings::SettingError;
        match err {
            SettingError::Invalid { field, message } => invalid_config(format!("{field} {message}")),
            SettingError::Unsupported { field, message } => {
                EngineError::new("unsupported", format!("{field}: {message}"))
            }
        }
    }
}

/// A tenant's JMESPath expression that is not taken is their configuration's fault.
impl From<crate::shaping::ShapingError> for EngineError {
    fn from(err: crate::shaping::ShapingError) -> Self {
        invalid_config(err.0)
    }
}

pub fn invalid_config(message: impl Into<String>) -> EngineError {
    EngineError::new("invalid_config", message)
}
