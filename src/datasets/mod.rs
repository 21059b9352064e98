//! Golden datasets (`gds_…`): rows keyed by the tenant's row key, with typed values in
//! columns that have a role (input, corrected, schema), to score functions against.
//!
//! Decisions where the spec leaves room:
//! - At most one column per role; a `schema` column is `json`. Column names are unique.
//! - Writing a row's columns stores each valid column and reports the others: 200 when all
//!   are stored, 207 when some failed (`error` says why, `failedColumns` per column), 400
//!   when none could be.
//! - A `file` value is `{inputType, s3URL}` or `{inputType, inputContent}` (base64, canon's
//!   addition so files need no S3).
//! - `POST /v3/datasets/from-events` builds a dataset from a function's output events in
//!   one call: the `corrected` value is the event's correction (`POST
//!   /v3/events/{eventID}/feedback`) when it has one, else its `transformedContent`;
//!   `correctedOnly: true` keeps only the corrected events.

pub mod model;

use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::pagination::PageRequest;
use crate::store::records::datasets::{CellsWritten, DatasetRow as StoredDataset, EventsChosen};
use crate::store::records::{filters, Records};
use crate::text;
use base64::Engine as _;
use model::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Longest name of a dataset or of one of its columns, and longest description.
pub const NAME_MAX: usize = 200;
pub const DESCRIPTION_MAX: usize = 2_000;
/// Most columns a dataset has: one per role.
pub const MAX_COLUMNS: usize = ColumnRole::ALL.len();
/// Most rows one `from-events` call builds (its `limit` and its `eventIDs`).
pub const MAX_ROWS_PER_BUILD: i64 = 1_000;
/// Most a dataset build (from events: their outputs and their calls' inputs) or a score run
/// from a dataset (its rows' stored values) reads: 1,000 rows of up to 2 MB each would hold
/// 2 GB in memory at once.
pub const MAX_READ_BYTES: usize = 64 * 1024 * 1024;
// A page of rows reads at most `filters::PAGE_BYTES` of their stored values, as every list.
/// Most columns one row's column write carries.
pub const MAX_COLUMNS_PER_WRITE: usize = 100;
/// Most rows a dataset holds: ten times what a score run reads ([`MAX_ROWS_PER_BUILD`]).
/// Rows were unbounded, each write adding up to 2 MB to the record store every tenant shares.
pub const MAX_ROWS_PER_DATASET: i64 = 10_000;

#[derive(Clone)]
pub struct DatasetsService {
    pub records: Records,
    /// Most rows a dataset holds ([`MAX_ROWS_PER_DATASET`]; tests lower it).
    pub max_rows: i64,
}

/// How a write of columns went.
pub enum Written {
    All(ColumnsResult),
    Some(ColumnsResult),
}

impl DatasetsService {
    pub async fn create(&self, tenant: &Tenant, input: DatasetInput) -> ServiceResult<Dataset> {
        let name = input.name.trim().to_string();
        text::check_len("name", &name, NAME_MAX, true)?;
        text::check_opt("description", input.description.as_deref())?;
        if let Some(description) = &input.description {
            text::check_len("description", description, DESCRIPTION_MAX, false)?;
        }
        check_columns(&input.columns)?;
        let now = ids::now_millis();
        let row = StoredDataset {
            id: ids::new_id("gds"),
            name,
            description: input.description,
            columns: serde_json::to_value(&input.columns).map_err(anyhow::Error::from)?,
            row_count: 0,
            created_at: now,
            updated_at: now,
        };
        self.records.insert_dataset(tenant.owner(), &row).await?;
        shown(row)
    }

    pub async fn get(&self, tenant: &Tenant, id: &str) -> ServiceResult<Dataset> {
        shown(self.row(tenant, id).await?)
    }

    pub async fn list(
        &self,
        tenant: &Tenant,
        name_substring: Option<&str>,
        page: &PageRequest,
    ) -> ServiceResult<Vec<Dataset>> {
        text::check_opt("nameSubstring", name_substring)?;
        let rows =
            self.records.list_datasets(tenant.owner(), name_substring, &page.cursor, page.limit).await?;
        rows.into_iter().map(shown).collect()
    }

