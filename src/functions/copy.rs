//! Copies: `POST /v3/functions/copy` forks a function's current version into a new function
//! at version 1 (no history), in the same environment or `targetEnvironment`;
//! `POST /v3/workflows/copy` forks a workflow version into a new workflow at version 1.
//! Within one environment the copy's nodes share the source's functions; copied to another
//! environment, each function the workflow runs is copied there first (same name, the
//! pinned version's configuration, at version 1) and listed in `copiedFunctions`.
//!
//! Connectors are not copied: they bind one workflow to an outside system.

use super::service::FunctionsService;
use super::workflows::{EdgeInput, FunctionRef, NodeInput, WorkflowInput};
use super::{reach, validate, Author};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::functions::{FunctionRow, StoredFunctionVersion};
use crate::store::records::keys::Environment;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionCopyInput {
    pub source_function_name: String,
    pub target_function_name: String,
    pub target_display_name: Option<String>,
    pub tags: Option<Vec<String>>,
    /// `production` or `sandbox`; default the caller's.
    pub target_environment: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowCopyInput {
    pub source_workflow_name: String,
    pub target_workflow_name: String,
    /// Default: the current version.
    pub source_workflow_version_num: Option<i64>,
    pub target_display_name: Option<String>,
    pub tags: Option<Vec<String>>,
    pub target_environment: Option<String>,
}

/// A function copied along with a workflow.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CopiedFunction {
    #[serde(rename = "sourceFunctionID")]
    pub source_function_id: String,
    pub source_function_name: String,
    pub source_version_num: i64,
    #[serde(rename = "targetFunctionID")]
    pub target_function_id: String,
    pub target_function_name: String,
    pub target_version_num: i64,
}

/// The tenant a copy goes to.
fn target(tenant: &Tenant, environment: Option<&str>) -> ServiceResult<Tenant> {
    match environment.map(str::trim).filter(|e| !e.is_empty()) {
        None => Ok(tenant.clone()),
        Some(name) => {
            let environment = Environment::parse(name).ok_or_else(|| {
                ServiceError::invalid_field("targetEnvironment", "must be production or sandbox")
            })?;
            Ok(Tenant { account_id: tenant.account_id.clone(), environment })
        }
    }
}

impl FunctionsService {
    /// Copies a function's current version; answers the copy as `GET` does.
    pub async fn copy_function(
        &self,
        tenant: &Tenant,
        author: &Author,
        input: FunctionCopyInput,
    ) -> ServiceResult<Value> {
        validate::name("sourceFunctionName", &input.source_function_name)?;
        validate::name("targetFunctionName", &input.target_function_name)?;
        // Kept in the copy's version as an update keeps them: the same bounds.
        validate::labels("targetDisplayName", input.target_display_name.as_deref(), input.tags.as_deref())?;
        let to = target(tenant, input.target_environment.as_deref())?;
        let source = self.function_record(tenant, &input.source_function_name).await?;
        let display = input.target_display_name.clone();
        self.insert_copy(&to, author, &source.version, &input.target_function_name, display, input.tags)
            .await?;
        self.function(&to, &input.target_function_name, false).await
    }

    /// Writes `version` as a new function `name` at version 1 in `to`; returns its ID.
    async fn insert_copy(
        &self,
        to: &Tenant,
        author: &Author,
        version: &StoredFunctionVersion,
        name: &str,
        display_name: Option<String>,
        tags: Option<Vec<String>>,
    ) -> ServiceResult<String> {
        let mut body = version.body.clone();
        let source_display = body.get("displayName").and_then(Value::as_str).unwrap_or(name).to_string();
        body["displayName"] = json!(display_name.unwrap_or(format!("{source_display} (Copy)")));
        if let Some(tags) = tags {
            body["tags"] = json!(tags);
        }
        // The configuration must still reach what it names from the target environment
        // (its secrets are per environment).
        reach::check(&body, to, &self.egress, &self.secrets).await?;
        let now = ids::now_millis();
        let action = author.action(now);
        let audit = json!({ "functionCreatedBy": action, "functionLastUpdatedBy": action, "versionCreatedBy": action });
        let head = FunctionRow {
            id: ids::new_id("fn"),
            name: name.to_string(),
            current_version: 1,
            created_at: now,
            updated_at: now,
        };
        let copy = StoredFunctionVersion {
            version_num: 1,
            function_type: version.function_type.clone(),
            body,
            audit,
            created_at: now,
        };
        if !self.records.insert_function(to.owner(), &head, &copy).await? {
            return Err(ServiceError::Conflict(format!(
                "function name already exists: {name:?} is taken in the {} environment",
                to.environment.as_str()
            )));
        }
        Ok(head.id)
    }

