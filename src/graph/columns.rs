//! Reading the columns of a graph statement's rows, and the times they hold.

use crate::store::graph::Row;
use serde_json::Value;

/// A string column, empty when absent.
pub fn str_col(row: &Row, column: &str) -> String {
    row.get(column).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A list-of-strings column, empty when absent.
pub fn str_list_col(row: &Row, column: &str) -> Vec<String> {
    row.get(column)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(String::from).collect())
        .unwrap_or_default()
}

/// The compared texts of an entity's stored attributes (columns `attributeKeys` and
/// `attributeValues`), as resolution reads them.
pub fn attributes_col(row: &Row) -> std::collections::BTreeMap<String, String> {
    let (keys, values) = (str_list_col(row, "attributeKeys"), str_list_col(row, "attributeValues"));
    crate::graph::resolution::comparisons::stored_attribute_texts(&keys, &values)
}

/// Milliseconds since the epoch of an RFC 3339 time.
pub fn rfc3339_ms(text: &str) -> Option<u64> {
    chrono::DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_millis().max(0) as u64)
}
