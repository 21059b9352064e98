//! Text a tenant sends, checked by the services before any store sees it, so REST and
//! GraphQL refuse the same input with the same 400 naming the field.
//!
//! Control characters (C0, DEL and C1) other than tab and newline are refused everywhere:
//! none belongs in a name or a label, NUL cannot be sent to FalkorDB at all, and U+0001 in a
//! value under a uniqueness constraint kills the FalkorDB server (signal 11 in its unique
//! check). Lengths are counted in characters.

use crate::error::{ServiceError, ServiceResult};
use serde_json::Value;

/// Whether `c` is refused in tenant text: a control character other than tab and newline.
pub fn is_forbidden(c: char) -> bool {
    c.is_control() && c != '\t' && c != '\n'
}

/// The first refused character of `value` and its 1-based position in characters.
pub fn first_forbidden(value: &str) -> Option<(usize, char)> {
    value.chars().enumerate().find(|(_, c)| is_forbidden(*c)).map(|(i, c)| (i + 1, c))
}

/// Refuses control characters in `value`, naming `field`.
pub fn check(field: &str, value: &str) -> ServiceResult<()> {
    match first_forbidden(value) {
        None => Ok(()),
        Some((position, found)) => Err(ServiceError::forbidden_character(field, found, position)),
    }
}

/// [`check`] for an optional value.
pub fn check_opt(field: &str, value: Option<&str>) -> ServiceResult<()> {
    value.map_or(Ok(()), |value| check(field, value))
}

/// [`check`] for each value of a list (`field[i]` names the one refused).
pub fn check_each<S: AsRef<str>>(field: &str, values: &[S]) -> ServiceResult<()> {
    for (i, value) in values.iter().enumerate() {
        check(&format!("{field}[{i}]"), value.as_ref())?;
    }
    Ok(())
}

/// [`check`] plus a length bound (in characters); `required` also refuses blank text.
pub fn check_len(field: &str, value: &str, max: usize, required: bool) -> ServiceResult<()> {
    if required && value.trim().is_empty() {
        return Err(ServiceError::invalid_field(field, "must not be empty"));
    }
    if value.chars().count() > max {
        return Err(ServiceError::invalid_field(field, format!("must be at most {max} characters")));
    }
    check(field, value)
}

/// [`check`] for every string and object key inside a JSON value (`field.key`, `field[i]`).
pub fn check_json(field: &str, value: &Value) -> ServiceResult<()> {
    // Nearly all JSON is clean: walk it without building paths, and only name the field
    // (with a second, path-building walk) when something is refused.
    if is_clean(value) {
        return Ok(());
    }
    named_check_json(field, value)
}

fn is_clean(value: &Value) -> bool {
    let clean = |text: &str| first_forbidden(text).is_none();
    match value {
        Value::String(text) => clean(text),
        Value::Array(items) => items.iter().all(is_clean),
        Value::Object(map) => map.iter().all(|(key, item)| clean(key) && is_clean(item)),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

fn named_check_json(field: &str, value: &Value) -> ServiceResult<()> {
    match value {
        Value::String(text) => check(field, text),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| named_check_json(&format!("{field}[{i}]"), item)),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let path = match field {
                "" => key.escape_debug().to_string(),
                _ => format!("{field}.{}", key.escape_debug()),
            };
            check(&path, key)?;
            named_check_json(&path, item)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field_of(result: ServiceResult<()>) -> String {
        match result {
            Err(ServiceError::Invalid { details: Some(details), .. }) => {
                details["field"].as_str().unwrap().into()
            }
            other => panic!("expected a 400, got {other:?}"),
        }
    }

    #[test]
    fn tab_newline_and_printable_text_pass_every_other_control_is_refused() {
        assert!(check("name", "Acme\tWidgets\nGmbH — ünïcode ✓").is_ok());
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32).filter(|c| !"\t\n".contains(*c)) {
            assert!(check("name", &format!("a{c}b")).is_err(), "U+{:04X}", u32::from(c));
        }
        assert_eq!(first_forbidden("ab\u{1}"), Some((3, '\u{1}')));
    }

    #[test]
    fn the_refusal_names_the_field_and_the_character() {
        let Err(ServiceError::Invalid { message, .. }) = check("canonical", "a\0b") else { panic!() };
        assert!(message.starts_with("canonical: "), "{message}");
        assert!(message.contains("U+0000 at character 2"), "{message}");
    }

    #[test]
    fn lists_and_json_name_the_element_that_failed() {
        assert_eq!(field_of(check_each("synonyms", &["ok", "b\u{1}"])), "synonyms[1]");
        let attributes = json!({"size": 3, "tags": ["x", "y\u{0}"]});
        assert_eq!(field_of(check_json("attributes", &attributes)), "attributes.tags[1]");
        assert_eq!(field_of(check_json("attributes", &json!({"k\u{1}": 1}))), "attributes.k\\u{1}");
        assert!(check_json("attributes", &json!({"a": [1, null, true, "fine"]})).is_ok());
    }

    #[test]
    fn lengths_count_characters_and_blank_required_text_is_refused() {
        assert!(check_len("name", &"é".repeat(100), 100, true).is_ok());
        assert!(check_len("name", &"é".repeat(101), 100, true).is_err());
        assert!(check_len("name", "  ", 100, true).is_err());
        assert!(check_len("description", "", 100, false).is_ok());
    }
}
