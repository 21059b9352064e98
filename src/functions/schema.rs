//! The response shapes of functions and workflows, for the OpenAPI document. The service
//! builds responses as JSON (a version body carries the settings of its type); these types
//! describe them, and the API tests read real responses into them (unknown fields refused)
//! so the document cannot drift from what is served.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Who did something, and when.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditRecord {
    /// `ua_…`
    #[serde(rename = "userActionID")]
    pub user_action_id: String,
    /// The dashboard user, when the change came with a dashboard token.
    #[serde(rename = "userID")]
    pub user_id: Option<String>,
    pub user_email: Option<String>,
    /// The API key's name, when the change came with an API key.
    pub api_key_name: Option<String>,
    /// Never set: canon takes no changes by e-mail.
    pub email_address: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionAudit {
    pub function_created_by: AuditRecord,
    pub function_last_updated_by: AuditRecord,
    /// Who wrote this version.
    pub version_created_by: AuditRecord,
}

/// A workflow running the function (or, on a version, that version).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkflowUsage {
    #[serde(rename = "workflowID")]
    pub workflow_id: String,
    pub workflow_name: String,
    pub current_version_num: i64,
    pub used_in_workflow_version_nums: Vec<i64>,
}

/// A function at one version. Besides these fields it carries its type's own settings as
/// bem-sdk names them (`classifications`, `description`, `enableBoundingBoxes`, `preCount`,
/// `destinationType`, `webhookUrl`, `splitType`, `joinType`, `shapingSchema`, `config`,
/// `parseConfig`, `renderConfig`, …).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Function {
    /// `fn_…`
    #[serde(rename = "functionID")]
    pub function_id: String,
    pub function_name: String,
    pub version_num: i64,
    /// As sent: transform, extract, analyze, join, classify, route, split, send, enrich,
    /// parse, payload_shaping or render.
    #[serde(rename = "type")]
    pub function_type: String,
    pub display_name: Option<String>,
    pub tags: Vec<String>,
    /// A JSON Schema.
    #[schema(value_type = Object)]
    pub output_schema: Value,
    pub output_schema_name: String,
    /// `<functionID>@inbound.canon.local`, lower-case.
    pub email_address: String,
    pub tabular_chunking_enabled: bool,
    /// Only with `includeExtraSettings=true`.
    #[schema(value_type = Option<Object>)]
    pub extra_config: Option<Value>,
    /// When this version was written (RFC 3339).
    pub created_at: String,
    pub audit: FunctionAudit,
    pub used_in_workflows: Vec<WorkflowUsage>,
}

/// `{function}`
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FunctionEnvelope {
    pub function: Function,
}

/// A page of functions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionPage {
    pub functions: Vec<Function>,
    /// Every match, whatever the page.
    pub total_count: i64,
}

/// A page of a function's versions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionVersionPage {
    pub versions: Vec<Function>,
    pub total_count: i64,
}

/// A node's function, pinned to a version.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionPin {
    pub id: String,
    /// The function's name when the workflow version was saved.
    pub name: String,
    pub version_num: i64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowNode {
    pub name: String,
    pub function: FunctionPin,
    /// Stored and returned verbatim.
    #[schema(value_type = Object)]
    pub metadata: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkflowEdge {
    pub source_node_name: String,
    pub destination_node_name: String,
    /// The source's labelled outlet (a classification or item class name); absent for the
    /// default outlet.
    pub destination_name: Option<String>,
    #[schema(value_type = Object)]
    pub metadata: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParagonConnector {
    pub integration: String,
    #[schema(value_type = Object)]
    pub configuration: Value,
    #[serde(rename = "syncID")]
    pub sync_id: String,
}

/// A workflow's connector, stored as given (canon runs no third-party integration).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = WorkflowConnector)]
#[serde(deny_unknown_fields)]
pub struct Connector {
    /// `con_…`
    #[serde(rename = "connectorID")]
    pub connector_id: String,
    pub name: String,
    /// `paragon`
    #[serde(rename = "type")]
    pub connector_type: String,
    pub paragon: ParagonConnector,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkflowAudit {
    pub workflow_created_by: AuditRecord,
    pub workflow_last_updated_by: AuditRecord,
    pub version_created_by: AuditRecord,
}

/// A workflow at one version.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Workflow {
    /// `wf_…`
    pub id: String,
    pub name: String,
    pub version_num: i64,
    pub display_name: Option<String>,
    /// `<workflowID>@inbound.canon.local`, lower-case.
    pub email_address: String,
    pub tags: Vec<String>,
    pub main_node_name: String,
    pub nodes: Vec<WorkflowNode>,
    pub edges: Vec<WorkflowEdge>,
    /// Current state; empty on version reads.
    pub connectors: Vec<Connector>,
    pub created_at: String,
    /// When this version was written.
    pub updated_at: String,
    pub audit: WorkflowAudit,
    /// Always false.
    pub restricted: bool,
}

/// `{workflow}`
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowEnvelope {
    pub workflow: Workflow,
}

/// A per-connector teardown or provisioning error.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorError {
    #[serde(rename = "connectorID")]
    pub connector_id: Option<String>,
    pub name: Option<String>,
    pub code: String,
    pub message: String,
    /// `create`, `update` or `delete`.
    pub operation: String,
}

/// The answer to an update.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowUpdated {
    pub workflow: Workflow,
    /// Always empty.
    pub connector_errors: Vec<ConnectorError>,
}

/// Which workflow a delete removed, at the version it was on.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeletedWorkflow {
    pub id: String,
    pub name: String,
    pub version_num: i64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowDeleted {
    pub workflow: DeletedWorkflow,
    /// Always empty: there is no third-party teardown to fail.
    pub connector_errors: Vec<ConnectorError>,
}

/// A page of workflows.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowPage {
    pub workflows: Vec<Workflow>,
    pub total_count: i64,
}

/// A page of a workflow's versions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowVersionPage {
    pub versions: Vec<Workflow>,
    pub total_count: i64,
}
