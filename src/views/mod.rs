//! Views: tabular projections of the output events of one or more functions, with filters
//! and aggregations, kept as immutable numbered versions.
//!
//! Decisions where the spec and `bem-sdk` leave room:
//! - IDs are `vw_…`. Create starts at version 1; PUT replaces the whole definition and adds
//!   the next version; `GET ?versionNum=N` reads an older one; DELETE removes every version.
//! - A view reads the non-error events (terminal and intermediate: every transformation) of
//!   its functions, created in `[timeWindow.start, timeWindow.end)`, oldest first (by
//!   creation time, then event ID). A window spans at most 366 days and a table page starts
//!   at most 100,000 rows in, so one request reads a bounded part of the store.
//! - A column's `valueSchemaPath` addresses `transformedContent`; some version of some
//!   function of the view must have an output schema that can produce it, else 422: the
//!   distinct schemas of each function's versions, newest first, 1 MiB of them (at least the
//!   newest; dozens of schemas, 16 of the largest).
//!   Digits step into arrays where the schema has `items`.
//! - `equals_string` matches JSON strings, the number filters JSON numbers, `is_null` a
//!   missing value or JSON null. `sum`/`average`/`min`/`max` read numbers only;
//!   `count_distinct` counts distinct non-null JSON values; `count` counts rows (or, with an
//!   `aggregateColumnName`, rows whose value is not null). A group without a number to
//!   aggregate reports 0. Groups are ordered by value, largest first, at most 200; rows
//!   without a value form the group `""`.
//! - A table cell shows at most 256 KiB of JSON and a page 16 MiB (a column may name a
//!   subtree of an output of up to 128 MiB, in 200 rows of 100 columns): a value left out is
//!   `null` with `valueOmitted` giving its size, its first 1,000 characters and why; a group
//!   named by a longer value shows its first 1,000 characters and `…`. The cut is made in the
//!   database (see `store::records::views`).

pub mod inline;
pub mod model;
pub mod paths;

use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::pagination::{Order, PageRequest};
use crate::store::records::views::{
    Aggregate, Cell, Condition, Past, Projection, Scope, Step, ViewFilter as ListFilter, ViewRow,
    ViewVersionRow, CELL_BYTES, PAGE_BYTES,
};
use crate::store::records::{RecordError, Records};
use crate::text;
use model::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Longest name and description of a view (and of a column, filter or aggregation name).
pub const NAME_MAX: usize = 200;
pub const DESCRIPTION_MAX: usize = 2_000;
/// Bounds of a view's lists, checked on create and update and stated in the OpenAPI.
pub const MAX_FUNCTIONS: usize = 20;
pub const MAX_COLUMNS: usize = 100;
pub const MAX_FILTERS: usize = 50;
pub const MAX_AGGREGATIONS: usize = 20;
const MAX_PATH: usize = 16;
const MAX_GROUPS: u32 = 200;
/// Bytes of distinct output schemas a view's columns are checked against, per function,
/// newest version first (at least the newest): a function's versions are unbounded, each
/// schema up to 64 KiB, and every table or chart read checks its view.
pub const SCHEMA_BYTES: usize = 1024 * 1024;
/// Most rows one table page returns.
pub const MAX_TABLE_ROWS: i64 = 200;
/// Deepest row a table page may start at: the store walks every row before it.
pub const MAX_OFFSET: i64 = 100_000;
/// Widest time window a view reads (a leap year): the store reads every event inside it.
pub const MAX_WINDOW_DAYS: i64 = 366;

/// Longest a view's statement runs (a table page's count or rows, one aggregation) before
/// it is stopped and the request answered 422: the store reads every output of the window,
/// and what that costs is the tenant's to shape (see `store::records::views::scan`). A
/// window of 100,000 outputs reads in well under a second (README, `make bench-views`).
pub const SCAN_TIME: Duration = Duration::from_secs(15);

#[derive(Clone)]
pub struct ViewsService {
    pub records: Records,
    /// [`SCAN_TIME`] but in tests.
    pub scan_time: Duration,
}

/// A definition checked against the tenant's functions: what is stored and what is queried.
struct Checked {
    input: ViewInput,
    function_ids: Vec<String>,
    paths: Vec<Vec<Step>>,
    columns: HashMap<String, usize>,
}

