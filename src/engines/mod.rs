//! Engines: what a function does to its input. Inputs are decoded into a [`Document`]
//! (text, pages, JSON, CSV rows, e-mail headers, attachments, image bytes); each function
//! kind turns a [`Payload`] into an [`Outcome`] or an [`EngineError`].
//!
//! The built-in engines are deterministic and need nothing outside canon; a function whose
//! `extraConfig.llm` is set runs extract / transform / analyze / classify on an
//! OpenAI-compatible chat-completions endpoint instead.

use crate::collections::CollectionsService;
use crate::embeddings::Embedder;
use crate::functions::model::FunctionVersion;
use crate::graph::Tenant;
use serde_json::{Map, Value};
use std::path::PathBuf;
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
}

/// What engines may reach.
#[derive(Clone)]
pub struct Context {
    pub tenant: Tenant,
    pub embedder: Arc<dyn Embedder>,
    pub collections: Arc<CollectionsService>,
    pub http: reqwest::Client,
    /// Where `object_store` destinations that name a local folder are resolved from.
    pub data_dir: PathBuf,
}

/// The input types canon decodes, with aliases normalised (`jfif`/`jpg` → `jpeg`), or
/// `None` for an unsupported type (the API answers 400 "unsupported inputType").
pub fn supported_input_type(input_type: &str) -> Option<&'static str> {
    let _ = input_type;
    None
}

/// Decodes a file of a supported input type.
pub fn decode(input_type: &str, bytes: &[u8]) -> Result<Document, EngineError> {
    let _ = bytes;
    Err(EngineError::new("unsupported_input", format!("unsupported inputType {input_type}")))
}

/// Runs one function on one payload (every kind but join).
pub async fn run(function: &FunctionVersion, input: &Payload, context: &Context) -> Result<Outcome, EngineError> {
    let _ = (function, input, context);
    Err(EngineError::new("not_implemented", "engines are not implemented yet"))
}

/// Runs a join over the outputs of its upstream runs, in the order they finished.
pub async fn join(function: &FunctionVersion, inputs: &[Value], context: &Context) -> Result<Value, EngineError> {
    let _ = (function, inputs, context);
    Err(EngineError::new("not_implemented", "engines are not implemented yet"))
}
