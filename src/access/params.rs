//! Query parameters as text, parsed into values with errors naming the parameter: shared by
//! REST's query strings and GraphQL's arguments, so both refuse the same values the same way.

use super::error::ApiError;
use serde_json::json;

/// Parses an optional integer query parameter.
pub fn int_param(name: &str, raw: Option<&str>) -> Result<Option<i64>, ApiError> {
    raw.map(|text| {
        text.parse::<i64>().map_err(|_| {
            ApiError::bad_request(
                format!("{name}: must be an integer (got {text:?})"),
                Some(json!({ "field": name, "error": "not an integer" })),
            )
        })
    })
    .transpose()
}

/// Parses an optional boolean query parameter (`true` / `false`).
pub fn bool_param(name: &str, raw: Option<&str>) -> Result<Option<bool>, ApiError> {
    raw.map(|text| match text {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ApiError::bad_request(
            format!("{name}: must be true or false (got {text:?})"),
            Some(json!({ "field": name, "error": "not a boolean" })),
        )),
    })
    .transpose()
}

/// Values of a repeatable parameter: repeated keys and comma-separated lists both count.
pub fn list_param(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(String::from)
        .collect()
}

/// Values one array filter takes at most: bem's own bound on its ID lists (`eventIDs`, 1–100).
/// A URL holds ~32,000 short values, and filters by name cost a store read each, or a
/// comparison with every workflow node.
pub const MAX_FILTER_VALUES: usize = 100;

/// Values of an array filter; sent but empty (`tags=`) is 400, as each array needs an item,
/// and so is one of more than [`MAX_FILTER_VALUES`].
pub fn array_param(name: &str, raw: &[String]) -> Result<Vec<String>, ApiError> {
    let values = list_param(raw);
    if values.is_empty() && !raw.is_empty() {
        return Err(ApiError::bad_request(
            format!("{name}: give at least one value (or leave the parameter out)"),
            Some(json!({ "field": name, "error": "give at least one value (or leave the parameter out)" })),
        ));
    }
    if values.len() > MAX_FILTER_VALUES {
        let error = format!("at most {MAX_FILTER_VALUES} values (got {}); split the request", values.len());
        return Err(ApiError::bad_request(
            format!("{name}: {error}"),
            Some(json!({ "field": name, "error": error })),
        ));
    }
    Ok(values)
}

/// An RFC 3339 instant, normalised to the stored form (UTC, milliseconds) for comparison.
pub fn time_param(name: &str, raw: Option<&str>) -> Result<Option<String>, ApiError> {
    raw.map(|text| {
        chrono::DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .map_err(|_| {
                ApiError::bad_request(
                    format!(
                        "{name}: must be an RFC 3339 date-time such as 2024-01-31T00:00:00Z (got {text:?})"
                    ),
                    Some(json!({ "field": name, "error": "not RFC 3339" })),
                )
            })
    })
    .transpose()
}

/// A page size within `1..=max` (default `default`).
pub fn limit_param(raw: Option<&str>, default: u32, max: u32) -> Result<u32, ApiError> {
    match int_param("limit", raw)? {
        None => Ok(default),
        Some(n) if n >= 1 && n <= i64::from(max) => Ok(n as u32),
        Some(n) => Err(ApiError::bad_request(
            format!("limit: must be between 1 and {max} (got {n})"),
            Some(json!({ "field": "limit", "error": "out of range" })),
        )),
    }
}