/// The list's filters, as sent.
#[derive(Default, Debug)]
pub struct ListQuery {
    pub view_ids: Vec<String>,
    pub function_ids: Vec<String>,
    pub function_names: Vec<String>,
    pub name_substring: Option<String>,
    pub order: Order,
}

fn unprocessable(field: &str, message: String, extra: Value) -> ServiceError {
    let mut details = json!({ "field": field, "error": message });
    if let (Some(details), Value::Object(extra)) = (details.as_object_mut(), extra) {
        details.extend(extra);
    }
    ServiceError::Unprocessable { message: format!("{field}: {message}"), details: Some(details) }
}

impl ViewsService {
    pub async fn create(&self, tenant: &Tenant, input: ViewInput) -> ServiceResult<View> {
        let checked = self.check(tenant, input).await?;
        let now = ids::now_millis();
        let row = ViewRow {
            id: ids::new_id("vw"),
            name: checked.input.name.clone(),
            current_version: 1,
            created_at: now,
            updated_at: now,
        };
        let body = serde_json::to_value(&checked.input).map_err(anyhow::Error::from)?;
        self.records.insert_view(tenant.owner(), &row, &body, &checked.function_ids).await?;
        self.shown(tenant, ViewVersionRow { head: row, version_num: 1, body }).await
    }

    pub async fn get(&self, tenant: &Tenant, id: &str, version: Option<i64>) -> ServiceResult<View> {
        let row =
            self.records.find_view(tenant.owner(), id, version).await?.ok_or_else(|| match version {
                Some(n) => ServiceError::not_found("view version", format!("{id} version {n}")),
                None => ServiceError::not_found("view", id),
            })?;
        self.shown(tenant, row).await
    }

    /// A whole replacement: the next version.
    pub async fn update(&self, tenant: &Tenant, id: &str, input: ViewInput) -> ServiceResult<View> {
        let current = self
            .records
            .find_view(tenant.owner(), id, None)
            .await?
            .ok_or_else(|| ServiceError::not_found("view", id))?;
        let checked = self.check(tenant, input).await?;
        let expected = current.head.current_version;
        let row = ViewRow {
            name: checked.input.name.clone(),
            current_version: expected + 1,
            updated_at: ids::now_millis(),
            ..current.head
        };
        let body = serde_json::to_value(&checked.input).map_err(anyhow::Error::from)?;
        if !self
            .records
            .add_view_version(tenant.owner(), &row, expected, &body, &checked.function_ids)
            .await?
        {
            return Err(ServiceError::ConcurrentChange(format!(
                "view {id} changed while this update was made; send it again"
            )));
        }
        self.shown(tenant, ViewVersionRow { head: row, version_num: expected + 1, body }).await
    }

