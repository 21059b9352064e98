//! What the call executor needs of a workflow and its functions: one immutable version of
//! each, with every node's function pinned to a version. The records store keeps them and
//! the services (functions, calls, accuracy, engines) read them, so they sit below both.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The engine a function type runs on. `bem-sdk` names some types differently; they map
/// to these (see [`canonical_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Transform,
    Extract,
    Analyze,
    Join,
    Classify,
    Split,
    Send,
    Enrich,
}

/// Maps a function `type` as sent by a client to the engine it runs on, or `None` when the
/// type is unknown.
///
/// - `route` is the legacy name of `classify` (same route list, same outlets);
/// - `parse` extracts like `extract` and links what it finds into the knowledge graph
///   (cross-document linking on by default);
/// - `payload_shaping` reshapes JSON like `transform`, by its `shapingSchema` paths;
/// - `render` renders its input into a document like `transform` (schema-guided output).
pub fn canonical_type(function_type: &str) -> Option<Kind> {
    Some(match function_type {
        "transform" | "payload_shaping" | "render" => Kind::Transform,
        "extract" | "parse" => Kind::Extract,
        "analyze" => Kind::Analyze,
        "join" => Kind::Join,
        "classify" | "route" => Kind::Classify,
        "split" => Kind::Split,
        "send" => Kind::Send,
        "enrich" => Kind::Enrich,
        _ => return None,
    })
}

/// One immutable version of a function.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FunctionVersion {
    pub function_id: String,
    pub function_name: String,
    pub version_num: i64,
    /// The type as the client named it (`route`, `parse`, … kept as sent).
    pub function_type: String,
    /// The version as stored: `type`, `outputSchema`, the type's own settings,
    /// `extraConfig`, … (camelCase, as the API returns it).
    pub body: Value,
}

impl FunctionVersion {
    pub fn kind(&self) -> Kind {
        canonical_type(&self.function_type).unwrap_or(Kind::Transform)
    }
}

/// One immutable version of a workflow.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkflowVersion {
    pub workflow_id: String,
    pub workflow_name: String,
    pub version_num: i64,
    pub main_node_name: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// A call site: a function pinned to the version it runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    pub function_id: String,
    pub function_name: String,
    pub function_version_num: i64,
}

/// A directed edge; `destination_name` is the labelled outlet of the source that activates
/// it (a classify route's name), `None` for the default outlet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Edge {
    pub source_node_name: String,
    pub destination_node_name: String,
    pub destination_name: Option<String>,
}
