//! The language-model engine: extract, transform, analyze and classify on any
//! OpenAI-compatible chat-completions endpoint with JSON-schema structured output.
//!
//! Configured per function in `extraConfig.llm`:
//!
//! ```json
//! {"baseUrl": "https://models.example.com/v1", "model": "qwen2.5-7b-instruct",
//!  "apiKeySecret": "model-key", "mode": "text", "timeoutSeconds": 120}
//! ```
//!
//! - `baseUrl`, `model`: required; requests go to `{baseUrl}/chat/completions` through the
//!   egress guard ([`crate::egress`]: HTTPS, public addresses, no redirects).
//! - The key, sent as `Authorization: Bearer …`: `apiKeySecret` (a secret of the tenant's
//!   environment, `POST /v3/secrets`; preferred), `apiKeyEnv` (a server variable, only if the
//!   operator listed it in `CANON_TENANT_ENV_ALLOWLIST`) or `apiKey` (stored in the function,
//!   shown by `includeExtraSettings=true`). None: no header.
//! - `mode`: `text` (default: the decoded text — an image's OCR text, a PDF's text layer),
//!   `vision` (image inputs, and image attachments of e-mails, sent as `image_url` data URLs
//!   next to the text), `ocr` (the Tesseract text of the input, labelled as OCR output).
//! - `timeoutSeconds`: default 120, 1 to 600 (checked when the function is saved).
//! - The answer is read up to 4 MiB ([`crate::egress::reply::MODEL_ANSWER_CAP`]); a longer
//!   one is a `model_error` naming the cap.
//!
//! The request asks for `response_format: {type: "json_schema", json_schema: {name, schema,
//! strict: true}}` with the function's `outputSchema` (name: `outputSchemaName`, else
//! `output`); classify asks for `{"choice": <one of the route names>}` after the rules of
//! [`super::classify`] found nothing. `choices[0].message.content` is parsed as JSON (a
//! Markdown code fence around it is tolerated) and validated against the schema. HTTP and
//! parse failures are `model_error`s; a schema violation is an `output_schema` error.

use super::classify::{self, classification_text};
use super::extract::extraction_text;
use super::{
    invalid_config, output_schema, schema, setting, Context, Document, EngineError, Outcome, Payload,
};
use crate::egress::reply;
use crate::versions::FunctionVersion;
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Duration;

/// How much of a document's text canon's own model requests (the accuracy judge, schema
/// refinement) send: a model's context is finite.
pub const MAX_PROMPT_DOCUMENT_CHARS: usize = 24_000;

#[derive(Clone, Debug)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    /// `extraConfig.llm` itself: where the key is named, resolved when a request is made.
    pub settings: Value,
    pub mode: Mode,
    pub timeout: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Text,
    Vision,
    Ocr,
}

impl LlmConfig {
    /// The function's `extraConfig.llm`, when set.
    pub fn of(function: &FunctionVersion) -> Result<Option<Self>, EngineError> {
        let Some(config) =
            setting(function, "extraConfig").and_then(|c| c.get("llm")).filter(|c| !c.is_null())
        else {
            return Ok(None);
        };
        let text =
            |name: &str| config.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let base_url = text("baseUrl").ok_or_else(|| invalid_config("extraConfig.llm needs `baseUrl`"))?;
        let model = text("model").ok_or_else(|| invalid_config("extraConfig.llm needs `model`"))?;
        let mode = match text("mode").unwrap_or("text") {
            "text" => Mode::Text,
            "vision" => Mode::Vision,
            "ocr" => Mode::Ocr,
            other => {
                return Err(invalid_config(format!(
                    "extraConfig.llm.mode {other:?}: use text, vision or ocr"
                )))
            }
        };
        // Saving checks the bound; versions saved before it existed are clamped into it.
        let bound = crate::functions::validate::LLM_TIMEOUT_SECONDS;
        let seconds = config.get("timeoutSeconds").and_then(crate::wire::whole_u64_of).unwrap_or(120);
        let timeout = Duration::from_secs(seconds.clamp(*bound.start(), *bound.end()));
        Ok(Some(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            settings: config.clone(),
            mode,
            timeout,
        }))
    }
}

