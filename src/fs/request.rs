//! The body of `POST /v3/fs`, checked per op: a field another op takes is refused with a
//! 400 naming it and the fields this op does take (an agent learns the verb's flags from
//! the error); fields no op knows are ignored, as everywhere in the API. The MCP tools
//! (`crate::mcp`) send their arguments through the same [`parse`].

use crate::error::{ServiceError, ServiceResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The verbs (`op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Ls,
    Find,
    Open,
    Cat,
    Grep,
    Xref,
    Stat,
    Head,
}

impl Op {
    pub const ALL: [Op; 8] = [Op::Ls, Op::Find, Op::Open, Op::Cat, Op::Grep, Op::Xref, Op::Stat, Op::Head];

    pub fn name(self) -> &'static str {
        match self {
            Op::Ls => "ls",
            Op::Find => "find",
            Op::Open => "open",
            Op::Cat => "cat",
            Op::Grep => "grep",
            Op::Xref => "xref",
            Op::Stat => "stat",
            Op::Head => "head",
        }
    }

    /// The fields this op takes besides `op` and `context`.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Op::Ls | Op::Find => &["filter", "limit", "cursor"],
            Op::Grep => &["path", "pattern", "scope", "countOnly", "regex", "ignoreCase", "limit", "cursor"],
            Op::Cat => &["path", "range", "select"],
            Op::Head => &["path", "n"],
            Op::Stat | Op::Open => &["path"],
            Op::Xref => &["path", "limit", "cursor"],
        }
    }

    /// The field this op cannot do without, which `parse` refuses it without (blank counts
    /// as missing): `path` for an op that reads one document or entity (grep takes one
    /// optionally), grep's `pattern`.
    pub fn required_field(self) -> Option<&'static str> {
        match self {
            Op::Cat | Op::Head | Op::Stat | Op::Open | Op::Xref => Some("path"),
            Op::Grep => Some("pattern"),
            Op::Ls | Op::Find => None,
        }
    }

    /// The largest page of any op.
    pub fn max_limit() -> u32 {
        Op::ALL.iter().map(|op| op.limits().1).max().unwrap_or_default()
    }

    /// Default and largest page.
    pub fn limits(self) -> (u32, u32) {
        match self {
            Op::Grep | Op::Xref => (25, 200),
            _ => (50, 200),
        }
    }
}

/// The most sections `head` returns (`n`).
pub const MAX_HEAD: i64 = 200;

/// Every field some op takes.
pub const ALL_FIELDS: &[&str] = &[
    "filter",
    "limit",
    "cursor",
    "path",
    "pattern",
    "scope",
    "countOnly",
    "regex",
    "ignoreCase",
    "range",
    "select",
    "n",
];

/// Filter of `ls` and `find`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// ls: the parsing function's name, exactly.
    pub function_name: Option<String>,
    /// Substring (any case) of the canonical name (find) or the referenceID (ls).
    pub search: Option<String>,
    /// Created at or after (RFC 3339).
    pub since: Option<String>,
    /// find: the entity's type name, exactly.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
}

/// Slice of `cat`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Range {
    /// One page (1-based).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub page: Option<i64>,
    /// `[from, to]`, inclusive, 1-based.
    #[serde(default, deserialize_with = "crate::wire::whole_i64_list_opt")]
    pub page_range: Option<Vec<i64>>,
    /// Only sections of these types (heading, paragraph, table, list).
    pub section_types: Option<Vec<String>>,
}

/// Scoping of memory ops.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Context {
    /// A bucket ID (`bkt_…`): find / open / xref see only its entities. Absent or empty:
    /// every bucket.
    pub bucket: Option<String>,
}

/// `POST /v3/fs`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsRequest {
    pub op: Op,
    /// cat / head / stat: a referenceID or transformationID; open / xref / stat: an
    /// entityID; grep: optionally one document.
    pub path: Option<String>,
    pub filter: Option<Filter>,
    /// 1..200 (default 50; grep and xref 25).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page (find: an entity ID; another value is a 400).
    pub cursor: Option<String>,
    /// grep: a substring, or a regular expression with `regex: true` (RE2 syntax, as Go's).
    pub pattern: Option<String>,
    /// grep: `sections`, `entities`, `relationships` or `all` (default).
    pub scope: Option<String>,
    /// grep: only the number of hits.
    pub count_only: Option<bool>,
    /// grep: `pattern` is a regular expression (default false).
    pub regex: Option<bool>,
    /// grep: any case (default true).
    pub ignore_case: Option<bool>,
    pub range: Option<Range>,
    /// cat: dotted paths to keep (`sections.label`).
    pub select: Option<Vec<String>>,
    /// head: how many sections (default 10, at most 200).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub n: Option<i64>,
    pub context: Option<Context>,
}

/// Refuses fields of other ops, then decodes, then refuses an op without the field it needs.
pub fn parse(body: Value) -> ServiceResult<FsRequest> {
    let Some(fields) = body.as_object() else {
        return Err(ServiceError::invalid_field("op", "the body must be a JSON object with an op"));
    };
    let op = match fields.get("op") {
        None | Some(Value::Null) => return Err(ServiceError::invalid_field("op", "required")),
        Some(op) => serde_json::from_value::<Op>(op.clone()).map_err(|_| {
            let names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
            ServiceError::invalid_field("op", format!("must be one of {}", names.join(", ")))
        })?,
    };
    for name in fields.keys() {
        if ALL_FIELDS.contains(&name.as_str())
            && !op.fields().contains(&name.as_str())
            && !fields[name].is_null()
        {
            return Err(ServiceError::invalid_field(
                name,
                format!("op {} does not take {name}; it takes {}", op.name(), op.fields().join(", ")),
            ));
        }
    }
    let request: FsRequest = serde_path_to_error::deserialize(body).map_err(|err| {
        let path = err.path().to_string();
        ServiceError::invalid_field(if path == "." { "body" } else { &path }, err.into_inner().to_string())
    })?;
    if let Some(field) = op.required_field() {
        required(&request, field)?;
    }
    Ok(request)
}

/// `path`, required by this op.
pub fn required_path(request: &FsRequest) -> ServiceResult<&str> {
    required(request, "path")
}

/// The text of `field` (one [`Op::required_field`] names), trimmed: a 400 naming it when it
/// is missing or blank, or holds a control character.
fn required<'a>(request: &'a FsRequest, field: &str) -> ServiceResult<&'a str> {
    let given = match field {
        "path" => request.path.as_deref(),
        "pattern" => request.pattern.as_deref(),
        _ => None,
    };
    match given.map(str::trim) {
        Some(text) if !text.is_empty() => {
            crate::text::check(field, text)?;
            Ok(text)
        }
        _ => Err(ServiceError::invalid_field(field, format!("required for op {}", request.op.name()))),
    }
}

/// The page size of this op.
pub fn limit(request: &FsRequest) -> ServiceResult<u32> {
    let (default, max) = request.op.limits();
    match request.limit {
        None => Ok(default),
        Some(n) if n >= 1 && n <= i64::from(max) => Ok(n as u32),
        Some(_) => Err(ServiceError::invalid_field("limit", format!("must be between 1 and {max}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field_of(body: Value) -> String {
        match parse(body).unwrap_err() {
            ServiceError::Invalid { details: Some(details), .. } => details["field"].as_str().unwrap().into(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_field_of_another_op_is_refused_by_name() {
        assert_eq!(field_of(json!({"op": "ls", "pattern": "x"})), "pattern");
        assert_eq!(field_of(json!({"op": "head", "range": {"page": 1}})), "range");
        assert_eq!(field_of(json!({"op": "nope"})), "op");
        assert_eq!(field_of(json!({"limit": 3})), "op");
        assert_eq!(field_of(json!({"op": "grep", "countOnly": "yes"})), "countOnly");
    }

    #[test]
    fn an_op_that_reads_one_thing_needs_its_path_and_grep_its_pattern() {
        for op in Op::ALL.into_iter().filter(|op| op.required_field() == Some("path")) {
            assert_eq!(field_of(json!({"op": op.name(), "path": "  "})), "path", "{op:?}");
        }
        assert_eq!(field_of(json!({"op": "grep", "pattern": " "})), "pattern");
        assert!(parse(json!({"op": "grep", "pattern": "x"})).is_ok());
        assert!(parse(json!({"op": "stat", "path": "ref-1"})).is_ok());
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let request = parse(json!({"op": "ls", "colour": "blue", "context": {"bucket": "bkt_1"}})).unwrap();
        assert_eq!(request.op, Op::Ls);
    }
}
