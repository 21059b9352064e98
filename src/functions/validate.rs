//! What a function or workflow must satisfy before it is stored.
//!
//! - Names (functions and workflows): `^[a-zA-Z0-9_-]{1,128}$`.
//! - Function types: the spec's eight plus `bem-sdk`'s names (`classify`, `route`, `parse`,
//!   `payload_shaping`, `render`); see [`crate::versions::canonical_type`] for how they map.
//! - `outputSchema` must be a JSON object that passes its JSON Schema metaschema (draft
//!   detected from `$schema`, 2020-12 by default). Bounds, past which the answer is 400
//!   "model state limit exceeded": 64 KiB serialized, 10 levels of nested subschemas
//!   (`properties`, `items`, `allOf`, … each add one), 500 `properties` entries in all.
//! - A workflow graph: node names unique, `mainNodeName` among them and no edge's
//!   destination, every edge between known nodes, no cycle.
//! - `extraConfig.llm.timeoutSeconds`: a whole number of seconds within
//!   [`LLM_TIMEOUT_SECONDS`] (a tenant cannot hold a worker on a model for days).

use crate::error::ServiceError;
use crate::json_size::json_bytes;
use crate::versions::canonical_type;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// Every `type` a function may have.
pub const FUNCTION_TYPES: [&str; 12] = [
    "transform",
    "extract",
    "analyze",
    "join",
    "classify",
    "route",
    "split",
    "send",
    "enrich",
    "parse",
    "payload_shaping",
    "render",
];
/// Largest `outputSchema`, serialized.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Deepest nesting of subschemas in an `outputSchema` (the root is level 1).
pub const MAX_SCHEMA_DEPTH: usize = 10;
/// Most `properties` entries in an `outputSchema`, counted at every level.
pub const MAX_SCHEMA_PROPERTIES: usize = 500;
/// Longest name of a function, workflow or node.
pub const MAX_NAME_LEN: usize = 128;
/// Bounds of a function's `displayName` and `tags` (characters; tags in a list): lists
/// read and filter them for every function of a tenant.
pub const MAX_DISPLAY_NAME: usize = 200;
pub const MAX_TAGS: usize = 50;
pub const MAX_TAG: usize = 128;
/// What `extraConfig.llm.timeoutSeconds` may be (the engine clamps older versions into it).
pub const LLM_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=600;

/// Checks the timeouts a function body sets: today `extraConfig.llm.timeoutSeconds`.
pub fn timeouts(body: &Value) -> Result<(), ServiceError> {
    let Some(value) = body.pointer("/extraConfig/llm/timeoutSeconds").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    match crate::wire::whole_u64_of(value) {
        Some(seconds) if LLM_TIMEOUT_SECONDS.contains(&seconds) => Ok(()),
        _ => Err(ServiceError::invalid_field(
            "extraConfig.llm.timeoutSeconds",
            format!(
                "must be a whole number of seconds from {} to {} (got {value})",
                LLM_TIMEOUT_SECONDS.start(),
                LLM_TIMEOUT_SECONDS.end()
            ),
        )),
    }
}

/// Checks a function or workflow name.
pub fn name(field: &str, name: &str) -> Result<(), ServiceError> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if fine {
        Ok(())
    } else {
        Err(ServiceError::invalid_field(
            field,
            format!("must be 1 to {MAX_NAME_LEN} letters, digits, underscores or hyphens (got {name:?})"),
        ))
    }
}

/// A display name (under `field`) and tags as a version keeps them: tenant text of
/// [`MAX_DISPLAY_NAME`] characters, at most [`MAX_TAGS`] tags of [`MAX_TAG`] each.
pub fn labels(field: &str, display_name: Option<&str>, tags: Option<&[String]>) -> Result<(), ServiceError> {
    crate::text::check_opt(field, display_name)?;
    if let Some(name) = display_name {
        crate::text::check_len(field, name, MAX_DISPLAY_NAME, false)?;
    }
    let tags = tags.unwrap_or_default();
    if tags.len() > MAX_TAGS {
        return Err(ServiceError::invalid_field(
            "tags",
            format!("at most {MAX_TAGS} tags (got {})", tags.len()),
        ));
    }
    for (i, tag) in tags.iter().enumerate() {
        crate::text::check_len(&format!("tags[{i}]"), tag, MAX_TAG, false)?;
    }
    Ok(())
}

/// Checks a function type.
pub fn function_type(function_type: &str) -> Result<(), ServiceError> {
    if canonical_type(function_type).is_some() && FUNCTION_TYPES.contains(&function_type) {
        Ok(())
    } else {
        Err(ServiceError::invalid_field(
            "type",
            format!("unknown function type {function_type:?}; allowed: {}", FUNCTION_TYPES.join(", ")),
        ))
    }
}

/// Checks an `outputSchema`: an object, within the bounds, valid against its metaschema.
pub fn output_schema(schema: &Value) -> Result<(), ServiceError> {
    schema_at("outputSchema", schema)
}

