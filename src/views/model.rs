//! The wire shapes of views (bem-sdk 0.36's `View`, its params and the data responses).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// A column: a value of the functions' output, addressed by its path in the output schema.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ViewColumn {
    pub name: String,
    /// Keys (and array indexes) into the output, e.g. `["invoiceDetails", "invoiceNumber"]`.
    pub value_schema_path: Vec<String>,
    /// 0-based display position.
    pub display_order_index: i64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FilterType {
    EqualsString,
    EqualsNumber,
    LessThanNumber,
    LessThanEqualNumber,
    GreaterThanNumber,
    GreaterThanEqualNumber,
    IsNull,
    IsNotNull,
}

/// A row filter; filters AND together.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ViewFilter {
    pub column_name: String,
    pub filter_type: FilterType,
    /// The value of `equals_string`.
    #[serde(default)]
    pub string: Option<String>,
    /// The value of the number filters.
    #[serde(default)]
    pub number: Option<f64>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AggregationFunction {
    Count,
    CountDistinct,
    Sum,
    Average,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DisplayType {
    Table,
    BarChart,
    PieChart,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ViewAggregation {
    pub name: String,
    pub function: AggregationFunction,
    /// The column aggregated (required except for `count`, which then counts rows).
    #[serde(default)]
    pub aggregate_column_name: Option<String>,
    /// Groups by this column's value (up to 200 groups, largest values first).
    #[serde(default)]
    pub group_by_column_name: Option<String>,
    #[serde(default)]
    pub display_type: Option<DisplayType>,
}

/// A function by ID or by name (one of the two).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct FunctionIdentifier {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

// The document's shape of a `FunctionIdentifier` in a request (`api::contract` adds the
// oneOf); a reply carries both fields, so the two shapes differ.
/// A function by ID or by name: exactly one of the two.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct FunctionChoice {
    id: Option<String>,
    name: Option<String>,
}

/// A view's definition: the body of create and PUT (a whole replacement).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ViewInput {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub columns: Vec<ViewColumn>,
    pub filters: Vec<ViewFilter>,
    pub aggregations: Vec<ViewAggregation>,
    /// At least one; the view reads their output events.
    #[schema(value_type = Vec<FunctionChoice>)]
    pub functions: Vec<FunctionIdentifier>,
}

/// A view at one version.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct View {
    #[serde(rename = "viewID")]
    pub view_id: String,
    pub name: String,
    pub description: Option<String>,
    pub current_version_num: i64,
    /// The version shown (the current one unless `?versionNum=` asked for another).
    pub version_num: i64,
    pub columns: Vec<ViewColumn>,
    pub filters: Vec<ViewFilter>,
    pub aggregations: Vec<ViewAggregation>,
    pub functions: Vec<FunctionIdentifier>,
}

#[derive(Serialize, ToSchema)]
pub struct ViewPage {
    pub views: Vec<View>,
}

/// Events created at or after `start` and before `end` (RFC 3339).
#[derive(Clone, Debug, Deserialize, ToSchema)]
pub struct TimeWindow {
    pub start: String,
    pub end: String,
}

/// table-data: the whole view definition inline, a time window and a page.
// Documented as the view's fields beside the request's own; read without serde's flatten buffer
// (see `views::inline`).
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", from = "super::inline::Inline<super::inline::TableOwn>")]
pub struct TableDataInput {
    #[serde(flatten)]
    pub view: ViewInput,
    pub time_window: TimeWindow,
    /// 1..200 (default 50).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Rows to skip (default 0).
    #[serde(default)]
    pub offset: Option<i64>,
}

/// aggregation-data: the whole view definition inline and a time window.
// Documented as the view's fields beside the request's own; read without serde's flatten buffer
// (see `views::inline`).
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", from = "super::inline::Inline<super::inline::AggregationOwn>")]
pub struct AggregationDataInput {
    #[serde(flatten)]
    pub view: ViewInput,
    pub time_window: TimeWindow,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RowColumn {
    pub column_name: String,
    /// The value in the event's output, any JSON (null when it has none, or when it is
    /// omitted: see `valueOmitted`).
    pub value: Value,
    /// Present when the value is too long to show in a table page: its size and start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_omitted: Option<OmittedValue>,
}

/// A value a table page does not show (its `value` is null): a cell shows at most 256 KiB
/// of JSON, a page 16 MiB.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OmittedValue {
    /// Bytes of the value's JSON text.
    pub json_bytes: i64,
    /// Its first 1,000 characters.
    pub json_excerpt: String,
    /// Why it is not shown, and what shows it.
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
pub struct TableRow {
    #[serde(rename = "eventID")]
    pub event_id: String,
    pub columns: Vec<RowColumn>,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TableData {
    pub rows: Vec<TableRow>,
    /// Rows matching before the page was cut.
    pub total_count: i64,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AggregationGroup {
    /// The group's value as text (`""` for a non-grouped aggregation and for rows without a value).
    pub group_name: String,
    /// The aggregate (0 when the group has no number to aggregate).
    pub value: f64,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
pub struct AggregationResult {
    pub name: String,
    pub groups: Vec<AggregationGroup>,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
pub struct AggregationData {
    pub aggregations: Vec<AggregationResult>,
}
