//! FalkorDB engine: the `falkordb` crate over a Unix socket (embedded child) or TCP.

use super::{CypherEngine, GraphError, Params, Row};
use async_trait::async_trait;
use falkordb::{
    AsyncGraph, ConstraintType, EntityType, FalkorClientBuilder, FalkorConnectionInfo, FalkorDBError,
    FalkorValue,
};
use futures::TryStreamExt;
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

const SCHEMA: &str = include_str!("../../../cypher/schema/falkordb.cypher");
/// Longest wait for one statement's answer.
const RESPONSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// One FalkorDB graph (every tenant shares it; every node carries its tenancy).
pub struct FalkorEngine {
    graph: AsyncGraph,
}

impl FalkorEngine {
    /// Connects to `url` (`unix:///path` or `redis://host:port`) and selects `graph_name`.
    pub async fn connect(url: &str, graph_name: &str) -> Result<Self, GraphError> {
        let info = FalkorConnectionInfo::try_from(url).map_err(unavailable)?;
        // A statement that never answers (a stuck or vanished server) becomes an error
        // instead of a request, job or test that waits forever.
        let client = FalkorClientBuilder::new_async()
            .with_connection_info(info)
            .with_response_timeout(Some(RESPONSE_TIMEOUT))
            .build()
            .await
            .map_err(unavailable)?;
        Ok(Self { graph: client.select_graph(graph_name) })
    }

    async fn ensure_unique(&self, label: &str, property: &str) -> Result<(), GraphError> {
        let mut graph = self.graph.clone();
        let existing = graph.list_constraints().await.map_err(query_error)?;
        let present = existing.data.iter().any(|c| {
            c.constraint_type == ConstraintType::Unique
                && c.label == label
                && c.properties == [property.to_string()]
        });
        if present {
            return Ok(());
        }
        graph
            .create_unique_constraint(EntityType::Node, label.to_string(), &[property])
            .await
            .map_err(query_error)?;
        Ok(())
    }
}

#[async_trait]
impl CypherEngine for FalkorEngine {
    async fn run(&self, cypher: &str, params: Params) -> Result<Vec<Row>, GraphError> {
        let params: HashMap<String, FalkorValue> = params
            .into_iter()
            .map(|(key, value)| {
                check_sendable(&key, &value)?;
                Ok((key, to_falkor(&value)?))
            })
            .collect::<Result<_, GraphError>>()?;
        let mut graph = self.graph.clone();
        let result = graph.query(cypher).with_params(params).execute().await.map_err(query_error)?;
        let rows: Vec<falkordb::Row> = result.data.try_collect().await.map_err(query_error)?;
        rows.into_iter()
            .map(|row| {
                row.into_map().into_iter().map(|(key, value)| Ok((key, from_falkor(value)?))).collect()
            })
            .collect()
    }

    async fn apply_schema(&self) -> Result<(), GraphError> {
        // The graph must exist before indexes or constraints can be listed.
        self.run("RETURN 1 AS ok", Params::new()).await?;
        for line in SCHEMA.lines() {
            if let Some(spec) = line.trim().strip_prefix("// unique:") {
                let (label, property) = parse_unique(spec)?;
                self.ensure_unique(label, property).await?;
            }
        }
        for statement in statements(SCHEMA) {
            match self.run(&statement, Params::new()).await {
                Ok(_) => {}
                Err(GraphError::Query(msg)) if msg.contains("already indexed") => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    async fn ping(&self) -> Result<(), GraphError> {
        self.run("RETURN 1 AS ok", Params::new()).await.map(|_| ())
    }

    fn name(&self) -> &'static str {
        "falkordb"
    }
}

/// The `;`-separated statements of a schema file, comment lines removed.
pub fn statements(text: &str) -> Vec<String> {
    let code: String =
        text.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    code.split(';').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

fn parse_unique(spec: &str) -> Result<(&str, &str), GraphError> {
    let spec = spec.trim();
    let (label, rest) =
        spec.split_once('(').ok_or_else(|| GraphError::Query(format!("bad unique directive: {spec}")))?;
    Ok((label.trim(), rest.trim_end_matches(')').trim()))
}

fn unavailable(err: FalkorDBError) -> GraphError {
    GraphError::Unavailable(err.to_string())
}

fn query_error(err: FalkorDBError) -> GraphError {
    let message = err.to_string();
    match err {
        FalkorDBError::ConnectionDown | FalkorDBError::NoConnection | FalkorDBError::EmptyConnection => {
            GraphError::Unavailable(message)
        }
        _ if message.contains("constraint violation") => GraphError::ConstraintViolation(message),
        _ => GraphError::Query(message),
    }
}

/// Characters FalkorDB is never sent, whatever the services checked: NUL cannot be encoded,
/// and U+0001 in a value under a uniqueness constraint kills the server (signal 11 in
/// `EnforceUniqueEntity`, taking every tenant's graph down until it has reloaded). The rest
/// of the control range goes with them, as nothing says which others it mishandles. Tab, CR
/// and LF are escaped by the client; U+001F is canon's own separator inside resolution keys.
fn unsendable(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{1f}')
}

/// Refuses a parameter holding an [`unsendable`] character anywhere (map keys included).
pub fn check_sendable(parameter: &str, value: &Value) -> Result<(), GraphError> {
    let refuse = |text: &str| match text.chars().enumerate().find(|(_, c)| unsendable(*c)) {
        None => Ok(()),
        Some((i, found)) => {
            tracing::warn!(parameter, "refused a control character that no service had checked");
            Err(GraphError::Unsendable { parameter: parameter.to_string(), found, position: i + 1 })
        }
    };
    match value {
        Value::String(text) => refuse(text),
        Value::Array(items) => items.iter().try_for_each(|item| check_sendable(parameter, item)),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            refuse(key)?;
            check_sendable(parameter, item)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// JSON → FalkorDB parameter value.
pub fn to_falkor(value: &Value) -> Result<FalkorValue, GraphError> {
    Ok(match value {
        Value::Null => FalkorValue::None,
        Value::Bool(b) => FalkorValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => FalkorValue::I64(i),
            (None, Some(f)) if n.is_f64() => FalkorValue::F64(f),
            _ => return Err(GraphError::Conversion(format!("integer {n} is outside i64"))),
        },
        Value::String(s) => FalkorValue::String(s.clone()),
        Value::Array(items) => FalkorValue::Array(items.iter().map(to_falkor).collect::<Result<_, _>>()?),
        Value::Object(map) => FalkorValue::Map(
            map.iter().map(|(k, v)| Ok((k.clone(), to_falkor(v)?))).collect::<Result<_, _>>()?,
        ),
    })
}

/// FalkorDB result value → JSON. Queries return scalars, lists and maps only.
pub fn from_falkor(value: FalkorValue) -> Result<Value, GraphError> {
    Ok(match value {
        FalkorValue::None => Value::Null,
        FalkorValue::Bool(b) => Value::Bool(b),
        FalkorValue::I64(i) => Value::Number(i.into()),
        FalkorValue::F64(f) => Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null),
        FalkorValue::String(s) => Value::String(s),
        FalkorValue::Array(items) => {
            Value::Array(items.into_iter().map(from_falkor).collect::<Result<_, _>>()?)
        }
        FalkorValue::Map(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((k, from_falkor(v)?)))
                .collect::<Result<Map<_, _>, GraphError>>()?,
        ),
        other => {
            return Err(GraphError::Conversion(format!("unsupported FalkorDB value in a result: {other:?}")))
        }
    })
}