    /// Copies a workflow version; answers `{workflow, environment, copiedFunctions}`.
    pub async fn copy_workflow(
        &self,
        tenant: &Tenant,
        author: &Author,
        input: WorkflowCopyInput,
    ) -> ServiceResult<Value> {
        validate::name("sourceWorkflowName", &input.source_workflow_name)?;
        validate::name("targetWorkflowName", &input.target_workflow_name)?;
        let to = target(tenant, input.target_environment.as_deref())?;
        let source = self
            .records
            .find_workflow(tenant.owner(), &input.source_workflow_name)
            .await?
            .ok_or_else(|| ServiceError::not_found("workflow", &input.source_workflow_name))?;
        let version = match input.source_workflow_version_num {
            None => source.version.clone(),
            Some(num) => self
                .records
                .workflow_versions_numbered(tenant.owner(), &source.head.id, &[num], usize::MAX)
                .await?
                .pop()
                .ok_or_else(|| {
                    ServiceError::invalid_field(
                        "sourceWorkflowVersionNum",
                        format!("the workflow has no version {num}"),
                    )
                })?,
        };
        let body = &version.body;
        let other_environment = to.environment != tenant.environment;
        let mut copied: Vec<CopiedFunction> = Vec::new();
        let mut nodes = Vec::new();
        for node in body["nodes"].as_array().cloned().unwrap_or_default() {
            let function_name = node["function"]["name"].as_str().unwrap_or_default().to_string();
            let pinned = node["function"]["versionNum"].as_i64().unwrap_or(1);
            let version_num = if other_environment {
                if !copied.iter().any(|c| c.source_function_name == function_name) {
                    copied.push(self.copy_along(tenant, &to, author, &function_name, pinned).await?);
                }
                1
            } else {
                pinned
            };
            nodes.push(NodeInput {
                name: node["name"].as_str().map(str::to_string),
                function: FunctionRef { id: None, name: Some(function_name), version_num: Some(version_num) },
                metadata: node.get("metadata").cloned().filter(|m| !m.is_null()),
            });
        }
        let edges: Vec<EdgeInput> = serde_json::from_value(body["edges"].clone()).unwrap_or_default();
        let source_display = body["displayName"].as_str().unwrap_or(&source.head.name).to_string();
        let tags = input.tags.or_else(|| serde_json::from_value(body["tags"].clone()).ok());
        let workflow_input = WorkflowInput {
            name: Some(input.target_workflow_name.clone()),
            main_node_name: body["mainNodeName"].as_str().map(str::to_string),
            nodes: Some(nodes),
            edges: Some(edges),
            display_name: Some(input.target_display_name.unwrap_or(format!("{source_display} (Copy)"))),
            tags,
            connectors: None,
        };
        let created = self.create_workflow(&to, author, workflow_input).await?;
        Ok(json!({
            "workflow": created,
            "environment": to.environment.as_str(),
            "copiedFunctions": copied,
        }))
    }

    /// Copies one pinned function version into another environment under its own name.
    async fn copy_along(
        &self,
        from: &Tenant,
        to: &Tenant,
        author: &Author,
        name: &str,
        version_num: i64,
    ) -> ServiceResult<CopiedFunction> {
        let head = self.function_record(from, name).await?.head;
        let pinned =
            self.records.function_version_by_id(from.owner(), &head.id, version_num).await?.ok_or_else(
                || ServiceError::not_found("function version", format!("{name} v{version_num}")),
            )?;
        let display = pinned.version.body.get("displayName").and_then(Value::as_str).map(str::to_string);
        let display = display.unwrap_or_else(|| name.to_string());
        let id = self.insert_copy(to, author, &pinned.version, name, Some(display), None).await?;
        Ok(CopiedFunction {
            source_function_id: head.id,
            source_function_name: name.to_string(),
            source_version_num: version_num,
            target_function_id: id,
            target_function_name: name.to_string(),
            target_version_num: 1,
        })
    }
}