    pub async fn delete(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        if self.records.delete_view(tenant.owner(), id).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("view", id))
        }
    }

    pub async fn list(
        &self,
        tenant: &Tenant,
        query: ListQuery,
        page: &PageRequest,
    ) -> ServiceResult<Vec<View>> {
        text::check_each("viewIDs", &query.view_ids)?;
        text::check_each("functionIDs", &query.function_ids)?;
        text::check_each("functionNames", &query.function_names)?;
        text::check_opt("viewNameSubstring", query.name_substring.as_deref())?;
        let mut by_name = Vec::new();
        for name in &query.function_names {
            match self.records.find_function(tenant.owner(), name).await? {
                Some(function) => by_name.push(function.head.id),
                // A name no function has matches nothing (but must not widen the filter).
                None => by_name.push(format!("none:{name}")),
            }
        }
        // Both function filters must hold: the names narrow what the IDs found, in the store's
        // query (reading the views of the names first read every one of them whole).
        let filter = ListFilter {
            view_ids: query.view_ids,
            function_ids: query.function_ids,
            named_function_ids: by_name,
            name_substring: query.name_substring,
        };
        let mut rows = Vec::new();
        let ascending = query.order == Order::Asc;
        for row in
            self.records.list_views(tenant.owner(), &filter, &page.cursor, ascending, page.limit).await?
        {
            rows.push(self.shown(tenant, row).await?);
        }
        Ok(rows)
    }

    pub async fn table_data(&self, tenant: &Tenant, input: TableDataInput) -> ServiceResult<TableData> {
        let limit = match input.limit {
            None => 50,
            Some(n @ 1..=MAX_TABLE_ROWS) => n as u32,
            Some(n) => {
                return Err(ServiceError::invalid_field(
                    "limit",
                    format!("must be 1..{MAX_TABLE_ROWS} (got {n})"),
                ))
            }
        };
        let offset = match input.offset {
            None => 0,
            Some(n @ 0..=MAX_OFFSET) => n as u64,
            Some(n) => {
                return Err(ServiceError::invalid_field(
                    "offset",
                    format!("must be 0..{MAX_OFFSET} (got {n})"),
                ))
            }
        };
        let window = time_window(&input.time_window)?;
        let checked = self.check(tenant, input.view).await?;
        let scope = Scope { function_ids: checked.function_ids.clone(), start: window.0, end: window.1 };
        let projection = projection(&checked)?;
        let (rows, total) = self
            .records
            .view_table(tenant.owner(), &scope, &projection, limit, offset, self.scan_time)
            .await
            .map_err(|err| stopped(err, "table page"))?;
        let mut order: Vec<usize> = (0..checked.input.columns.len()).collect();
        order.sort_by_key(|&i| (checked.input.columns[i].display_order_index, i));
        let rows = rows
            .into_iter()
            .map(|(event_id, values)| TableRow {
                event_id,
                columns: order
                    .iter()
                    .map(|&i| {
                        let (value, value_omitted) = match values.get(i) {
                            Some(Cell::Value(value)) => (value.clone(), None),
                            Some(Cell::Omitted { json_bytes, excerpt, past }) => {
                                (Value::Null, Some(omitted(*json_bytes, excerpt, *past)))
                            }
                            None => (Value::Null, None),
                        };
                        RowColumn { column_name: checked.input.columns[i].name.clone(), value, value_omitted }
                    })
                    .collect(),
            })
            .collect();
        Ok(TableData { rows, total_count: total })
    }

    pub async fn aggregation_data(
        &self,
        tenant: &Tenant,
        input: AggregationDataInput,
    ) -> ServiceResult<AggregationData> {
        let window = time_window(&input.time_window)?;
        let checked = self.check(tenant, input.view).await?;
        let scope = Scope { function_ids: checked.function_ids.clone(), start: window.0, end: window.1 };
        let projection = projection(&checked)?;
        let mut results = Vec::new();
        // The aggregations share one scan time: each had its own, so the 20 a view holds could
        // keep one of the instance's 4 scan connections for 300 s a request.
        let started = std::time::Instant::now();
        for (i, aggregation) in checked.input.aggregations.iter().enumerate() {
            let left = self.scan_time.saturating_sub(started.elapsed());
            if i > 0 && left < MIN_SCAN_LEFT {
                return Err(stopped(RecordError::TimedOut(self.scan_time), "aggregations together"));
            }
            let column = aggregation.aggregate_column_name.as_ref().map(|name| checked.columns[name]);
            let aggregate = match (aggregation.function, column) {
                (AggregationFunction::Count, column) => Aggregate::Count(column),
                (AggregationFunction::CountDistinct, Some(c)) => Aggregate::CountDistinct(c),
                (AggregationFunction::Sum, Some(c)) => Aggregate::Sum(c),
                (AggregationFunction::Average, Some(c)) => Aggregate::Average(c),
                (AggregationFunction::Min, Some(c)) => Aggregate::Min(c),
                (AggregationFunction::Max, Some(c)) => Aggregate::Max(c),
                (_, None) => unreachable_column(&aggregation.name)?,
            };
            let group_by = aggregation.group_by_column_name.as_ref().map(|name| checked.columns[name]);
            let groups = self
                .records
                .view_aggregate(tenant.owner(), &scope, &projection, aggregate, group_by, MAX_GROUPS, left)
                .await
                .map_err(|err| match err {
                    // Stopped at what was left of the request's scan time: that time is the bound.
                    RecordError::TimedOut(_) => RecordError::TimedOut(self.scan_time),
                    other => other,
                })
                .map_err(|err| stopped(err, &format!("aggregation {:?}", aggregation.name)))?
                .into_iter()
                .map(|(key, value)| AggregationGroup {
                    group_name: group_name(key),
                    value: value.unwrap_or(0.0),
                })
                .collect();
            results.push(AggregationResult { name: aggregation.name.clone(), groups });
        }
        Ok(AggregationData { aggregations: results })
    }

    /// The view as shown, with its functions' current names.
    async fn shown(&self, tenant: &Tenant, row: ViewVersionRow) -> ServiceResult<View> {
        let input: ViewInput = serde_json::from_value(row.body).map_err(anyhow::Error::from)?;
        let mut functions = Vec::with_capacity(input.functions.len());
        for function in input.functions {
            let name = match &function.id {
                Some(id) => self.records.find_function_by_id(tenant.owner(), id).await?.map(|f| f.name),
                None => None,
            };
            functions.push(FunctionIdentifier { id: function.id, name: name.or(function.name) });
        }
        Ok(View {
            view_id: row.head.id,
            name: input.name,
            description: input.description,
            current_version_num: row.head.current_version,
            version_num: row.version_num,
            columns: input.columns,
            filters: input.filters,
            aggregations: input.aggregations,
            functions,
        })
    }

    /// Checks a definition as a whole; functions are stored by ID (with the name they had).
    async fn check(&self, tenant: &Tenant, mut input: ViewInput) -> ServiceResult<Checked> {
        input.name = input.name.trim().to_string();
        text::check_len("name", &input.name, NAME_MAX, true)?;
        if let Some(description) = &input.description {
            text::check_len("description", description, DESCRIPTION_MAX, false)?;
        }
        let schemas = self.functions(tenant, &mut input).await?;
        // A function named twice (by name and by ID) is read once.
        let mut function_ids: Vec<String> = input.functions.iter().filter_map(|f| f.id.clone()).collect();
        function_ids.sort();
        function_ids.dedup();
        if input.columns.len() > MAX_COLUMNS {
            return Err(ServiceError::invalid_field("columns", format!("at most {MAX_COLUMNS} columns")));
        }
        let mut columns = HashMap::new();
        let mut paths = Vec::new();
        let mut steps_left = paths::REQUEST_STEPS;
        for (i, column) in input.columns.iter().enumerate() {
            let field = format!("columns[{i}]");
            text::check_len(&format!("{field}.name"), &column.name, NAME_MAX, true)?;
            if columns.insert(column.name.clone(), i).is_some() {
                return Err(ServiceError::invalid_field(
                    &format!("{field}.name"),
                    format!("two columns are named {:?}", column.name),
                ));
            }
            if column.display_order_index < 0 {
                return Err(ServiceError::invalid_field(
                    &format!("{field}.displayOrderIndex"),
                    "must be 0 or more",
                ));
            }
            let path_field = format!("{field}.valueSchemaPath");
            if column.value_schema_path.is_empty() || column.value_schema_path.len() > MAX_PATH {
                return Err(ServiceError::invalid_field(&path_field, format!("give 1..{MAX_PATH} keys")));
            }
            for (j, key) in column.value_schema_path.iter().enumerate() {
                text::check_len(&format!("{path_field}[{j}]"), key, NAME_MAX, true)?;
                if key.contains('"') {
                    return Err(ServiceError::invalid_field(
                        &format!("{path_field}[{j}]"),
                        "keys holding a double quote cannot be addressed",
                    ));
                }
            }
            let steps = schemas
                .iter()
                .find_map(|schema| paths::resolve(schema, &column.value_schema_path, &mut steps_left));
            match steps {
                Some(steps) => paths.push(steps),
                None if steps_left == 0 => {
                    return Err(unprocessable(
                        &path_field,
                        format!(
                            "the view's columns took the {} steps a request may take to be found in \
                             its functions' output schemas; use fewer columns, fewer functions or \
                             schemas with fewer references",
                            paths::REQUEST_STEPS
                        ),
                        json!({ "path": column.value_schema_path, "limit": "schemaSteps" }),
                    ))
                }
                None => {
                    return Err(unprocessable(
                        &path_field,
                        format!(
                            "no output schema of the view's functions has {:?} (each function's \
                             distinct schemas are read newest first, {SCHEMA_BYTES} bytes of them)",
                            column.value_schema_path.join(".")
                        ),
                        json!({ "path": column.value_schema_path }),
                    ))
                }
            }
        }
        let known = |field: String, name: &str| -> ServiceResult<()> {
            if columns.contains_key(name) {
                Ok(())
            } else {
                Err(unprocessable(&field, format!("no column named {name:?} in this view"), json!({})))
            }
        };
        if input.filters.len() > MAX_FILTERS {
            return Err(ServiceError::invalid_field("filters", format!("at most {MAX_FILTERS} filters")));
        }
        for (i, filter) in input.filters.iter().enumerate() {
            let field = format!("filters[{i}]");
            text::check_len(&format!("{field}.columnName"), &filter.column_name, NAME_MAX, true)?;
            known(format!("{field}.columnName"), &filter.column_name)?;
            match filter.filter_type {
                FilterType::EqualsString => match &filter.string {
                    Some(value) => text::check_len(&format!("{field}.string"), value, 2_000, false)?,
                    None => {
                        return Err(ServiceError::invalid_field(
                            &format!("{field}.string"),
                            "equals_string needs a string",
                        ))
                    }
                },
                FilterType::IsNull | FilterType::IsNotNull => {}
                _ if filter.number.is_none() => {
                    return Err(ServiceError::invalid_field(
                        &format!("{field}.number"),
                        "number filters need a number",
                    ))
                }
                _ => {}
            }
        }
        if input.aggregations.len() > MAX_AGGREGATIONS {
            return Err(ServiceError::invalid_field(
                "aggregations",
                format!("at most {MAX_AGGREGATIONS} aggregations"),
            ));
        }
        for (i, aggregation) in input.aggregations.iter().enumerate() {
            let field = format!("aggregations[{i}]");
            text::check_len(&format!("{field}.name"), &aggregation.name, NAME_MAX, true)?;
            match &aggregation.aggregate_column_name {
                Some(name) => {
                    text::check_len(&format!("{field}.aggregateColumnName"), name, NAME_MAX, true)?;
                    known(format!("{field}.aggregateColumnName"), name)?;
                }
                None if aggregation.function != AggregationFunction::Count => {
                    return Err(ServiceError::invalid_field(
                        &format!("{field}.aggregateColumnName"),
                        "every function but count needs the column it aggregates",
                    ))
                }
                None => {}
            }
            if let Some(name) = &aggregation.group_by_column_name {
                text::check_len(&format!("{field}.groupByColumnName"), name, NAME_MAX, true)?;
                known(format!("{field}.groupByColumnName"), name)?;
            }
        }
        Ok(Checked { input, function_ids, paths, columns })
    }

    /// Resolves `functions` in place to `{id, name}` and returns every output schema any
    /// version of them has.
    async fn functions(&self, tenant: &Tenant, input: &mut ViewInput) -> ServiceResult<Vec<Value>> {
        if input.functions.is_empty() || input.functions.len() > MAX_FUNCTIONS {
            return Err(ServiceError::invalid_field(
                "functions",
                format!("give 1..{MAX_FUNCTIONS} functions"),
            ));
        }
        let mut resolved: Vec<FunctionIdentifier> = Vec::new();
        let mut schemas = Vec::new();
        for (i, function) in input.functions.iter().enumerate() {
            let field = format!("functions[{i}]");
            let id = function.id.as_deref().map(str::trim).filter(|v| !v.is_empty());
            let name = function.name.as_deref().map(str::trim).filter(|v| !v.is_empty());
            text::check_opt(&format!("{field}.id"), id)?;
            text::check_opt(&format!("{field}.name"), name)?;
            let head = match (id, name) {
                (Some(_), Some(_)) => {
                    return Err(ServiceError::invalid_field(&field, "give either id or name, not both"))
                }
                (None, None) => {
                    return Err(ServiceError::invalid_field(&field, "give the function's id or its name"))
                }
                (Some(id), None) => self.records.find_function_by_id(tenant.owner(), id).await?,
                (None, Some(name)) => self.records.find_function(tenant.owner(), name).await?.map(|f| f.head),
            };
            let Some(head) = head else {
                let given = id.or(name).unwrap_or_default();
                return Err(unprocessable(
                    &field,
                    format!("no function {given:?} in this environment"),
                    json!({}),
                ));
            };
            if resolved.iter().any(|f| f.id.as_deref() == Some(head.id.as_str())) {
                continue;
            }
            let found = self.records.function_output_schemas(tenant.owner(), &head.id, SCHEMA_BYTES).await?;
            schemas.extend(found.into_iter().filter(|s| !s.is_null()));
            resolved.push(FunctionIdentifier { id: Some(head.id), name: Some(head.name) });
        }
        input.functions = resolved;
        Ok(schemas)
    }
}

