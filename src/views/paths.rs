//! Whether an output schema can produce a value at a column's `valueSchemaPath`, and the
//! steps (keys, array indexes) that reach it in an event's `transformedContent`.

use crate::store::records::views::Step;
use serde_json::Value;

/// Bounds the walk (and its recursion) over `$ref` cycles and wide `anyOf`s.
const BUDGET: u32 = 2_000;

/// The steps of `path` in `schema`, or `None` when the schema cannot produce it.
pub fn resolve(schema: &Value, path: &[String]) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut budget = BUDGET;
    walk(schema, schema, path, &mut steps, &mut budget).then_some(steps)
}

fn walk(root: &Value, schema: &Value, path: &[String], steps: &mut Vec<Step>, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let Some(segment) = path.first() else { return true };
    let rest = &path[1..];
    if schema == &Value::Bool(true) {
        steps.extend(path.iter().map(|key| Step::Key(key.clone())));
        return true;
    }
    let Some(object) = schema.as_object() else { return false };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return match reference.strip_prefix('#').and_then(|pointer| root.pointer(pointer)) {
            Some(target) => walk(root, target, path, steps, budget),
            None => false,
        };
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        for branch in object.get(combinator).and_then(Value::as_array).into_iter().flatten() {
            let mark = steps.len();
            if walk(root, branch, path, steps, budget) {
                return true;
            }
            steps.truncate(mark);
        }
    }
    if let Some(child) = object.get("properties").and_then(|p| p.get(segment)) {
        steps.push(Step::Key(segment.clone()));
        if walk(root, child, rest, steps, budget) {
            return true;
        }
        steps.pop();
    }
    if let (Some(items), Ok(index)) = (object.get("items"), segment.parse::<u32>()) {
        steps.push(Step::Index(index));
        if walk(root, items, rest, steps, budget) {
            return true;
        }
        steps.pop();
    }
    match object.get("additionalProperties") {
        Some(extra @ Value::Object(_)) => {
            steps.push(Step::Key(segment.clone()));
            if walk(root, extra, rest, steps, budget) {
                return true;
            }
            steps.pop();
            false
        }
        Some(Value::Bool(true)) => {
            steps.extend(path.iter().map(|key| Step::Key(key.clone())));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nested_properties_and_array_items_resolve() {
        let schema = json!({"type": "object", "properties": {
            "invoice": {"type": "object", "properties": {"number": {"type": "string"}}},
            "lines": {"type": "array", "items": {"type": "object", "properties": {"price": {"type": "number"}}}}
        }});
        assert_eq!(
            resolve(&schema, &path(&["invoice", "number"])),
            Some(vec![Step::Key("invoice".into()), Step::Key("number".into())])
        );
        assert_eq!(
            resolve(&schema, &path(&["lines", "0", "price"])),
            Some(vec![Step::Key("lines".into()), Step::Index(0), Step::Key("price".into())])
        );
        assert_eq!(resolve(&schema, &path(&["invoice", "total"])), None);
        assert_eq!(resolve(&schema, &path(&["lines", "first"])), None);
    }

    #[test]
    fn references_and_combinators_are_followed_and_cycles_end() {
        let schema = json!({
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "number"}}}},
            "anyOf": [{"type": "string"}, {"$ref": "#/$defs/node"}]
        });
        assert!(resolve(&schema, &path(&["next", "next", "v"])).is_some());
        let endless = json!({"anyOf": [{"$ref": "#"}]});
        assert!(resolve(&endless, &path(&["a"])).is_none());
    }
}
