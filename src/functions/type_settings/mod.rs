//! The settings of a function type that go beyond their JSON shape (`service::settings_of`
//! checks that), read in one place: saving a version refuses a setting its calls could never
//! run, with a 400 naming it (`config.steps[0].topK`, `splitConfig.by`, `shapingSchema`,
//! `classifications[0].regex.patterns[1]`), and the engine runs
//! what the same reader returns. A setting given as another type or out of its bounds is
//! refused: it used to become the default silently.

pub mod classify;
pub mod enrich;
pub mod split;

use crate::error::ServiceError;
use serde_json::{Map, Value};

/// Why a setting cannot run: its path and what it must be.
#[derive(Debug)]
pub enum SettingError {
    /// Fix the configuration.
    Invalid { field: String, message: String },
    /// Something of bem's that canon does not run (an enrich `endpoint` source, a
    /// `semantic_page` split): kept on save, it fails the call as unsupported.
    Unsupported { field: String, message: String },
}

/// Checks the settings a create or PATCH gives (`given`: the body's type settings).
pub fn check(function_type: &str, given: &Map<String, Value>) -> Result<(), ServiceError> {
    let read = match function_type {
        "enrich" => match given.get("config") {
            Some(config) if named(config.get("steps")) => enrich::steps(Some(config)).map(drop),
            _ => Ok(()),
        },
        "split" => split::by(given.get("splitType"), given.get("splitConfig")).map(drop),
        "payload_shaping" => match given.get("shapingSchema").and_then(Value::as_str) {
            Some(expression) if !expression.is_empty() => expression_at("shapingSchema", expression),
            _ => Ok(()),
        },
        "classify" | "route" => match given.get("classifications") {
            Some(list) if named(Some(list)) => classify::check(list),
            _ => Ok(()),
        },
        // A parse function's outputs are validated with it (`engines::output_schema`).
        "parse" => match given.get("parseConfig").and_then(|config| config.get("schema")) {
            Some(schema) if !schema.is_null() => {
                return super::validate::schema_at("parseConfig.schema", schema);
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    };
    match read {
        Err(SettingError::Invalid { field, message }) => Err(ServiceError::invalid_field(&field, message)),
        Ok(()) | Err(SettingError::Unsupported { .. }) => Ok(()),
    }
}

/// Whether a list setting (enrich's `config.steps`, `classifications`) is given to check on
/// save: absent, null or an empty list (the default, or a placeholder a client may create the
/// function with) is kept, and fails at the version's calls.
fn named(list: Option<&Value>) -> bool {
    list.is_some_and(|list| !list.is_null() && list.as_array().is_none_or(|list| !list.is_empty()))
}

/// An option of `object`, whose path is `field`: absent or null is `None`; given, it must read
/// as `read` reads it (`what` says how it must be).
fn option<'a, T>(
    object: &'a Value,
    field: &str,
    what: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>, SettingError> {
    let name = field.rsplit('.').next().unwrap_or(field);
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value)
            .map(Some)
            .ok_or_else(|| invalid(field.to_string(), format!("must be {what} (got {value})"))),
    }
}

/// Reads `expression` as the JMESPath subset the engines evaluate (`crate::shaping`), so one
/// that is not taken (or past its bounds) is refused at `field`.
fn expression_at(field: &str, expression: &str) -> Result<(), SettingError> {
    crate::shaping::parse(expression).map(drop).map_err(|err| invalid(field.to_string(), err.0))
}

fn invalid(field: String, message: String) -> SettingError {
    SettingError::Invalid { field, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_non_empty_list_setting_is_checked_on_save() {
        assert!(!named(Some(&json!([]))) && !named(Some(&Value::Null)) && !named(None));
        assert!(named(Some(&json!([{}]))) && named(Some(&json!("not a list"))));
    }
}
