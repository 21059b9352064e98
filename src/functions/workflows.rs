//! The behaviour of workflows: create, read, update (each a new immutable version), delete,
//! the list and the version history.
//!
//! A version body holds `displayName`, `tags`, `mainNodeName`, `nodes` (each
//! `{name, function: {id, name, versionNum}, metadata}`, the function pinned), `edges`,
//! `connectors` and `audit`. Connectors are current state, not history: a version read
//! (`/versions/{n}`) shows none, and a PATCH without `connectors` keeps them. Nodes reference
//! a function by `id` or `name`; a node without `name` takes the function's name, one
//! without `versionNum` is pinned to the function's current version (see the module docs
//! of [`super`]). Errors: no nodes or a malformed field → 400; an unknown function or
//! version, duplicate node names, a `mainNodeName` not among the nodes or receiving an edge,
//! an edge to or from an unknown node, a cycle, an edge's `destinationName` that is not an
//! outlet of its source (a classification or semantic item class name of the pinned
//! function version) → 422; a name collision → 409.

use super::listing::{self, Page};
use super::service::FunctionsService;
use super::{inbound_address, validate, Author};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::functions::Saved;
use crate::store::records::workflows::{Pin, StoredWorkflowVersion, WorkflowRecord, WorkflowRow};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use utoipa::ToSchema;