    pub async fn delete(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        if self.records.delete_dataset(tenant.owner(), id).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("dataset", id))
        }
    }

    /// Stores each valid column of one row; see the module's decisions for the outcome.
    pub async fn write_columns(
        &self,
        tenant: &Tenant,
        id: &str,
        row_key: &str,
        input: ColumnsInput,
    ) -> ServiceResult<Written> {
        let dataset = self.row(tenant, id).await?;
        check_row_key(row_key)?;
        if input.columns.is_empty() || input.columns.len() > MAX_COLUMNS_PER_WRITE {
            return Err(ServiceError::invalid_field(
                "columns",
                format!("give 1..{MAX_COLUMNS_PER_WRITE} columns"),
            ));
        }
        let columns = columns_of(&dataset);
        let mut stored = Vec::new();
        let mut failed = Vec::new();
        let mut seen = Vec::new();
        for write in input.columns {
            let outcome = match columns.iter().find(|c| c.name == write.column_name) {
                _ if seen.contains(&write.column_name) => Err("sent twice in this request".to_string()),
                None => Err("no such column in this dataset".to_string()),
                Some(column) => typed_value(column, write.value),
            };
            seen.push(write.column_name.clone());
            match (outcome, columns.iter().find(|c| c.name == write.column_name)) {
                (Ok(value), Some(column)) => stored.push(ColumnValue {
                    column_name: write.column_name,
                    column_type: column.column_type,
                    value,
                }),
                (Err(error), _) => failed.push(FailedColumn { column_name: write.column_name, error }),
                (Ok(_), None) => {}
            }
        }
        if stored.is_empty() {
            return Err(ServiceError::Invalid {
                message: format!("no column was stored: {}", summary(&failed)),
                details: Some(json!({ "failedColumns": failed })),
            });
        }
        let cells: Vec<(String, Value)> = stored
            .iter()
            .map(|c| Ok((c.column_name.clone(), serde_json::to_value(&c.value)?)))
            .collect::<Result<_, serde_json::Error>>()
            .map_err(anyhow::Error::from)?;
        self.write_cells(&dataset.id, row_key, &cells).await?;
        let error = (!failed.is_empty()).then(|| summary(&failed));
        let result = ColumnsResult { columns: stored, error, failed_columns: failed.clone() };
        Ok(if failed.is_empty() { Written::All(result) } else { Written::Some(result) })
    }

    /// Writes one row's cells, refusing a new row past the dataset's bound.
    async fn write_cells(
        &self,
        dataset_id: &str,
        row_key: &str,
        cells: &[(String, Value)],
    ) -> ServiceResult<()> {
        let now = ids::now_millis();
        match self.records.write_dataset_cells(dataset_id, row_key, cells, now, self.max_rows).await? {
            CellsWritten::Written => Ok(()),
            CellsWritten::NoDataset => Err(ServiceError::not_found("dataset", dataset_id)),
            CellsWritten::DatasetFull => Err(ServiceError::count_reached(
                format!(
                    "dataset {dataset_id} holds its most rows ({}): delete rows (DELETE \
                     /v3/datasets/{dataset_id}/rows/{{rowKey}}) or write to another dataset",
                    self.max_rows
                ),
                "rowsPerDataset",
                self.max_rows,
            )),
        }
    }

    /// A page of rows in row-key order (`startingAfter` is a row key).
    pub async fn rows(
        &self,
        tenant: &Tenant,
        id: &str,
        after: Option<&str>,
        limit: u32,
    ) -> ServiceResult<RowPage> {
        let dataset = self.row(tenant, id).await?;
        text::check_opt("startingAfter", after)?;
        let columns = columns_of(&dataset);
        let read = self.records.dataset_rows(&dataset.id, after, limit, filters::PAGE_BYTES).await?;
        Ok(RowPage {
            rows: read.rows.into_iter().map(|(key, cells)| shown_row(&columns, key, cells)).collect(),
            total_count: dataset.row_count,
        })
    }

    pub async fn get_row(&self, tenant: &Tenant, id: &str, row_key: &str) -> ServiceResult<DatasetRow> {
        let dataset = self.row(tenant, id).await?;
        let cells = self.records.dataset_row(&dataset.id, row_key).await?;
        if cells.is_empty() {
            return Err(ServiceError::not_found("dataset row", row_key));
        }
        Ok(shown_row(&columns_of(&dataset), row_key.to_string(), cells))
    }

    pub async fn delete_row(&self, tenant: &Tenant, id: &str, row_key: &str) -> ServiceResult<()> {
        let dataset = self.row(tenant, id).await?;
        if self.records.delete_dataset_row(&dataset.id, row_key).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("dataset row", row_key))
        }
    }

    /// A dataset of a function's output events, in one call (see [`FromEventsInput`]).
    pub async fn from_events(&self, tenant: &Tenant, input: FromEventsInput) -> ServiceResult<Dataset> {
        let limit = match input.limit {
            None => 100,
            Some(n @ 1..=MAX_ROWS_PER_BUILD) => n as u32,
            Some(n) => {
                return Err(ServiceError::invalid_field(
                    "limit",
                    format!("must be 1..{MAX_ROWS_PER_BUILD} (got {n})"),
                ))
            }
        };
        if input.event_ids.len() > MAX_ROWS_PER_BUILD as usize {
            return Err(ServiceError::invalid_field(
                "eventIDs",
                format!("at most {MAX_ROWS_PER_BUILD} events"),
            ));
        }
        text::check_each("eventIDs", &input.event_ids)?;
        let function = match (input.function_id.as_deref(), input.function_name.as_deref()) {
            (Some(id), None) => {
                text::check("functionID", id)?;
                self.records.find_function_by_id(tenant.owner(), id).await?
            }
            (None, Some(name)) => {
                text::check("functionName", name)?;
                self.records.find_function(tenant.owner(), name).await?.map(|f| f.head)
            }
            _ => return Err(ServiceError::invalid_field("functionName", "give functionName or functionID")),
        }
        .ok_or_else(|| {
            ServiceError::not_found("function", input.function_name.or(input.function_id).unwrap_or_default())
        })?;
        let columns = vec![
            DatasetColumn { name: "input".into(), role: ColumnRole::Input, column_type: ColumnType::File },
            DatasetColumn {
                name: "corrected".into(),
                role: ColumnRole::Corrected,
                column_type: ColumnType::Json,
            },
            DatasetColumn { name: "schema".into(), role: ColumnRole::Schema, column_type: ColumnType::Json },
        ];
        let chosen = self
            .records
            .events_with_inputs(
                tenant.owner(),
                &function.id,
                &input.event_ids,
                input.corrected_only,
                limit,
                MAX_READ_BYTES,
            )
            .await?;
        let events = match chosen {
            EventsChosen::Read(events) => events,
            EventsChosen::TooLarge { events, fit, bytes } => {
                return Err(ServiceError::Unprocessable {
                    message: format!(
                        "the {events} events chosen and their calls' inputs hold {} MiB, past the {} MiB \
                         a dataset build reads (datasetReadBytes): choose fewer with limit or eventIDs \
                         (the first {fit} fit)",
                        bytes >> 20,
                        MAX_READ_BYTES >> 20
                    ),
                    details: Some(json!({ "field": "limit", "limitBytes": MAX_READ_BYTES, "fit": fit })),
                });
            }
        };
        let dataset = self
            .create(tenant, DatasetInput { name: input.name, description: input.description, columns })
            .await?;
        // Each version's schema from its own column, all in one read: reading the versions
        // whole (bodies of up to 2 MB) for it was up to 2 GB for 1,000 events.
        let version_of = |event: &Value| {
            event.get("functionVersionNum").and_then(Value::as_i64).unwrap_or(function.current_version)
        };
        let mut versions: Vec<i64> = events.iter().map(|(event, _)| version_of(event)).collect();
        versions.sort_unstable();
        versions.dedup();
        let schemas =
            self.records.output_schemas_of_versions(tenant.owner(), &function.id, &versions).await?;
        for (event, call_input) in events {
            let Some(event_id) = event.get("eventID").and_then(Value::as_str) else { continue };
            let schema = schemas.get(&version_of(&event)).filter(|s| s.is_object()).cloned();
            // A correction is kept in the event's body (`correction`, see crate::accuracy).
            let corrected = event
                .get("correction")
                .filter(|v| !v.is_null())
                .or_else(|| event.get("transformedContent"))
                .cloned()
                .unwrap_or(Value::Null);
            let mut cells = vec![("corrected".to_string(), json!({ "jsonValue": corrected }))];
            if let Some(file) = call_input
                .and_then(|text| serde_json::from_str::<Vec<Value>>(&text).ok())
                .and_then(|files| files.into_iter().next())
            {
                let file = FileValue {
                    input_type: file.get("inputType").and_then(Value::as_str).unwrap_or("text").to_string(),
                    s3_url: None,
                    input_content: file.get("content").and_then(Value::as_str).map(String::from),
                };
                cells.push(("input".into(), json!({ "fileValue": file })));
            }
            if let Some(schema) = schema {
                cells.push(("schema".into(), json!({ "jsonValue": schema })));
            }
            self.write_cells(&dataset.dataset_id, event_id, &cells).await?;
        }
        self.get(tenant, &dataset.dataset_id).await
    }

    /// Every row (up to 1000) with an input and an expected value, as scoring reads them.
    pub async fn scoring_rows(&self, tenant: &Tenant, id: &str) -> ServiceResult<Vec<ScoringRow>> {
        let dataset = self.row(tenant, id).await?;
        let columns = columns_of(&dataset);
        let find = |role| columns.iter().find(|c| c.role == role).map(|c| c.name.clone());
        let (Some(input), Some(corrected)) = (find(ColumnRole::Input), find(ColumnRole::Corrected)) else {
            return Err(ServiceError::Unprocessable {
                message: format!("dataset {id} needs an input and a corrected column to be scored against"),
                details: None,
            });
        };
        let schema = find(ColumnRole::Schema);
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        let (mut bytes, mut rows_read) = (0, 0);
        while out.len() < MAX_ROWS_PER_BUILD as usize {
            let read =
                self.records.dataset_rows(&dataset.id, after.as_deref(), 200, MAX_READ_BYTES - bytes).await?;
            bytes += read.bytes;
            rows_read += read.rows.len();
            if read.cut || bytes > MAX_READ_BYTES {
                // A row is read past the bound only when it comes first: it does not fit.
                let fit = rows_read - usize::from(bytes > MAX_READ_BYTES);
                return Err(ServiceError::Unprocessable {
                    message: format!(
                        "dataset {id}: its rows hold more than the {} MiB of stored values a score run \
                         reads (datasetReadBytes), the first {fit} fit; delete rows or split the dataset",
                        MAX_READ_BYTES >> 20
                    ),
                    details: Some(json!({ "field": "datasetID", "limitBytes": MAX_READ_BYTES })),
                });
            }
            let page = read.rows;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (row_key, cells) in page {
                let value = |name: &str| {
                    cells.get(name).and_then(|v| serde_json::from_value::<CellValue>(v.clone()).ok())
                };
                let (Some(input), Some(expected)) =
                    (value(&input).and_then(as_input), value(&corrected).map(as_json))
                else {
                    continue;
                };
                let schema = schema.as_deref().and_then(value).map(as_json).filter(|s| !s.is_null());
                out.push(ScoringRow { row_key, input, expected, schema });
            }
        }
        out.truncate(MAX_ROWS_PER_BUILD as usize);
        Ok(out)
    }

    /// A dataset's rows as `(input, expected)` pairs for `POST /v3/eval/score` with
    /// `datasetID`: input is `{inputType, inputContent}` like a score pair's.
    pub async fn pairs(&self, tenant: &Tenant, id: &str) -> ServiceResult<Vec<(Value, Value)>> {
        Ok(self.scoring_rows(tenant, id).await?.into_iter().map(|row| (row.input, row.expected)).collect())
    }

    async fn row(&self, tenant: &Tenant, id: &str) -> ServiceResult<StoredDataset> {
        self.records
            .find_dataset(tenant.owner(), id)
            .await?
            .ok_or_else(|| ServiceError::not_found("dataset", id))
    }
}

