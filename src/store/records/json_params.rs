//! JSON parameters of the record stores' statements: a turn's list travels as one JSON array
//! bound once, read back as rows by the same text on SQLite and PostgreSQL.

use super::Dialect;
use serde_json::Value;
use std::borrow::Cow;

/// A subquery yielding the strings of the JSON array bound at `$n`, one row each.
///
/// A turn's lists (delivered IDs, attempts) travel as one JSON parameter, so each statement
/// has a fixed text whatever the batch size: it is prepared once and kept in the statement
/// cache, and SQLite does not walk a long list of numbered parameters for every bind (a
/// 1,024-parameter INSERT had spent a tenth of a drain's time in `sqlite3_bind_parameter_name`).
pub(super) fn json_strings(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Sqlite => format!("SELECT value FROM json_each(${n})"),
        Dialect::Postgres => format!("SELECT jsonb_array_elements_text(CAST(${n} AS jsonb))"),
    }
}

/// A FROM item yielding the elements of the JSON array bound at `$n` as `e.value`, each read
/// with `e.value ->> i` (text) on both stores.
pub(super) fn json_rows(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Sqlite => format!("json_each(${n}) AS e"),
        Dialect::Postgres => format!("jsonb_array_elements(CAST(${n} AS jsonb)) AS e(value)"),
    }
}

/// `rows` rows of `columns` anonymous parameters, `(?,?),(?,?)…`, for a `VALUES` list on SQLite:
/// bound in order, where a JSON parameter made SQLite re-parse each row for every field read
/// and `$n` names made each bind search a list as long as the statement's.
pub(super) fn positional_rows(columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(","));
    vec![row; rows].join(",")
}

/// A stored JSON text `column` as PostgreSQL `json`, each NUL's escape read as U+FFFD's (as
/// [`nul_free`] does for a bound text): PostgreSQL's JSON functions refuse that escape even in
/// a key or value they only pass over. An escape of the same shape, so the text stays JSON
/// whatever precedes it.
pub(super) fn pg_json(column: &str) -> String {
    format!("CAST(REPLACE({column}, '\\u0000', '\\ufffd') AS json)")
}

/// `text` with every NUL character replaced by U+FFFD: PostgreSQL's text cannot hold one, and
/// a reply or document a tenant controls may carry one.
pub(super) fn nul_free(text: &str) -> Cow<'_, str> {
    match text.contains('\0') {
        true => text.replace('\0', "\u{fffd}").into(),
        false => text.into(),
    }
}

/// `value` with every NUL character in its strings and keys replaced by U+FFFD.
pub(super) fn without_nul(value: Value) -> Value {
    let clean = |text: String| match nul_free(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(clean) => clean,
    };
    match value {
        Value::String(text) => Value::String(clean(text)),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nul).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (clean(k), without_nul(v))).collect())
        }
        other => other,
    }
}

/// `text` as a JSON string (or `null`) written onto `out`, NULs as U+FFFD ([`nul_free`]): a
/// delivery's excerpt is whatever the destination answered, and one NUL would fail the whole
/// turn on PostgreSQL, for every tenant's deliveries in it.
pub(super) fn json_text(out: &mut String, text: Option<&str>) {
    match text {
        // Serialising a string cannot fail.
        Some(text) => out.push_str(&serde_json::to_string(&nul_free(text)).unwrap_or_default()),
        None => out.push_str("null"),
    }
}

/// The strings as one JSON array, `["a","b"]`: a list of IDs bound as one parameter and read
/// back by [`json_strings`].
pub(super) fn json_string_array<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("[");
    for item in items {
        if out.len() > 1 {
            out.push(',');
        }
        json_text(&mut out, Some(item));
    }
    out.push(']');
    out
}

/// `,n` for each number (or `,null`) written onto `out`.
pub(super) fn json_numbers(out: &mut String, numbers: &[Option<i64>]) {
    use std::fmt::Write;
    for number in numbers {
        let _ = match number {
            Some(n) => write!(out, ",{n}"),
            None => write!(out, ",null"),
        };
    }
}