/// Checks a JSON Schema a call validates outputs with (an `outputSchema`, a parse function's
/// `parseConfig.schema`), named `field` in its errors.
pub fn schema_at(field: &str, schema: &Value) -> Result<(), ServiceError> {
    if !schema.is_object() {
        return Err(ServiceError::invalid_field(field, "must be a JSON Schema object"));
    }
    let limit_exceeded =
        |why: String| ServiceError::invalid_field(field, format!("model state limit exceeded: {why}"));
    let size = json_bytes(schema);
    if size > MAX_SCHEMA_BYTES {
        return Err(limit_exceeded(format!("{size} bytes serialized; at most {MAX_SCHEMA_BYTES}")));
    }
    let mut shape = Shape::default();
    shape.measure(schema, 1);
    if shape.depth > MAX_SCHEMA_DEPTH {
        return Err(limit_exceeded(format!(
            "subschemas nest {} levels deep; at most {MAX_SCHEMA_DEPTH}",
            shape.depth
        )));
    }
    if shape.properties > MAX_SCHEMA_PROPERTIES {
        return Err(limit_exceeded(format!(
            "{} properties in all; at most {MAX_SCHEMA_PROPERTIES}",
            shape.properties
        )));
    }
    match jsonschema::meta::try_validate(schema) {
        // Its patterns compile within their bounds (a call builds the same validator).
        Ok(Ok(())) => super::schema_patterns::validator(schema)
            .map(drop)
            .map_err(|err| ServiceError::invalid_field(field, format!("not a valid JSON Schema: {err}"))),
        Ok(Err(err)) => Err(ServiceError::Invalid {
            message: format!("{field}: not a valid JSON Schema: {err} (at {})", err.instance_path),
            details: Some(json!({ "field": field, "error": err.to_string(),
                "path": err.instance_path.to_string() })),
        }),
        Err(err) => Err(ServiceError::invalid_field(field, format!("not a valid JSON Schema: {err}"))),
    }
}

/// How deep and how wide a schema is.
#[derive(Default)]
struct Shape {
    depth: usize,
    properties: usize,
}

impl Shape {
    fn measure(&mut self, schema: &Value, depth: usize) {
        self.depth = self.depth.max(depth);
        let Value::Object(map) = schema else { return };
        for (keyword, value) in map {
            match keyword.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                    if let Value::Object(children) = value {
                        if keyword == "properties" {
                            self.properties += children.len();
                        }
                        children.values().for_each(|child| self.measure(child, depth + 1));
                    }
                }
                "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => match value {
                    Value::Array(children) => {
                        children.iter().for_each(|child| self.measure(child, depth + 1))
                    }
                    other => self.measure(other, depth + 1),
                },
                "additionalProperties"
                | "additionalItems"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedItems"
                | "unevaluatedProperties" => self.measure(value, depth + 1),
                _ => {}
            }
        }
    }
}

fn unprocessable(message: String, details: Value) -> ServiceError {
    ServiceError::Unprocessable { message, details: Some(details) }
}

/// Most nodes and edges a workflow has: each node is resolved on save, and a call runs a
/// node once for each payload that reaches it (bounded by the call's runs, but a graph of
/// thousands fully connected made that bound the only one).
pub const MAX_NODES: usize = 200;
pub const MAX_EDGES: usize = 1_000;
/// Most the function versions a workflow's nodes run may hold together (serialized, a
/// version counted once per node that runs it): every call stores its plan, the workflow
/// with each node's function, and 200 nodes of 2 MB functions made 400 MB a call.
pub const MAX_PLAN_BYTES: usize = 4 * 1024 * 1024;

/// Refuses a workflow past [`MAX_NODES`] or [`MAX_EDGES`] (400 naming the field).
pub fn graph_size(nodes: usize, edges: usize) -> Result<(), ServiceError> {
    if nodes > MAX_NODES {
        return Err(ServiceError::invalid_field("nodes", format!("at most {MAX_NODES} nodes (got {nodes})")));
    }
    if edges > MAX_EDGES {
        return Err(ServiceError::invalid_field("edges", format!("at most {MAX_EDGES} edges (got {edges})")));
    }
    Ok(())
}

/// Refuses a workflow whose nodes' function versions hold more than [`MAX_PLAN_BYTES`].
pub fn plan_size(bodies: &[Value]) -> Result<(), ServiceError> {
    let bytes: usize = bodies.iter().map(json_bytes).sum();
    if bytes > MAX_PLAN_BYTES {
        return Err(ServiceError::invalid_field(
            "nodes",
            format!(
                "the functions the nodes run hold {} KiB together (a function once for each node \
                 that runs it), past the {} KiB a workflow's plan may hold",
                bytes / 1024,
                MAX_PLAN_BYTES / 1024
            ),
        ));
    }
    Ok(())
}