fn check_columns(columns: &[DatasetColumn]) -> ServiceResult<()> {
    if columns.is_empty() {
        return Err(ServiceError::invalid_field("columns", "give at least one column"));
    }
    let mut names = Vec::new();
    let mut roles = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        text::check_len(&format!("columns[{i}].name"), &column.name, NAME_MAX, true)?;
        if names.contains(&column.name) {
            return Err(ServiceError::invalid_field(
                &format!("columns[{i}].name"),
                "column names must be unique",
            ));
        }
        if roles.contains(&column.role) {
            return Err(ServiceError::invalid_field(
                &format!("columns[{i}].role"),
                "at most one column per role",
            ));
        }
        if column.role == ColumnRole::Schema && column.column_type != ColumnType::Json {
            return Err(ServiceError::invalid_field(
                &format!("columns[{i}].type"),
                "a schema column is json",
            ));
        }
        names.push(column.name.clone());
        roles.push(column.role);
    }
    Ok(())
}

fn check_row_key(row_key: &str) -> ServiceResult<()> {
    text::check_len("row_key", row_key, 200, true)
}

fn columns_of(dataset: &StoredDataset) -> Vec<DatasetColumn> {
    serde_json::from_value(dataset.columns.clone()).unwrap_or_default()
}

/// The request's `value` checked against the column's type.
fn typed_value(column: &DatasetColumn, value: Value) -> Result<CellValue, String> {
    let Value::Object(mut fields) = value else {
        return Err("value must be an object: {fileValue}, {stringValue} or {jsonValue}".into());
    };
    let key = match column.column_type {
        ColumnType::File => "fileValue",
        ColumnType::String => "stringValue",
        ColumnType::Json => "jsonValue",
    };
    let given = fields.remove(key).filter(|v| !v.is_null());
    let Some(given) = given else {
        return Err(format!("a {} column takes value.{key}", type_name(column.column_type)));
    };
    text::check_json(&format!("value.{key}"), &given).map_err(|err| err.to_string())?;
    match column.column_type {
        ColumnType::String => match given {
            Value::String(text) if text.chars().count() <= 100_000 => {
                Ok(CellValue { string_value: Some(text), ..Default::default() })
            }
            Value::String(_) => Err("value.stringValue: at most 100000 characters".into()),
            _ => Err("value.stringValue must be a string".into()),
        },
        ColumnType::Json => {
            if column.role == ColumnRole::Schema && !given.is_object() {
                return Err("value.jsonValue of a schema column must be a JSON schema object".into());
            }
            Ok(CellValue { json_value: Some(given), ..Default::default() })
        }
        ColumnType::File => {
            let file: FileValue =
                serde_json::from_value(given).map_err(|err| format!("value.fileValue: {err}"))?;
            let Some(input_type) = crate::engines::supported_input_type(&file.input_type) else {
                return Err(format!(
                    "value.fileValue.inputType: unsupported inputType {:?}",
                    file.input_type
                ));
            };
            match (&file.s3_url, &file.input_content) {
                (None, None) => return Err("value.fileValue needs s3URL or inputContent".into()),
                (_, Some(content)) if base64::engine::general_purpose::STANDARD.decode(content).is_err() => {
                    return Err("value.fileValue.inputContent must be base64".into())
                }
                (Some(url), _) if !(url.starts_with("s3://") || url.starts_with("https://")) => {
                    return Err("value.fileValue.s3URL must be an s3:// or https:// URL".into())
                }
                _ => {}
            }
            Ok(CellValue {
                file_value: Some(FileValue { input_type: input_type.to_string(), ..file }),
                ..Default::default()
            })
        }
    }
}

