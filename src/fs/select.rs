//! `cat`'s `select`: projects a JSON value to dotted paths (`sections.label`), mapping over
//! arrays on the way, so `["sections.label", "sections.page"]` keeps each section's label
//! and page and nothing else. Paths that lead nowhere add nothing.

use crate::error::ServiceError;
use serde_json::{Map, Value};

/// Most paths one `cat` may select.
pub const MAX_PATHS: usize = 50;
/// Longest selected path, in characters.
pub const MAX_PATH_CHARS: usize = 256;

/// Refuses a `select` past [`MAX_PATHS`] paths or with a path past [`MAX_PATH_CHARS`].
pub fn check(paths: &[String]) -> Result<(), ServiceError> {
    if paths.len() > MAX_PATHS {
        return Err(ServiceError::invalid_field(
            "select",
            format!("at most {MAX_PATHS} paths (got {}); select fewer, or none for everything", paths.len()),
        ));
    }
    if let Some((at, path)) = paths.iter().enumerate().find(|(_, p)| p.chars().count() > MAX_PATH_CHARS) {
        return Err(ServiceError::invalid_field(
            "select",
            format!("path {at} has {} characters; at most {MAX_PATH_CHARS}", path.chars().count()),
        ));
    }
    crate::text::check_each("select", paths)
}

pub fn project(value: &Value, paths: &[String]) -> Value {
    let mut out = Value::Null;
    for path in paths {
        let segments: Vec<&str> = path.split('.').filter(|s| !s.is_empty()).collect();
        if let Some(picked) = pick(value, &segments) {
            merge(&mut out, picked);
        }
    }
    if out.is_null() {
        Value::Object(Map::new())
    } else {
        out
    }
}

fn pick(value: &Value, segments: &[&str]) -> Option<Value> {
    let Some((first, rest)) = segments.split_first() else { return Some(value.clone()) };
    match value {
        Value::Object(map) => {
            let inner = pick(map.get(*first)?, rest)?;
            let mut out = Map::new();
            out.insert((*first).to_string(), inner);
            Some(Value::Object(out))
        }
        Value::Array(items) => {
            Some(Value::Array(items.iter().map(|i| pick(i, segments).unwrap_or(Value::Null)).collect()))
        }
        _ => None,
    }
}

/// Deep merge of `b` into `a` (objects by key, arrays item by item).
fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, value) in y {
                merge(x.entry(key).or_insert(Value::Null), value);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, value) in y.into_iter().enumerate() {
                if i < x.len() {
                    merge(&mut x[i], value);
                } else {
                    x.push(value);
                }
            }
        }
        (slot, value) => {
            if slot.is_null() || !value.is_null() {
                *slot = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_paths_keep_only_what_they_name_through_arrays() {
        let doc = json!({"referenceID": "r", "sections": [
            {"label": "A", "page": 1, "text": "long"}, {"label": "B", "page": 2, "text": "longer"}]});
        let picked = project(&doc, &["sections.label".into(), "sections.page".into(), "referenceID".into()]);
        assert_eq!(
            picked,
            json!({"sections": [{"label": "A", "page": 1}, {"label": "B", "page": 2}], "referenceID": "r"})
        );
        assert_eq!(project(&doc, &["nothing.here".into()]), json!({}));
    }
}