/// A statement stopped at [`SCAN_TIME`] as a 422 saying what to narrow; other errors as they are.
/// Scan time below which a request's next aggregation is not started.
const MIN_SCAN_LEFT: std::time::Duration = std::time::Duration::from_millis(100);

fn stopped(err: RecordError, what: &str) -> ServiceError {
    let RecordError::TimedOut(limit) = err else { return err.into() };
    ServiceError::Unprocessable {
        message: format!(
            "reading the view's {what} took longer than {} s and was stopped: narrow timeWindow, \
             add filters, or read fewer columns",
            limit.as_secs_f64()
        ),
        details: Some(json!({ "timeLimitMillis": limit.as_millis() as u64 })),
    }
}

fn unreachable_column(name: &str) -> ServiceResult<Aggregate> {
    Err(ServiceError::invalid_field("aggregations", format!("{name}: needs an aggregateColumnName")))
}

fn projection(checked: &Checked) -> ServiceResult<Projection> {
    let conditions = checked
        .input
        .filters
        .iter()
        .map(|filter| {
            let column = checked.columns[&filter.column_name];
            let number = filter.number.unwrap_or(0.0);
            let condition = match filter.filter_type {
                FilterType::EqualsString => {
                    Condition::EqualsString(filter.string.clone().unwrap_or_default())
                }
                FilterType::EqualsNumber => Condition::Compare("=", number),
                FilterType::LessThanNumber => Condition::Compare("<", number),
                FilterType::LessThanEqualNumber => Condition::Compare("<=", number),
                FilterType::GreaterThanNumber => Condition::Compare(">", number),
                FilterType::GreaterThanEqualNumber => Condition::Compare(">=", number),
                FilterType::IsNull => Condition::IsNull,
                FilterType::IsNotNull => Condition::IsNotNull,
            };
            (column, condition)
        })
        .collect();
    Ok(Projection { paths: checked.paths.clone(), conditions })
}