fn type_name(column_type: ColumnType) -> &'static str {
    match column_type {
        ColumnType::File => "file",
        ColumnType::String => "string",
        ColumnType::Json => "json",
    }
}

fn summary(failed: &[FailedColumn]) -> String {
    failed.iter().map(|f| format!("column {:?}: {}", f.column_name, f.error)).collect::<Vec<_>>().join("; ")
}

fn shown(row: StoredDataset) -> ServiceResult<Dataset> {
    Ok(Dataset {
        columns: serde_json::from_value(row.columns).map_err(anyhow::Error::from)?,
        dataset_id: row.id,
        name: row.name,
        description: row.description,
        row_count: row.row_count,
        created_at: ids::millis_rfc3339(row.created_at),
        updated_at: ids::millis_rfc3339(row.updated_at),
    })
}

fn shown_row(columns: &[DatasetColumn], row_key: String, cells: BTreeMap<String, Value>) -> DatasetRow {
    let columns = columns
        .iter()
        .filter_map(|column| {
            let value = serde_json::from_value::<CellValue>(cells.get(&column.name)?.clone()).ok()?;
            Some(ColumnValue { column_name: column.name.clone(), column_type: column.column_type, value })
        })
        .collect();
    DatasetRow { row_key, columns }
}

/// A stored input as a score pair's input.
fn as_input(value: CellValue) -> Option<Value> {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    if let Some(file) = value.file_value {
        return Some(match file.input_content {
            Some(content) => json!({ "inputType": file.input_type, "inputContent": content }),
            None => json!({ "inputType": file.input_type, "s3URL": file.s3_url }),
        });
    }
    if let Some(text) = value.string_value {
        return Some(json!({ "inputType": "text", "inputContent": encode(text.as_bytes()) }));
    }
    value
        .json_value
        .map(|json| json!({ "inputType": "json", "inputContent": encode(json.to_string().as_bytes()) }))
}

/// A stored value as JSON (a string value is a JSON string).
fn as_json(value: CellValue) -> Value {
    match (value.json_value, value.string_value) {
        (Some(json), _) => json,
        (None, Some(text)) => Value::String(text),
        (None, None) => Value::Null,
    }
}
