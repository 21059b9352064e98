//! Whether an output schema can produce a value at a column's `valueSchemaPath`, and the
//! steps (keys, array indexes) that reach it in an event's `transformedContent`.

use crate::store::records::views::Step;
use serde_json::Value;

/// Bounds the walk (and its recursion) over `$ref` cycles and wide `anyOf`s.
const BUDGET: u32 = 2_000;
/// Steps all of one request's columns take together, over every schema: each column's walk of
/// one schema stops at [`BUDGET`], and a view's 100 columns over the ~37,000 one-line schemas
/// of 1 MiB (`{"$ref": "#"}` with a title each, a version each) were 7 billion steps.
pub const REQUEST_STEPS: u32 = 200_000;

/// The steps of `path` in `schema`, or `None` when the schema cannot produce it (or `left`,
/// what is left of the request's [`REQUEST_STEPS`], ran out: the caller tells by `left == 0`).
pub fn resolve(schema: &Value, path: &[String], left: &mut u32) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut budget = BUDGET.min(*left);
    let found = walk(schema, schema, path, &mut steps, &mut budget);
    *left -= BUDGET.min(*left) - budget;
    found.then_some(steps)
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
            resolve(&schema, &path(&["invoice", "number"]), &mut REQUEST_STEPS.clone()),
            Some(vec![Step::Key("invoice".into()), Step::Key("number".into())])
        );
        assert_eq!(
            resolve(&schema, &path(&["lines", "0", "price"]), &mut REQUEST_STEPS.clone()),
            Some(vec![Step::Key("lines".into()), Step::Index(0), Step::Key("price".into())])
        );
        assert_eq!(resolve(&schema, &path(&["invoice", "total"]), &mut REQUEST_STEPS.clone()), None);
        assert_eq!(resolve(&schema, &path(&["lines", "first"]), &mut REQUEST_STEPS.clone()), None);
    }

    #[test]
    fn references_and_combinators_are_followed_and_cycles_end() {
        let schema = json!({
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "number"}}}},
            "anyOf": [{"type": "string"}, {"$ref": "#/$defs/node"}]
        });
        assert!(resolve(&schema, &path(&["next", "next", "v"]), &mut REQUEST_STEPS.clone()).is_some());
        let endless = json!({"anyOf": [{"$ref": "#"}]});
        assert!(resolve(&endless, &path(&["a"]), &mut REQUEST_STEPS.clone()).is_none());
    }

    #[test]
    fn a_requests_steps_are_shared_by_its_walks_and_run_out() {
        let endless = json!({"anyOf": [{"$ref": "#"}]});
        let mut left = REQUEST_STEPS;
        let mut walks = 0;
        while left > 0 {
            assert!(resolve(&endless, &path(&["a"]), &mut left).is_none());
            walks += 1;
        }
        assert_eq!(walks, REQUEST_STEPS / BUDGET, "each endless walk spends its own bound");
        let schema = json!({"properties": {"a": {}}});
        assert_eq!(resolve(&schema, &path(&["a"]), &mut left), None, "nothing is walked once spent");
        let mut fresh = REQUEST_STEPS;
        assert!(resolve(&schema, &path(&["a"]), &mut fresh).is_some());
        assert_eq!(fresh, REQUEST_STEPS - 2);
    }
}
