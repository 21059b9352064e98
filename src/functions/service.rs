//! The behaviour of functions: create, read, update (each a new immutable version), delete,
//! the list and the version history. REST calls these; workflows live in
//! [`super::workflows`] on the same service.
//!
//! A stored version body holds `type` (as the client named it), `displayName`, `tags`,
//! `outputSchemaName` (default `output`), `outputSchema` (default `{}`),
//! `tabularChunkingEnabled` (default false), `extraConfig` when given, and the settings of
//! the type as `bem-sdk` names them (others are ignored). An update starts from the previous
//! version and replaces what it sends; a setting the new type does not have is dropped.

use super::listing::{self, Page};
use super::{inbound_address, reach, validate, Author};
use crate::egress::Egress;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::secrets::SecretsService;
use crate::store::records::functions::{
    FunctionRecord, FunctionRow, FunctionUse, Saved, StoredFunctionVersion,
};
use crate::store::records::Records;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use utoipa::ToSchema;

/// Functions and workflows of every tenant.
#[derive(Clone)]
pub struct FunctionsService {
    pub records: Records,
    /// Judges the URLs, folders and variables a configuration names.
    pub egress: Arc<Egress>,
    /// The secrets a configuration may name.
    pub secrets: SecretsService,
}

/// A function as sent to create or update it (`functionName` and `type` required on create,
/// every field optional on update), plus the type's own settings as bem-sdk names them.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionInput {
    pub function_name: Option<String>,
    #[serde(rename = "type")]
    pub function_type: Option<String>,
    pub display_name: Option<String>,
    pub tags: Option<Vec<String>>,
    /// A JSON Schema object (at most 64 KiB, 10 levels of subschemas, 500 properties).
    #[schema(value_type = Option<Object>)]
    pub output_schema: Option<Value>,
    pub output_schema_name: Option<String>,
    pub tabular_chunking_enabled: Option<bool>,
    /// Free-form settings, stored verbatim and shown with `includeExtraSettings=true`.
    #[schema(value_type = Option<Object>)]
    pub extra_config: Option<Value>,
    /// The type's own settings (`classifications`, `webhookUrl`, `splitType`, …).
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub settings: Map<String, Value>,
}

/// Filters of the function list, ANDed.
#[derive(Clone, Debug, Default)]
pub struct FunctionFilter {
    pub function_ids: Vec<String>,
    pub function_names: Vec<String>,
    pub display_name: Option<String>,
    pub tags: Vec<String>,
    pub types: Vec<String>,
    pub workflow_ids: Vec<String>,
    pub workflow_names: Vec<String>,
    pub workflow_id_versions: Vec<(String, i64)>,
    pub workflow_name_versions: Vec<(String, i64)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Bool,
    Text,
    List,
    Object,
}

/// A type's setting: field, JSON shape, default (as JSON text) when never given.
type Setting = (&'static str, Shape, Option<&'static str>);

const CLASSIFY: &[Setting] = &[
    ("classifications", Shape::List, Some("[]")),
    ("description", Shape::Text, Some("\"\"")),
    ("nativeVisualInput", Shape::Bool, None),
];
// canon's own settings beside bem-sdk's: an S3-compatible endpoint for `s3` /
// `object_store` sends (see `engines::send`), `splitConfig` (`engines::split`) and
// `linkAcrossDocuments` (`calls::linking`).
const SEND: &[Setting] = &[
    ("destinationType", Shape::Text, Some("\"webhook\"")),
    ("webhookUrl", Shape::Text, None),
    ("webhookSigningEnabled", Shape::Bool, None),
    ("s3Bucket", Shape::Text, None),
    ("s3Prefix", Shape::Text, None),
    ("s3Endpoint", Shape::Text, None),
    ("s3Region", Shape::Text, None),
    ("s3AccessKeyIdSecret", Shape::Text, None),
    ("s3SecretAccessKeySecret", Shape::Text, None),
    ("s3AccessKeyIdEnv", Shape::Text, None),
    ("s3SecretAccessKeyEnv", Shape::Text, None),
    ("googleDriveFolderId", Shape::Text, None),
];
const SPLIT: &[Setting] = &[
    ("splitType", Shape::Text, Some("\"print_page\"")),
    ("printPageSplitConfig", Shape::Object, None),
    ("semanticPageSplitConfig", Shape::Object, None),
    ("splitConfig", Shape::Object, None),
];
const LINKING: &[Setting] = &[("linkAcrossDocuments", Shape::Bool, None)];
const EXTRACTING: &[Setting] = &[
    ("enableBoundingBoxes", Shape::Bool, Some("false")),
    ("preCount", Shape::Bool, Some("false")),
    ("linkAcrossDocuments", Shape::Bool, None),
];
const JOIN: &[Setting] =
    &[("description", Shape::Text, Some("\"\"")), ("joinType", Shape::Text, Some("\"standard\""))];