/// Checks a workflow graph: `nodes` are the node names in order, `edges` pairs of
/// (source, destination) node names.
pub fn topology(main: &str, nodes: &[String], edges: &[(String, String)]) -> Result<(), ServiceError> {
    let mut seen = HashSet::new();
    for node in nodes {
        if !seen.insert(node.as_str()) {
            return Err(unprocessable(
                format!("node name {node:?} is used by more than one node; node names must be unique"),
                json!({ "field": "nodes", "node": node }),
            ));
        }
    }
    if !seen.contains(main) {
        return Err(unprocessable(
            "workflow mainNodeName must be one of nodes[].name".into(),
            json!({ "field": "mainNodeName", "mainNodeName": main, "nodes": nodes }),
        ));
    }
    for (index, (source, destination)) in edges.iter().enumerate() {
        for (field, node) in [("sourceNodeName", source), ("destinationNodeName", destination)] {
            if !seen.contains(node.as_str()) {
                return Err(unprocessable(
                    format!("edges[{index}].{field}: no node is named {node:?}"),
                    json!({ "field": format!("edges[{index}].{field}"), "node": node }),
                ));
            }
        }
        if destination == main {
            return Err(unprocessable(
                format!("edges[{index}]: the main node {main:?} cannot be the destination of an edge"),
                json!({ "field": format!("edges[{index}].destinationNodeName"), "node": main }),
            ));
        }
    }
    if let Some(node) = cycle(nodes, edges) {
        return Err(unprocessable(
            format!("the edges form a cycle through node {node:?}; a workflow must be acyclic"),
            json!({ "field": "edges", "node": node }),
        ));
    }
    Ok(())
}

/// A node on a cycle, if the graph has one (Kahn's algorithm: whatever cannot be ordered
/// lies on or behind a cycle).
fn cycle(nodes: &[String], edges: &[(String, String)]) -> Option<String> {
    let mut incoming: HashMap<&str, usize> = nodes.iter().map(|n| (n.as_str(), 0)).collect();
    for (_, destination) in edges {
        *incoming.entry(destination.as_str()).or_default() += 1;
    }
    let mut ready: Vec<&str> = nodes.iter().map(String::as_str).filter(|n| incoming[n] == 0).collect();
    let mut ordered = 0;
    while let Some(node) = ready.pop() {
        ordered += 1;
        for (source, destination) in edges {
            if source == node {
                let count = incoming.get_mut(destination.as_str())?;
                *count -= 1;
                if *count == 0 {
                    ready.push(destination);
                }
            }
        }
    }
    (ordered < nodes.len())
        .then(|| nodes.iter().find(|n| incoming[n.as_str()] > 0).cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workflow_past_its_nodes_edges_or_plan_bytes_is_refused_naming_them() {
        assert!(graph_size(MAX_NODES, MAX_EDGES).is_ok());
        let nodes = graph_size(MAX_NODES + 1, 0).unwrap_err().to_string();
        assert!(nodes.starts_with("nodes: at most 200 nodes (got 201)"), "{nodes}");
        let edges = graph_size(1, MAX_EDGES + 1).unwrap_err().to_string();
        assert!(edges.starts_with("edges: at most 1000 edges (got 1001)"), "{edges}");
        let function = json!({ "prompt": "x".repeat(1_000_000) });
        assert!(plan_size(&vec![function.clone(); 4]).is_ok());
        let plan = plan_size(&vec![function; 5]).unwrap_err().to_string();
        assert!(plan.contains("past the 4096 KiB a workflow's plan may hold"), "{plan}");
    }

    fn edges(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_cycle_is_found_and_a_diamond_is_not() {
        let nodes = names(&["a", "b", "c", "d"]);
        assert!(topology("a", &nodes, &edges(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])).is_ok());
        let looped = topology("a", &nodes, &edges(&[("a", "b"), ("b", "c"), ("c", "b")]));
        assert!(
            matches!(looped, Err(ServiceError::Unprocessable { message, .. }) if message.contains("cycle"))
        );
    }

    #[test]
    fn the_main_node_must_exist_and_receive_no_edge() {
        let nodes = names(&["a", "b"]);
        let missing = topology("x", &nodes, &[]);
        assert!(matches!(missing, Err(ServiceError::Unprocessable { message, .. })
            if message == "workflow mainNodeName must be one of nodes[].name"));
        assert!(topology("a", &nodes, &edges(&[("b", "a")])).is_err());
    }

    #[test]
    fn schemas_past_the_bounds_exceed_the_model_state_limit() {
        let mut deep = json!({ "type": "string" });
        for _ in 0..MAX_SCHEMA_DEPTH {
            deep = json!({ "type": "object", "properties": { "x": deep } });
        }
        let err = output_schema(&deep).unwrap_err();
        assert!(err.to_string().contains("model state limit exceeded"), "{err}");
        let fine = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
        assert!(output_schema(&fine).is_ok());
        assert!(output_schema(&json!({ "type": "no-such-type" })).is_err());
        assert!(output_schema(&json!([1])).is_err());
    }

    #[test]
    fn names_allow_letters_digits_underscores_and_hyphens() {
        assert!(name("functionName", "invoice_v2-a").is_ok());
        assert!(name("functionName", "a b").is_err());
        assert!(name("functionName", "").is_err());
        assert!(name("functionName", &"x".repeat(129)).is_err());
    }
}