/// Structured extraction by the model, validated against `outputSchema`.
pub async fn extract(
    model: &LlmConfig,
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Value, EngineError> {
    let schema = output_schema(function)
        .ok_or_else(|| invalid_config("a function run by a language model needs an `outputSchema`"))?;
    let name = setting(function, "outputSchemaName").and_then(Value::as_str).unwrap_or("output");
    let mut instructions = "Extract the requested data from the document. Answer with JSON that matches the \
                            schema; leave out what the document does not say."
        .to_string();
    if let Some(description) = setting(function, "description").and_then(Value::as_str) {
        instructions.push_str(&format!("\nTask: {description}"));
    }
    let output =
        chat_json(model, &instructions, user_content(model.mode, input), name, schema, context).await?;
    crate::cpu::blocking(|| schema::validate(schema, &output))?;
    Ok(output)
}

/// Classification by the model, after the deterministic rules.
pub async fn classify(
    model: &LlmConfig,
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Outcome, EngineError> {
    let routes = classify::routes(function, context)?;
    let text = classification_text(input);
    if let Some(routed) = classify::by_rules(&routes, &text, input, &context.rules)? {
        return Ok(routed);
    }
    let names: Vec<&str> = routes.iter().map(|r| r.name.as_str()).collect();
    let listing: String = routes.iter().map(|r| format!("- {}: {}\n", r.name, r.description)).collect();
    let instructions = format!("Classify the document into exactly one of these categories:\n{listing}");
    let choice_schema = json!({
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": names}},
        "required": ["choice"],
        "additionalProperties": false
    });
    let answer = chat_json(
        model,
        &instructions,
        user_content(model.mode, input),
        "classification",
        &choice_schema,
        context,
    )
    .await?;
    let choice = answer.get("choice").and_then(Value::as_str).unwrap_or_default();
    let Some(route) = routes.iter().find(|r| r.name == choice) else {
        return Err(model_error(format!("the model chose {choice:?}, not one of {names:?}")));
    };
    Ok(Outcome::Routed {
        outlet: route.name.clone(),
        output: json!({"choice": route.name, "method": "model"}),
    })
}

fn model_error(message: impl Into<String>) -> EngineError {
    EngineError::new("model_error", message)
}

/// The user message: text, or text and images for vision.
fn user_content(mode: Mode, input: &Payload) -> Value {
    let (text, images) = match input {
        Payload::Json(value) => (serde_json::to_string_pretty(value).unwrap_or_default(), Vec::new()),
        Payload::Document(document) => (extraction_text(document), images(document)),
    };
    let kind = match input {
        Payload::Document(document) => document.input_type.as_str(),
        Payload::Json(_) => "json",
    };
    match mode {
        Mode::Vision if !images.is_empty() => {
            let mut parts = vec![
                json!({"type": "text", "text": format!("Document ({kind}); its text, if any:\n\n{text}")}),
            ];
            parts.extend(
                images.into_iter().map(|url| json!({"type": "image_url", "image_url": {"url": url}})),
            );
            Value::Array(parts)
        }
        Mode::Ocr => Value::String(format!("OCR text of the document ({kind}):\n\n{text}")),
        _ => Value::String(format!("Document ({kind}):\n\n{text}")),
    }
}

/// Data URLs of the document's image and of its image attachments.
fn images(document: &Document) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(bytes) = &document.image {
        let mime = match document.input_type.as_str() {
            "jpeg" => "image/jpeg",
            "webp" => "image/webp",
            "tiff" => "image/tiff",
            _ => "image/png",
        };
        urls.push(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)));
    }
    for attachment in &document.attachments {
        urls.extend(images(attachment));
    }
    urls
}

/// One chat-completions request answered with JSON that `schema` describes (structured
/// output): shared by the engines, the accuracy judge and schema refinement, so every model
/// request goes through the egress guard and the tenant's key the same way.
pub async fn chat_json(
    model: &LlmConfig,
    instructions: &str,
    content: Value,
    schema_name: &str,
    schema: &Value,
    context: &Context,
) -> Result<Value, EngineError> {
    let name: String = schema_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    let body = json!({
        "model": model.model,
        "messages": [
            {"role": "system", "content": instructions},
            {"role": "user", "content": content}
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": true}},
        "temperature": 0
    });
    let url = format!("{}/chat/completions", model.base_url);
    let api_key = context
        .secrets
        .credential(&context.egress, &context.tenant, &model.settings, "apiKey", true)
        .await
        .map_err(|reason| invalid_config(format!("extraConfig.llm: {reason}")))?;
    let mut request = context
        .egress
        .request(reqwest::Method::POST, &url)
        .map_err(|reason| invalid_config(format!("extraConfig.llm.baseUrl: {reason}")))?
        .timeout(model.timeout)
        .json(&body);
    if let Some(key) = &api_key {
        request = request.bearer_auth(key);
    }
    let response = request
        .send()
        .await
        .map_err(|err| model_error(format!("POST {url}: {}", crate::egress::describe(&err))))?;
    let status = response.status();
    if !status.is_success() {
        let excerpt = reply::excerpt(response, 500).await;
        return Err(model_error(format!("{url} answered {status}: {excerpt}")));
    }
    // A model cannot make canon hold more than the cap: past it the call fails, naming it.
    let bytes = reply::read_within(response, reply::MODEL_ANSWER_CAP)
        .await
        .map_err(|err| model_error(format!("the answer of {url}: {err}")))?;
    let answer: Value = serde_json::from_slice(&bytes)
        .map_err(|err| model_error(format!("the answer is not JSON: {err}")))?;
    let content = answer
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| model_error("the answer has no choices[0].message.content"))?;
    parse_content(content)
}

/// The message content as JSON, tolerating a Markdown code fence.
pub fn parse_content(content: &str) -> Result<Value, EngineError> {
    let trimmed = content.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(unfenced.trim())
        .map_err(|err| model_error(format!("the model's content is not JSON ({err}): {}", truncate(trimmed))))
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_may_be_fenced() {
        assert_eq!(parse_content("```json\n{\"a\": 1}\n```").unwrap(), json!({"a": 1}));
        assert_eq!(parse_content(" {\"a\": 2} ").unwrap(), json!({"a": 2}));
        assert_eq!(parse_content("sorry, I cannot").unwrap_err().kind, "model_error");
    }

    #[test]
    fn vision_sends_images_as_data_urls() {
        let document = Document {
            input_type: "png".into(),
            text: "hello".into(),
            image: Some(vec![1, 2, 3]),
            ..Document::default()
        };
        let content = user_content(Mode::Vision, &Payload::Document(document.clone()));
        assert_eq!(content[1]["image_url"]["url"], json!("data:image/png;base64,AQID"));
        assert!(user_content(Mode::Text, &Payload::Document(document)).is_string());
    }
}