const SHAPING: &[Setting] = &[("shapingSchema", Shape::Text, Some("\"\""))];
const ENRICH: &[Setting] = &[("config", Shape::Object, Some("{}"))];
const PARSE: &[Setting] = &[("parseConfig", Shape::Object, None)];
const RENDER: &[Setting] = &[("renderConfig", Shape::Object, None)];

fn settings_of(function_type: &str) -> &'static [Setting] {
    match function_type {
        "extract" | "analyze" => EXTRACTING,
        "transform" => LINKING,
        "classify" | "route" => CLASSIFY,
        "send" => SEND,
        "split" => SPLIT,
        "join" => JOIN,
        "payload_shaping" => SHAPING,
        "enrich" => ENRICH,
        "parse" => PARSE,
        "render" => RENDER,
        _ => &[],
    }
}

/// Every type's settings as JSON Schema properties (one per field name), for the document:
/// a version's body carries its type's beside the common fields.
pub fn settings_properties() -> serde_json::Map<String, Value> {
    // Each field once, in the order first met, with every type that has it.
    let mut fields: Vec<(&str, Shape, Vec<&str>)> = Vec::new();
    for function_type in super::validate::FUNCTION_TYPES {
        for (field, shape, _) in settings_of(function_type) {
            match fields.iter_mut().find(|(known, ..)| known == field) {
                Some((_, _, types)) => types.push(function_type),
                None => fields.push((field, *shape, vec![function_type])),
            }
        }
    }
    fields
        .into_iter()
        .map(|(field, shape, types)| {
            let kind = match shape {
                Shape::Bool => "boolean",
                Shape::Text => "string",
                Shape::List => "array",
                Shape::Object => "object",
            };
            let description = format!("A setting of functions of type {}", types.join(", "));
            let mut schema = json!({ "type": kind, "description": description });
            if let Some(allowed) = allowed_values(field) {
                schema["enum"] = json!(allowed);
            }
            (field.to_string(), schema)
        })
        .collect()
}

/// The values an enumerated setting allows.
fn allowed_values(field: &str) -> Option<&'static [&'static str]> {
    match field {
        "destinationType" => Some(&["webhook", "s3", "object_store", "google_drive"]),
        "splitType" => Some(&["print_page", "semantic_page"]),
        "joinType" => Some(&["standard"]),
        _ => None,
    }
}