/// `[start, end)` in epoch milliseconds.
fn time_window(window: &TimeWindow) -> ServiceResult<(i64, i64)> {
    let parse = |field: &str, text: &str| {
        chrono::DateTime::parse_from_rfc3339(text).map(|t| t.timestamp_millis()).map_err(|_| {
            ServiceError::invalid_field(
                field,
                format!("must be an RFC 3339 date-time such as 2024-01-31T00:00:00Z (got {text:?})"),
            )
        })
    };
    let start = parse("timeWindow.start", &window.start)?;
    let end = parse("timeWindow.end", &window.end)?;
    if start > end {
        return Err(ServiceError::invalid_field("timeWindow", "start must not be after end"));
    }
    if end - start > MAX_WINDOW_DAYS * 86_400_000 {
        return Err(ServiceError::invalid_field(
            "timeWindow",
            format!("spans more than {MAX_WINDOW_DAYS} days; ask for a narrower window (or several in turn)"),
        ));
    }
    Ok((start, end))
}

/// A group's name: a string as is, another value as JSON, none as `""`.
/// What a table page says of a value it does not show.
fn omitted(json_bytes: i64, excerpt: &str, past: Past) -> OmittedValue {
    let reason = match past {
        Past::Cell => format!(
            "longer than the {CELL_BYTES} bytes of JSON a table cell shows: name a narrower \
             valueSchemaPath, or read the whole output through GET /v3/outputs"
        ),
        Past::Page => format!(
            "past the {PAGE_BYTES} bytes of JSON a table page shows: ask for fewer rows (limit) \
             or fewer columns"
        ),
    };
    OmittedValue { json_bytes, json_excerpt: excerpt.to_string(), reason }
}

fn group_name(key: Option<Value>) -> String {
    match key {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}
