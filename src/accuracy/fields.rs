//! The fields accuracy compares: a value's leaves by JSON Pointer, and an output schema's leaf
//! properties, each within [`MAX_FIELDS`] and [`MAX_FIELD_PATH_BYTES`].
//!
//! A leaf's path repeats every key above it, so paths can outgrow their value many times
//! over: a 2 MiB key over 300,000 one-byte fields (4 MiB, what a tenant's own model endpoint
//! may answer; a correction holds 256 KB, an output 128 MiB) was 600 GB of paths. Past a
//! bound the value is not compared, and the caller says so.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Fields one value is compared by at most.
pub const MAX_FIELDS: usize = 50_000;
/// Bytes of those fields' paths together.
pub const MAX_FIELD_PATH_BYTES: usize = 8 << 20;

/// Keys a call adds to an output that are not the function's (call metadata).
const NOT_FIELDS: &[&str] = &["_metadata"];

/// A value (or schema) with more fields than accuracy compares.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyFields;

impl TooManyFields {
    /// Why `what` (`"the output"`, `"the correction"`) was not compared.
    pub fn message(&self, what: &str) -> String {
        format!(
            "{what} has more than {MAX_FIELDS} fields or {} MiB of field paths, more than accuracy \
             compares",
            MAX_FIELD_PATH_BYTES >> 20
        )
    }
}

/// Counts fields against the bounds as they are found.
#[derive(Default)]
struct Tally {
    fields: usize,
    bytes: usize,
}

impl Tally {
    fn add(&mut self, path: &str) -> Result<(), TooManyFields> {
        self.fields += 1;
        self.bytes += path.len();
        if self.fields > MAX_FIELDS || self.bytes > MAX_FIELD_PATH_BYTES {
            return Err(TooManyFields);
        }
        Ok(())
    }
}

/// The leaves of `value` by JSON Pointer (`null` counts as absent).
pub fn leaves(value: &Value) -> Result<BTreeMap<String, Value>, TooManyFields> {
    let mut out = BTreeMap::new();
    collect(value, &mut String::new(), &mut out, &mut Tally::default(), true)?;
    Ok(out)
}

fn collect(
    value: &Value,
    path: &mut String,
    out: &mut BTreeMap<String, Value>,
    tally: &mut Tally,
    top: bool,
) -> Result<(), TooManyFields> {
    let len = path.len();
    match value {
        Value::Null => {}
        Value::Object(map) => {
            for (key, item) in map {
                if top && NOT_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                push_key(path, key);
                collect(item, path, out, tally, false)?;
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let _ = write!(path, "/{index}");
                collect(item, path, out, tally, false)?;
                path.truncate(len);
            }
        }
        scalar => {
            let path = if path.is_empty() { "/".to_string() } else { path.clone() };
            tally.add(&path)?;
            out.insert(path, scalar.clone());
        }
    }
    Ok(())
}

/// Appends `/key`, escaped as JSON Pointer escapes it.
fn push_key(path: &mut String, key: &str) {
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// The leaf properties an object schema declares (nested objects followed, 16 levels at most;
/// arrays skipped, as their length is the data's).
pub fn schema_leaves(schema: &Value) -> Result<Vec<String>, TooManyFields> {
    let mut out = Vec::new();
    schema_collect(schema, &mut String::new(), &mut out, &mut Tally::default(), 0)?;
    Ok(out)
}

fn schema_collect(
    schema: &Value,
    path: &mut String,
    out: &mut Vec<String>,
    tally: &mut Tally,
    depth: usize,
) -> Result<(), TooManyFields> {
    if depth > 16 {
        return Ok(());
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        if !path.is_empty() && schema.get("type").and_then(Value::as_str) != Some("array") {
            tally.add(path)?;
            out.push(path.clone());
        }
        return Ok(());
    };
    let len = path.len();
    for (key, property) in properties {
        push_key(path, key);
        schema_collect(property, path, out, tally, depth + 1)?;
        path.truncate(len);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_are_named_by_their_json_pointers() {
        let value = json!({"a/b": {"c~d": [1, null, "x"]}, "_metadata": {"k": 1}, "n": null, "t": true});
        let found = leaves(&value).unwrap();
        let paths: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(paths, ["/a~1b/c~0d/0", "/a~1b/c~0d/2", "/t"]);
        assert_eq!(leaves(&json!(7)).unwrap().keys().collect::<Vec<_>>(), ["/"]);
        let schema = json!({"properties": {"a": {"properties": {"b": {}}}, "l": {"type": "array"}}});
        assert_eq!(schema_leaves(&schema).unwrap(), ["/a/b"]);
    }

    #[test]
    fn a_value_past_either_bound_is_refused_not_expanded() {
        let many: Vec<Value> = (0..=MAX_FIELDS).map(|_| json!(0)).collect();
        assert_eq!(leaves(&json!({ "list": many })), Err(TooManyFields));
        // 200 KB of data whose long key repeats on 100 fields: 20 MB of paths.
        let fields: serde_json::Map<String, Value> = (0..100).map(|i| (format!("f{i}"), json!(0))).collect();
        assert_eq!(leaves(&json!({ "k".repeat(200_000): fields })), Err(TooManyFields));
        let schema = json!({"properties": { "k".repeat(200_000): {"properties": fields.iter()
            .map(|(k, _)| (k.clone(), json!({"type": "number"}))).collect::<serde_json::Map<_, _>>()}}});
        assert_eq!(schema_leaves(&schema), Err(TooManyFields));
        assert!(TooManyFields.message("the output").starts_with("the output has more than 50000 fields"));
    }
}
