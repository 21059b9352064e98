//! The wire shapes of golden datasets (`gds_…`) and their rows.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// What scoring reads a column as: the function's input, the expected (corrected) output,
/// or the ground-truth schema.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ColumnRole {
    Input,
    Corrected,
    Schema,
}

impl ColumnRole {
    /// Every role, once (a dataset holds at most one column of each).
    pub const ALL: [ColumnRole; 3] = [ColumnRole::Input, ColumnRole::Corrected, ColumnRole::Schema];
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ColumnType {
    File,
    String,
    Json,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct DatasetColumn {
    pub name: String,
    pub role: ColumnRole,
    #[serde(rename = "type")]
    pub column_type: ColumnType,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
pub struct DatasetInput {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// One column per role at most (input, corrected, schema); a schema column is json.
    pub columns: Vec<DatasetColumn>,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    #[serde(rename = "datasetID")]
    pub dataset_id: String,
    pub name: String,
    pub description: Option<String>,
    pub columns: Vec<DatasetColumn>,
    pub row_count: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct DatasetPage {
    pub datasets: Vec<Dataset>,
}

/// A file: its input type and where its bytes are (`s3URL`) or the bytes themselves
/// (`inputContent`, base64; canon's addition so a dataset can hold files without S3).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct FileValue {
    #[serde(rename = "inputType")]
    pub input_type: String,
    #[serde(rename = "s3URL", default, skip_serializing_if = "Option::is_none")]
    pub s3_url: Option<String>,
    #[serde(rename = "inputContent", default, skip_serializing_if = "Option::is_none")]
    pub input_content: Option<String>,
}

/// A stored value: the one field of the column's type is set.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CellValue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_value: Option<FileValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_value: Option<Value>,
}

/// One column of the row to write; `value` is `{fileValue}`, `{stringValue}` or `{jsonValue}`
/// as the column's type says.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ColumnWrite {
    pub column_name: String,
    pub value: Value,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
pub struct ColumnsInput {
    pub columns: Vec<ColumnWrite>,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ColumnValue {
    pub column_name: String,
    #[serde(rename = "type")]
    pub column_type: ColumnType,
    pub value: CellValue,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FailedColumn {
    pub column_name: String,
    pub error: String,
}

/// What a write stored (`columns`) and, when some columns failed, why (`error`, and per
/// column in `failedColumns`).
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ColumnsResult {
    pub columns: Vec<ColumnValue>,
    pub error: Option<String>,
    pub failed_columns: Vec<FailedColumn>,
}

#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DatasetRow {
    pub row_key: String,
    pub columns: Vec<ColumnValue>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RowPage {
    pub rows: Vec<DatasetRow>,
    /// Rows in the dataset.
    pub total_count: i64,
}

/// A dataset made of a function's output events in one call: an `input` file column (the
/// call's input), a `corrected` json column (the event's correction when it has one, else
/// its output) and a `schema` json column (the output schema of the version that ran);
/// rows are keyed by event ID.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FromEventsInput {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub function_name: Option<String>,
    #[serde(default, rename = "functionID")]
    pub function_id: Option<String>,
    /// Only these events (at most 1000); otherwise the function's oldest `limit`.
    #[serde(default, rename = "eventIDs")]
    pub event_ids: Vec<String>,
    /// 1..1000 (default 100).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Only events someone corrected (`POST /v3/events/{eventID}/feedback`): a golden
    /// dataset of checked answers. Default false: every output, corrected where it was.
    #[serde(default)]
    pub corrected_only: bool,
}

/// One row as scoring reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoringRow {
    pub row_key: String,
    /// `{inputType, inputContent}` (base64), or `{inputType, s3URL}` for a file kept in S3.
    pub input: Value,
    pub expected: Value,
    /// The ground-truth schema, when the dataset has a schema column.
    pub schema: Option<Value>,
}