fn check_setting(field: &str, shape: Shape, value: &Value) -> ServiceResult<()> {
    let (fits, expected) = match shape {
        Shape::Bool => (value.is_boolean(), "true or false"),
        Shape::Text => (value.is_string(), "a string"),
        Shape::List => (value.is_array(), "an array"),
        Shape::Object => (value.is_object(), "an object"),
    };
    if !fits {
        return Err(ServiceError::invalid_field(field, format!("must be {expected}")));
    }
    if let (Some(allowed), Some(text)) = (allowed_values(field), value.as_str()) {
        if !allowed.contains(&text) {
            return Err(ServiceError::invalid_field(
                field,
                format!("must be one of {} (got {text:?})", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

/// The body of a new version: `input` over `previous` (the version it updates, if any).
fn build_body(function_type: &str, input: &FunctionInput, previous: Option<&Value>) -> ServiceResult<Value> {
    let before = |field: &str| previous.and_then(|p| p.get(field)).filter(|v| !v.is_null()).cloned();
    let mut body = Map::new();
    body.insert("type".into(), json!(function_type));
    if let Some(name) = input.display_name.as_ref().map(|n| json!(n)).or_else(|| before("displayName")) {
        body.insert("displayName".into(), name);
    }
    let tags = input.tags.as_ref().map(|t| json!(t)).or_else(|| before("tags")).unwrap_or(json!([]));
    body.insert("tags".into(), tags);
    if let Some(schema) = &input.output_schema {
        validate::output_schema(schema)?;
    }
    let schema = input.output_schema.clone().or_else(|| before("outputSchema")).unwrap_or(json!({}));
    body.insert("outputSchema".into(), schema);
    // The version's names and labels are tenant text like any other (`text::check`).
    crate::text::check_opt("outputSchemaName", input.output_schema_name.as_deref())?;
    validate::labels("displayName", input.display_name.as_deref(), input.tags.as_deref())?;
    let schema_name =
        input.output_schema_name.as_ref().map(|n| json!(n)).or_else(|| before("outputSchemaName"));
    body.insert("outputSchemaName".into(), schema_name.unwrap_or(json!("output")));
    let chunking =
        input.tabular_chunking_enabled.map(Value::Bool).or_else(|| before("tabularChunkingEnabled"));
    body.insert("tabularChunkingEnabled".into(), chunking.unwrap_or(Value::Bool(false)));
    if let Some(extra) = &input.extra_config {
        if !extra.is_object() {
            return Err(ServiceError::invalid_field("extraConfig", "must be an object"));
        }
    }
    if let Some(extra) = input.extra_config.clone().or_else(|| before("extraConfig")) {
        body.insert("extraConfig".into(), extra);
    }
    for (field, shape, default) in settings_of(function_type) {
        let given = input.settings.get(*field).filter(|v| !v.is_null());
        if let Some(value) = given {
            check_setting(field, *shape, value)?;
        }
        let value = given
            .cloned()
            .or_else(|| before(field))
            .or_else(|| default.and_then(|text| serde_json::from_str(text).ok()));
        if let Some(value) = value {
            body.insert((*field).into(), value);
        }
    }
    // What the type's settings say is read as its calls will read it (a setting that could
    // never run is refused now, not at every call).
    super::type_settings::check(function_type, &input.settings)?;
    if function_type == "render" && !body.contains_key("renderConfig") {
        return Err(ServiceError::invalid_field("renderConfig", "is required for render functions"));
    }
    Ok(Value::Object(body))
}

/// `usedInWorkflows` of a function (every version, or just `version`).
fn used_in<'a>(
    uses: impl IntoIterator<Item = &'a FunctionUse>,
    function_id: &str,
    version: Option<i64>,
) -> Value {
    let mut out: Vec<Value> = Vec::new();
    for entry in uses {
        if entry.function_id != function_id || version.is_some_and(|v| v != entry.function_version_num) {
            continue;
        }
        let same = out.last_mut().filter(|last| last["workflowID"] == entry.workflow_id.as_str());
        match same {
            Some(last) => {
                let nums = last["usedInWorkflowVersionNums"].as_array_mut().expect("built as an array");
                // Uses come in workflow version order: a repeat is the last one.
                if nums.last() != Some(&json!(entry.workflow_version_num)) {
                    nums.push(json!(entry.workflow_version_num));
                }
            }
            None => out.push(json!({
                "workflowID": entry.workflow_id,
                "workflowName": entry.workflow_name,
                "currentVersionNum": entry.workflow_current_version,
                "usedInWorkflowVersionNums": [entry.workflow_version_num],
            })),
        }
    }
    Value::Array(out)
}

/// A function (or one version) as the API returns it.
fn function_json(record: &FunctionRecord, used_in_workflows: Value, include_extra: bool) -> Value {
    let mut out = Map::new();
    out.insert("functionID".into(), json!(record.head.id));
    out.insert("functionName".into(), json!(record.head.name));
    out.insert("versionNum".into(), json!(record.version.version_num));
    if let Value::Object(body) = &record.version.body {
        for (key, value) in body {
            if key != "extraConfig" || include_extra {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if include_extra && !out.contains_key("extraConfig") {
        out.insert("extraConfig".into(), json!({}));
    }
    out.insert("emailAddress".into(), json!(inbound_address(&record.head.id)));
    out.insert("audit".into(), record.version.audit.clone());
    out.insert("createdAt".into(), json!(ids::millis_rfc3339(record.version.created_at)));
    out.insert("usedInWorkflows".into(), used_in_workflows);
    Value::Object(out)
}

/// Whether a function matches `filter`; `mine` are its uses.
fn matches(filter: &FunctionFilter, record: &FunctionRecord, mine: &[&FunctionUse]) -> bool {
    let head = &record.head;
    let body = &record.version.body;
    let any_or_all = |list: &[String], hit: &dyn Fn(&String) -> bool| list.is_empty() || list.iter().any(hit);
    let current = |u: &&&FunctionUse| u.workflow_version_num == u.workflow_current_version;
    any_or_all(&filter.function_ids, &|id| *id == head.id)
        && any_or_all(&filter.function_names, &|name| *name == head.name)
        && any_or_all(&filter.types, &|t| *t == record.version.function_type)
        && any_or_all(&filter.tags, &|tag| {
            body["tags"].as_array().is_some_and(|tags| tags.contains(&json!(tag)))
        })
        && filter.display_name.as_ref().is_none_or(|needle| {
            body["displayName"].as_str().is_some_and(|d| d.to_lowercase().contains(&needle.to_lowercase()))
        })
        && any_or_all(&filter.workflow_ids, &|id| mine.iter().filter(current).any(|u| u.workflow_id == *id))
        && any_or_all(&filter.workflow_names, &|name| {
            mine.iter().filter(current).any(|u| u.workflow_name == *name)
        })
        && (filter.workflow_id_versions.is_empty()
            || filter
                .workflow_id_versions
                .iter()
                .any(|(id, n)| mine.iter().any(|u| u.workflow_id == *id && u.workflow_version_num == *n)))
        && (filter.workflow_name_versions.is_empty()
            || filter.workflow_name_versions.iter().any(|(name, n)| {
                mine.iter().any(|u| u.workflow_name == *name && u.workflow_version_num == *n)
            }))
}

impl FunctionsService {
    pub fn new(records: Records, egress: Arc<Egress>, secrets: SecretsService) -> Self {
        Self { records, egress, secrets }
    }

    /// The author of a change: the API key's name, or the dashboard user (with e-mail).
    pub async fn author(
        &self,
        api_key_name: Option<String>,
        user_id: Option<String>,
    ) -> ServiceResult<Author> {
        let user_email = match &user_id {
            Some(id) => self.records.find_user(id).await?.map(|user| user.email),
            None => None,
        };
        Ok(Author { user_id, user_email, api_key_name })
    }

    pub(crate) async fn function_record(&self, tenant: &Tenant, name: &str) -> ServiceResult<FunctionRecord> {
        self.records
            .find_function(tenant.owner(), name)
            .await?
            .ok_or_else(|| ServiceError::not_found("function", name))
    }

    /// Creates a function at version 1.
    pub async fn create_function(
        &self,
        tenant: &Tenant,
        author: &Author,
        input: FunctionInput,
    ) -> ServiceResult<Value> {
        let name = input
            .function_name
            .clone()
            .ok_or_else(|| ServiceError::invalid_field("functionName", "is required"))?;
        validate::name("functionName", &name)?;
        let function_type =
            input.function_type.clone().ok_or_else(|| ServiceError::invalid_field("type", "is required"))?;
        validate::function_type(&function_type)?;
        let body = build_body(&function_type, &input, None)?;
        validate::timeouts(&body)?;
        reach::check(&body, tenant, &self.egress, &self.secrets).await?;
        let now = ids::now_millis();
        let action = author.action(now);
        let audit = json!({
            "functionCreatedBy": action,
            "functionLastUpdatedBy": action,
            "versionCreatedBy": action,
        });
        let head =
            FunctionRow { id: ids::new_id("fn"), name, current_version: 1, created_at: now, updated_at: now };
        let version = StoredFunctionVersion { version_num: 1, function_type, body, audit, created_at: now };
        if !self.records.insert_function(tenant.owner(), &head, &version).await? {
            return Err(ServiceError::Conflict(format!(
                "function name already exists: {:?} is taken in this environment; choose another \
                 functionName",
                head.name
            )));
        }
        Ok(function_json(&FunctionRecord { head, version }, json!([]), false))
    }

    /// A function at its current version.
    pub async fn function(&self, tenant: &Tenant, name: &str, include_extra: bool) -> ServiceResult<Value> {
        let record = self.function_record(tenant, name).await?;
        let uses =
            self.records.function_uses(tenant.owner(), Some(std::slice::from_ref(&record.head.id))).await?;
        Ok(function_json(&record, used_in(&uses, &record.head.id, None), include_extra))
    }

    /// Writes the next version: `input` over the current one.
    pub async fn update_function(
        &self,
        tenant: &Tenant,
        author: &Author,
        name: &str,
        input: FunctionInput,
    ) -> ServiceResult<Value> {
        let current = self.function_record(tenant, name).await?;
        let new_name = input.function_name.clone().unwrap_or_else(|| current.head.name.clone());
        validate::name("functionName", &new_name)?;
        let function_type =
            input.function_type.clone().unwrap_or_else(|| current.version.function_type.clone());
        validate::function_type(&function_type)?;
        let body = build_body(&function_type, &input, Some(&current.version.body))?;
        validate::timeouts(&body)?;
        reach::check(&body, tenant, &self.egress, &self.secrets).await?;
        let now = ids::now_millis();
        let action = author.action(now);
        let created_by = current.version.audit.get("functionCreatedBy").cloned().unwrap_or(Value::Null);
        let audit = json!({
            "functionCreatedBy": created_by,
            "functionLastUpdatedBy": action,
            "versionCreatedBy": action,
        });
        let version = StoredFunctionVersion {
            version_num: current.head.current_version + 1,
            function_type,
            body,
            audit,
            created_at: now,
        };
        let saved = self
            .records
            .add_function_version(
                tenant.owner(),
                &current.head.id,
                current.head.current_version,
                &new_name,
                &version,
            )
            .await?;
        match saved {
            Saved::Done => {}
            Saved::NameTaken => {
                return Err(ServiceError::Conflict(format!(
                    "function name already exists: {new_name:?} is taken in this environment"
                )))
            }
            Saved::Stale => {
                return Err(ServiceError::ConcurrentChange(format!(
                    "function {name:?} was changed by another request meanwhile; read it and retry"
                )))
            }
        }
        let head = FunctionRow {
            name: new_name,
            current_version: version.version_num,
            updated_at: now,
            ..current.head
        };
        let uses = self.records.function_uses(tenant.owner(), Some(std::slice::from_ref(&head.id))).await?;
        let used = used_in(&uses, &head.id, None);
        Ok(function_json(&FunctionRecord { head, version }, used, false))
    }

    /// Deletes a function and every version, unless a workflow's current version runs it.
    pub async fn delete_function(&self, tenant: &Tenant, name: &str) -> ServiceResult<()> {
        let record = self.function_record(tenant, name).await?;
        if self.records.delete_function(tenant.owner(), &record.head.id).await? {
            return Ok(());
        }
        let holders = self.records.workflows_running(tenant.owner(), &record.head.id).await?;
        if holders.is_empty() {
            return Err(ServiceError::not_found("function", name));
        }
        Err(ServiceError::Conflict(format!(
            "function {name:?} is used by workflow {}; point those workflows at another function \
             (or delete them) first",
            holders.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", ")
        )))
    }

    /// A page of the environment's functions at their current version, and how many match.
    pub async fn list_functions(
        &self,
        tenant: &Tenant,
        filter: &FunctionFilter,
        page: &Page<String>,
        include_extra: bool,
    ) -> ServiceResult<(Vec<Value>, usize)> {
        for function_type in &filter.types {
            validate::function_type(function_type).map_err(|_| {
                ServiceError::invalid_field(
                    "types",
                    format!(
                        "unknown function type {function_type:?}; allowed: {}",
                        validate::FUNCTION_TYPES.join(", ")
                    ),
                )
            })?;
        }
        // Filtered on summaries, and only the page read whole.
        let summaries = self.records.current_function_summaries(tenant.owner()).await?;
        let uses = self.records.function_uses(tenant.owner(), None).await?;
        // Grouped once: each function scanning every use was functions x uses.
        let mut by_function: HashMap<&str, Vec<&FunctionUse>> = HashMap::new();
        for entry in &uses {
            by_function.entry(entry.function_id.as_str()).or_default().push(entry);
        }
        let mine = |id: &str| by_function.get(id).map_or(&[][..], Vec::as_slice);
        let matching: Vec<String> = summaries
            .into_iter()
            .filter(|r| matches(filter, r, mine(&r.head.id)))
            .map(|r| r.head.id)
            .collect();
        let total = matching.len();
        let ids = page.from_cursor(page.take(matching, String::clone));
        let read = self.records.current_functions_by_ids(tenant.owner(), &ids, listing::PAGE_BYTES).await?;
        let functions = page
            .from_cursor(read)
            .iter()
            .map(|r| {
                function_json(r, used_in(mine(&r.head.id).iter().copied(), &r.head.id, None), include_extra)
            })
            .collect();
        Ok((functions, total))
    }

    /// A page of one function's versions, and how many it has.
    pub async fn function_versions(
        &self,
        tenant: &Tenant,
        name: &str,
        page: &Page<i64>,
    ) -> ServiceResult<(Vec<Value>, usize)> {
        let current = self.function_record(tenant, name).await?;
        // Paged on the version numbers, and only the page read whole.
        let nums = self.records.function_version_nums(tenant.owner(), &current.head.id).await?;
        let uses =
            self.records.function_uses(tenant.owner(), Some(std::slice::from_ref(&current.head.id))).await?;
        let total = nums.len();
        let nums = page.from_cursor(page.take(nums, |n| *n));
        let read = self
            .records
            .function_versions_numbered(tenant.owner(), &current.head.id, &nums, listing::PAGE_BYTES)
            .await?;
        let versions = page
            .from_cursor(read)
            .into_iter()
            .map(|version| {
                let used = used_in(&uses, &current.head.id, Some(version.version_num));
                function_json(&FunctionRecord { head: current.head.clone(), version }, used, false)
            })
            .collect();
        Ok((versions, total))
    }

    /// One version of a function, with the workflow versions that run it.
    pub async fn function_version(
        &self,
        tenant: &Tenant,
        name: &str,
        version_num: i64,
        include_extra: bool,
    ) -> ServiceResult<Value> {
        let current = self.function_record(tenant, name).await?;
        let record = self
            .records
            .function_version_by_id(tenant.owner(), &current.head.id, version_num)
            .await?
            .ok_or_else(|| ServiceError::not_found("function version", format!("{name} v{version_num}")))?;
        let uses =
            self.records.function_uses(tenant.owner(), Some(std::slice::from_ref(&record.head.id))).await?;
        Ok(function_json(&record, used_in(&uses, &record.head.id, Some(version_num)), include_extra))
    }
}