/// A workflow as sent to create or update it (every field optional on update).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowInput {
    pub name: Option<String>,
    pub main_node_name: Option<String>,
    pub nodes: Option<Vec<NodeInput>>,
    pub edges: Option<Vec<EdgeInput>>,
    pub display_name: Option<String>,
    pub tags: Option<Vec<String>>,
    pub connectors: Option<Vec<ConnectorInput>>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NodeInput {
    pub name: Option<String>,
    pub function: FunctionRef,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

/// A function by `id` or `name`, optionally pinned to `versionNum`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionRef {
    pub id: Option<String>,
    pub name: Option<String>,
    pub version_num: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EdgeInput {
    pub source_node_name: String,
    pub destination_node_name: String,
    pub destination_name: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

/// A workflow's connector, as a workflow's create and update take it.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = WorkflowConnectorInput)]
pub struct ConnectorInput {
    pub name: String,
    #[serde(rename = "type")]
    pub connector_type: String,
    #[serde(rename = "connectorID")]
    pub connector_id: Option<String>,
    pub paragon: Option<ParagonInput>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ParagonInput {
    pub integration: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub configuration: Option<Value>,
}

/// Filters of the workflow list, ANDed; function filters look at the current version.
#[derive(Clone, Debug, Default)]
pub struct WorkflowFilter {
    pub workflow_ids: Vec<String>,
    pub workflow_names: Vec<String>,
    pub display_name: Option<String>,
    pub tags: Vec<String>,
    pub function_ids: Vec<String>,
    pub function_names: Vec<String>,
    pub function_id_versions: Vec<(String, i64)>,
    pub function_name_versions: Vec<(String, i64)>,
}

/// The connector types canon stores.
pub const CONNECTOR_TYPES: [&str; 1] = ["paragon"];

/// A resolved graph, ready to store.
struct Topology {
    main: String,
    nodes: Vec<Value>,
    edges: Vec<Value>,
    pins: Vec<Pin>,
}

fn metadata(field: String, value: Option<Value>) -> ServiceResult<Value> {
    match value {
        None | Some(Value::Null) => Ok(json!({})),
        Some(value @ Value::Object(_)) => Ok(value),
        Some(_) => Err(ServiceError::invalid_field(&field, "must be an object")),
    }
}

fn unprocessable(field: String, message: String) -> ServiceError {
    ServiceError::Unprocessable { details: Some(json!({ "field": field, "error": message })), message }
}

/// The pins of stored nodes.
fn pins_of(nodes: &[Value]) -> Vec<Pin> {
    nodes
        .iter()
        .map(|node| {
            let function = &node["function"];
            (
                function["id"].as_str().unwrap_or_default().to_string(),
                function["name"].as_str().unwrap_or_default().to_string(),
                function["versionNum"].as_i64().unwrap_or(1),
            )
        })
        .collect()
}

/// The connectors after a write: `given` replaces `previous` (kept entries by `connectorID`).
fn connectors(given: Vec<ConnectorInput>, previous: &Value) -> ServiceResult<Vec<Value>> {
    let previous = previous.as_array().cloned().unwrap_or_default();
    given
        .into_iter()
        .enumerate()
        .map(|(index, connector)| {
            if !CONNECTOR_TYPES.contains(&connector.connector_type.as_str()) {
                return Err(ServiceError::invalid_field(
                    &format!("connectors[{index}].type"),
                    format!(
                        "must be one of {} (got {:?})",
                        CONNECTOR_TYPES.join(", "),
                        connector.connector_type
                    ),
                ));
            }
            if connector.name.is_empty() {
                return Err(ServiceError::invalid_field(&format!("connectors[{index}].name"), "is required"));
            }
            let existing = match &connector.connector_id {
                Some(id) => {
                    Some(previous.iter().find(|c| c["connectorID"] == id.as_str()).ok_or_else(|| {
                        unprocessable(
                            format!("connectors[{index}].connectorID"),
                            format!("connectors[{index}].connectorID: the workflow has no connector {id:?}"),
                        )
                    })?)
                }
                None => None,
            };
            let paragon =
                connector.paragon.unwrap_or(ParagonInput { integration: None, configuration: None });
            let before = existing.map(|c| &c["paragon"]);
            let sync_id = before
                .and_then(|p| p["syncID"].as_str().map(String::from))
                .unwrap_or_else(|| ids::new_id("sync"));
            let integration = paragon
                .integration
                .or_else(|| before.and_then(|p| p["integration"].as_str().map(String::from)))
                .unwrap_or_default();
            let configuration = paragon
                .configuration
                .or_else(|| before.map(|p| p["configuration"].clone()))
                .filter(|c| !c.is_null())
                .unwrap_or(json!({}));
            Ok(json!({
                "connectorID": connector.connector_id.unwrap_or_else(|| ids::new_id("con")),
                "name": connector.name,
                "type": connector.connector_type,
                "paragon": { "integration": integration, "configuration": configuration, "syncID": sync_id },
            }))
        })
        .collect()
}

/// The labelled outlets of a function version that edges may name as `destinationName`:
/// its classifications' names (classify, route) or its semantic split's item classes.
fn outlets(body: &Value) -> Vec<String> {
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .map(|items| items.iter().filter_map(|item| item["name"].as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let mut outlets = names(&body["classifications"]);
    outlets.extend(names(&body["semanticPageSplitConfig"]["itemClasses"]));
    outlets
}

/// A workflow (current, or one version) as the API returns it.
fn workflow_json(head: &WorkflowRow, version: &StoredWorkflowVersion, current: bool) -> Value {
    let body = &version.body;
    let mut out = json!({
        "id": head.id,
        "name": head.name,
        "versionNum": version.version_num,
        "emailAddress": inbound_address(&head.id),
        "tags": body.get("tags").cloned().unwrap_or(json!([])),
        "mainNodeName": body["mainNodeName"],
        "nodes": body.get("nodes").cloned().unwrap_or(json!([])),
        "edges": body.get("edges").cloned().unwrap_or(json!([])),
        "connectors": if current { body.get("connectors").cloned().unwrap_or(json!([])) } else { json!([]) },
        "createdAt": ids::millis_rfc3339(head.created_at),
        "updatedAt": ids::millis_rfc3339(version.created_at),
        "audit": body.get("audit").cloned().unwrap_or(json!({})),
        "restricted": false,
    });
    if let Some(name) = body.get("displayName").filter(|v| !v.is_null()) {
        out["displayName"] = name.clone();
    }
    out
}

fn matches(
    filter: &WorkflowFilter,
    record: &WorkflowRecord,
    named: &HashMap<String, Option<String>>,
) -> bool {
    let body = &record.version.body;
    let nodes: Vec<(String, String, i64)> =
        pins_of(body["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]));
    // A function name matches a node by the name it was saved with or by the function that
    // bears the name now.
    let is_named = |node: &(String, String, i64), name: &str| {
        node.1 == name || named.get(name).is_some_and(|id| id.as_deref() == Some(node.0.as_str()))
    };
    let any_or_all = |list: &[String], hit: &dyn Fn(&String) -> bool| list.is_empty() || list.iter().any(hit);
    any_or_all(&filter.workflow_ids, &|id| *id == record.head.id)
        && any_or_all(&filter.workflow_names, &|name| *name == record.head.name)
        && any_or_all(&filter.tags, &|tag| {
            body["tags"].as_array().is_some_and(|tags| tags.contains(&json!(tag)))
        })
        && filter.display_name.as_ref().is_none_or(|needle| {
            body["displayName"].as_str().is_some_and(|d| d.to_lowercase().contains(&needle.to_lowercase()))
        })
        && any_or_all(&filter.function_ids, &|id| nodes.iter().any(|n| n.0 == *id))
        && any_or_all(&filter.function_names, &|name| nodes.iter().any(|n| is_named(n, name)))
        && (filter.function_id_versions.is_empty()
            || filter
                .function_id_versions
                .iter()
                .any(|(id, v)| nodes.iter().any(|n| n.0 == *id && n.2 == *v)))
        && (filter.function_name_versions.is_empty()
            || filter
                .function_name_versions
                .iter()
                .any(|(name, v)| nodes.iter().any(|n| is_named(n, name) && n.2 == *v)))
}

impl FunctionsService {
    async fn workflow_record(&self, tenant: &Tenant, name: &str) -> ServiceResult<WorkflowRecord> {
        self.records
            .find_workflow(tenant.owner(), name)
            .await?
            .ok_or_else(|| ServiceError::not_found("workflow", name))
    }

    /// Resolves and checks a graph: each node's function pinned, names defaulted.
    async fn topology(
        &self,
        tenant: &Tenant,
        main: String,
        nodes: Vec<NodeInput>,
        edges: Vec<EdgeInput>,
    ) -> ServiceResult<Topology> {
        if nodes.is_empty() {
            return Err(ServiceError::invalid_field("nodes", "must hold at least one node"));
        }
        validate::graph_size(nodes.len(), edges.len())?;
        let mut stored_nodes = Vec::new();
        let mut pins = Vec::new();
        let mut bodies = Vec::new();
        for (index, node) in nodes.into_iter().enumerate() {
            let (stored, pin, body) = self.resolve_node(tenant, index, node).await?;
            stored_nodes.push(stored);
            pins.push(pin);
            bodies.push(body);
        }
        validate::plan_size(&bodies)?;
        let names: Vec<String> =
            stored_nodes.iter().map(|n| n["name"].as_str().unwrap_or_default().to_string()).collect();
        let mut stored_edges = Vec::new();
        let mut pairs = Vec::new();
        for (index, edge) in edges.iter().enumerate() {
            let metadata = metadata(format!("edges[{index}].metadata"), edge.metadata.clone())?;
            let mut stored = json!({
                "sourceNodeName": edge.source_node_name,
                "destinationNodeName": edge.destination_node_name,
                "metadata": metadata,
            });
            if let Some(outlet) = &edge.destination_name {
                stored["destinationName"] = json!(outlet);
            }
            pairs.push((edge.source_node_name.clone(), edge.destination_node_name.clone()));
            stored_edges.push(stored);
        }
        validate::topology(&main, &names, &pairs)?;
        for (index, edge) in edges.iter().enumerate() {
            let Some(outlet) = &edge.destination_name else { continue };
            let source = names.iter().position(|n| *n == edge.source_node_name).unwrap_or_default();
            let known = outlets(&bodies[source]);
            if !known.contains(outlet) {
                let offered = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(unprocessable(
                    format!("edges[{index}].destinationName"),
                    format!(
                        "edges[{index}].destinationName: node {:?} has no outlet named {outlet:?} (its \
                         classifications or item classes: {offered})",
                        edge.source_node_name
                    ),
                ));
            }
        }
        Ok(Topology { main, nodes: stored_nodes, edges: stored_edges, pins })
    }

    /// One node: its function found by ID or name and pinned (to `versionNum`, else the
    /// current version); the stored node, its pin and the pinned version's body.
    async fn resolve_node(
        &self,
        tenant: &Tenant,
        index: usize,
        node: NodeInput,
    ) -> ServiceResult<(Value, Pin, Value)> {
        let field = format!("nodes[{index}]");
        if let Some(name) = &node.name {
            validate::name(&format!("{field}.name"), name)?;
        }
        let metadata = metadata(format!("{field}.metadata"), node.metadata)?;
        let reference = node.function;
        if reference.version_num.is_some_and(|v| v < 1) {
            return Err(ServiceError::invalid_field(
                &format!("{field}.function.versionNum"),
                "must be 1 or more",
            ));
        }
        let head = match (&reference.id, &reference.name) {
            (Some(id), _) => {
                self.records.find_function_by_id(tenant.owner(), id).await?.ok_or_else(|| {
                    unprocessable(
                        format!("{field}.function.id"),
                        format!("{field}.function: no function has ID {id:?}"),
                    )
                })?
            }
            (None, Some(name)) => {
                self.records.find_function(tenant.owner(), name).await?.map(|r| r.head).ok_or_else(|| {
                    unprocessable(
                        format!("{field}.function.name"),
                        format!("{field}.function: no function is named {name:?}"),
                    )
                })?
            }
            (None, None) => {
                return Err(ServiceError::invalid_field(
                    &format!("{field}.function"),
                    "give the function's id or name",
                ))
            }
        };
        if let (Some(_), Some(name)) = (&reference.id, &reference.name) {
            if *name != head.name {
                return Err(unprocessable(
                    format!("{field}.function"),
                    format!("{field}.function: ID {:?} is function {:?}, not {name:?}", head.id, head.name),
                ));
            }
        }
        let version = reference.version_num.unwrap_or(head.current_version);
        let pinned =
            self.records.function_version_by_id(tenant.owner(), &head.id, version).await?.ok_or_else(
                || {
                    unprocessable(
                        format!("{field}.function.versionNum"),
                        format!(
                            "{field}.function: function {:?} has no version {version} (its latest is {})",
                            head.name, head.current_version
                        ),
                    )
                },
            )?;
        let stored = json!({
            "name": node.name.unwrap_or_else(|| head.name.clone()),
            "function": { "id": head.id, "name": head.name, "versionNum": version },
            "metadata": metadata,
        });
        Ok((stored, (head.id, head.name, version), pinned.version.body))
    }

    /// Creates a workflow at version 1.
    pub async fn create_workflow(
        &self,
        tenant: &Tenant,
        author: &Author,
        input: WorkflowInput,
    ) -> ServiceResult<Value> {
        let name = input.name.ok_or_else(|| ServiceError::invalid_field("name", "is required"))?;
        validate::name("name", &name)?;
        let main =
            input.main_node_name.ok_or_else(|| ServiceError::invalid_field("mainNodeName", "is required"))?;
        let nodes = input.nodes.ok_or_else(|| ServiceError::invalid_field("nodes", "is required"))?;
        let connectors = connectors(input.connectors.unwrap_or_default(), &Value::Null)?;
        let topology = self.topology(tenant, main, nodes, input.edges.unwrap_or_default()).await?;
        let now = ids::now_millis();
        let action = author.action(now);
        let body = json!({
            "displayName": input.display_name,
            "tags": input.tags.unwrap_or_default(),
            "mainNodeName": topology.main,
            "nodes": topology.nodes,
            "edges": topology.edges,
            "connectors": connectors,
            "audit": {
                "workflowCreatedBy": action,
                "workflowLastUpdatedBy": action,
                "versionCreatedBy": action,
            },
        });
        let head = WorkflowRow {
            id: ids::new_id("wf"),
            name,
            current_version: 1,
            display_name: input.display_name,
            created_at: now,
            updated_at: now,
        };
        let version = StoredWorkflowVersion { version_num: 1, body, created_at: now };
        if !self.records.insert_workflow(tenant.owner(), &head, &version, &topology.pins).await? {
            return Err(ServiceError::Conflict(format!(
                "workflow name already exists: {:?} is taken in this environment; choose another name",
                head.name
            )));
        }
        Ok(workflow_json(&head, &version, true))
    }

    /// A workflow at its current version.
    pub async fn workflow(&self, tenant: &Tenant, name: &str) -> ServiceResult<Value> {
        let record = self.workflow_record(tenant, name).await?;
        Ok(workflow_json(&record.head, &record.version, true))
    }

    /// Writes the next version: `input` over the current one. `mainNodeName` and `nodes`
    /// (with `edges`, default none) change the graph together; without them it is copied.
    pub async fn update_workflow(
        &self,
        tenant: &Tenant,
        author: &Author,
        name: &str,
        input: WorkflowInput,
    ) -> ServiceResult<Value> {
        let current = self.workflow_record(tenant, name).await?;
        let previous = &current.version.body;
        let new_name = input.name.unwrap_or_else(|| current.head.name.clone());
        validate::name("name", &new_name)?;
        let connectors = match input.connectors {
            Some(given) => Value::Array(connectors(given, &previous["connectors"])?),
            None => previous.get("connectors").cloned().unwrap_or(json!([])),
        };
        let topology = match (input.main_node_name, input.nodes, input.edges) {
            (None, None, None) => {
                let nodes = previous["nodes"].as_array().cloned().unwrap_or_default();
                Topology {
                    main: previous["mainNodeName"].as_str().unwrap_or_default().to_string(),
                    pins: pins_of(&nodes),
                    nodes,
                    edges: previous["edges"].as_array().cloned().unwrap_or_default(),
                }
            }
            (Some(main), Some(nodes), edges) => {
                self.topology(tenant, main, nodes, edges.unwrap_or_default()).await?
            }
            _ => {
                return Err(ServiceError::Invalid {
                    message:
                        "mainNodeName, nodes and edges change the graph together: send mainNodeName and \
                              nodes (and edges, default none), or none of them to keep the graph"
                            .into(),
                    details: Some(
                        json!({ "fields": ["mainNodeName", "nodes", "edges"], "error": "sent apart" }),
                    ),
                })
            }
        };
        let display_name = input.display_name.or_else(|| previous["displayName"].as_str().map(String::from));
        let tags = input
            .tags
            .map(|t| json!(t))
            .unwrap_or_else(|| previous.get("tags").cloned().unwrap_or(json!([])));
        let now = ids::now_millis();
        let action = author.action(now);
        let created_by = previous["audit"].get("workflowCreatedBy").cloned().unwrap_or(Value::Null);
        let body = json!({
            "displayName": display_name,
            "tags": tags,
            "mainNodeName": topology.main,
            "nodes": topology.nodes,
            "edges": topology.edges,
            "connectors": connectors,
            "audit": {
                "workflowCreatedBy": created_by,
                "workflowLastUpdatedBy": action,
                "versionCreatedBy": action,
            },
        });
        let version =
            StoredWorkflowVersion { version_num: current.head.current_version + 1, body, created_at: now };
        let head = WorkflowRow {
            name: new_name,
            display_name,
            current_version: version.version_num,
            updated_at: now,
            ..current.head.clone()
        };
        let saved = self
            .records
            .add_workflow_version(
                tenant.owner(),
                &head,
                current.head.current_version,
                &version,
                &topology.pins,
            )
            .await?;
        match saved {
            Saved::Done => Ok(workflow_json(&head, &version, true)),
            Saved::NameTaken => Err(ServiceError::Conflict(format!(
                "workflow name already exists: {:?} is taken in this environment",
                head.name
            ))),
            Saved::Stale => Err(ServiceError::ConcurrentChange(format!(
                "workflow {name:?} was changed by another request meanwhile; read it and retry"
            ))),
        }
    }

    /// Deletes a workflow with every version; answers which one it was.
    pub async fn delete_workflow(&self, tenant: &Tenant, name: &str) -> ServiceResult<Value> {
        let record = self.workflow_record(tenant, name).await?;
        if !self.records.delete_workflow(tenant.owner(), &record.head.id).await? {
            return Err(ServiceError::not_found("workflow", name));
        }
        Ok(json!({
            "workflow": {
                "id": record.head.id,
                "name": record.head.name,
                "versionNum": record.head.current_version,
            },
            "connectorErrors": [],
        }))
    }

    /// A page of the environment's workflows at their current version, and how many match.
    pub async fn list_workflows(
        &self,
        tenant: &Tenant,
        filter: &WorkflowFilter,
        page: &Page<String>,
    ) -> ServiceResult<(Vec<Value>, usize)> {
        let mut named = HashMap::new();
        let names = filter.function_names.iter().chain(filter.function_name_versions.iter().map(|(n, _)| n));
        for name in names {
            if !named.contains_key(name) {
                let found = self.records.find_function(tenant.owner(), name).await?;
                named.insert(name.clone(), found.map(|r| r.head.id));
            }
        }
        // Filtered on summaries, and only the page read whole.
        let summaries = self.records.current_workflow_summaries(tenant.owner()).await?;
        let matching: Vec<String> =
            summaries.into_iter().filter(|r| matches(filter, r, &named)).map(|r| r.head.id).collect();
        let total = matching.len();
        let ids = page.from_cursor(page.take(matching, String::clone));
        let read = self.records.current_workflows_by_ids(tenant.owner(), &ids, listing::PAGE_BYTES).await?;
        let workflows =
            page.from_cursor(read).iter().map(|r| workflow_json(&r.head, &r.version, true)).collect();
        Ok((workflows, total))
    }

    /// A page of one workflow's versions, and how many it has.
    pub async fn workflow_versions(
        &self,
        tenant: &Tenant,
        name: &str,
        page: &Page<i64>,
    ) -> ServiceResult<(Vec<Value>, usize)> {
        let current = self.workflow_record(tenant, name).await?;
        // Paged on the version numbers, and only the page read whole.
        let nums = self.records.workflow_version_nums(tenant.owner(), &current.head.id).await?;
        let total = nums.len();
        let nums = page.from_cursor(page.take(nums, |n| *n));
        let read = self
            .records
            .workflow_versions_numbered(tenant.owner(), &current.head.id, &nums, listing::PAGE_BYTES)
            .await?;
        let versions =
            page.from_cursor(read).iter().map(|v| workflow_json(&current.head, v, false)).collect();
        Ok((versions, total))
    }

    /// One version of a workflow.
    pub async fn workflow_version(
        &self,
        tenant: &Tenant,
        name: &str,
        version_num: i64,
    ) -> ServiceResult<Value> {
        let current = self.workflow_record(tenant, name).await?;
        let version = self
            .records
            .workflow_versions_numbered(tenant.owner(), &current.head.id, &[version_num], usize::MAX)
            .await?
            .pop()
            .ok_or_else(|| ServiceError::not_found("workflow version", format!("{name} v{version_num}")))?;
        Ok(workflow_json(&current.head, &version, false))
    }
}
