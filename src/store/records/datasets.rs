//! Storage of golden datasets: a row per dataset (its typed columns as JSON) and one stored
//! value per (row key, column).

use super::filters::Cursor;
use super::filters::{page_rows, Filter};
use super::Owner;
use super::{RecordError, Records};
use futures::TryStreamExt;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::BTreeMap;

/// A dataset as stored (`columns`: `[{name, role, type}]`).
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetRow {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub columns: Value,
    pub row_count: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One row: its key and each stored value by column name.
pub type DatasetCells = (String, BTreeMap<String, Value>);

/// The events [`Records::events_with_inputs`] chose: read, or too large to read together
/// (`fit` of the `events` fit in the bound; `bytes` they hold in all).
#[derive(Debug)]
pub enum EventsChosen {
    Read(Vec<(Value, Option<String>)>),
    TooLarge { events: usize, fit: usize, bytes: usize },
}

/// Rows [`Records::dataset_rows`] read: their stored size, and whether the byte bound left
/// out rows that `limit` would have taken.
#[derive(Debug, Default)]
pub struct RowsRead {
    pub rows: Vec<DatasetCells>,
    pub bytes: usize,
    pub cut: bool,
}

const COLUMNS: &str = "d.id, d.name, d.description, d.columns, d.created_at, d.updated_at, d.row_count";

/// What a write of one row's cells did.
#[derive(Debug, PartialEq, Eq)]
pub enum CellsWritten {
    Written,
    /// The row is new and the dataset holds its most rows already: nothing was written.
    DatasetFull,
    /// The dataset is gone (deleted since the caller read it): nothing was written.
    NoDataset,
}

fn dataset(row: &AnyRow) -> DatasetRow {
    DatasetRow {
        id: row.get("id"),
        name: row.get("name"),
        description: row.get("description"),
        columns: serde_json::from_str(&row.get::<String, _>("columns")).unwrap_or(Value::Null),
        row_count: row.get("row_count"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

impl Records {
    pub async fn insert_dataset(&self, owner: Owner<'_>, d: &DatasetRow) -> Result<(), RecordError> {
        sqlx::query(
            "INSERT INTO datasets (id, account_id, environment, name, description, columns, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&d.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&d.name)
        .bind(&d.description)
        .bind(d.columns.to_string())
        .bind(d.created_at)
        .bind(d.updated_at)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    pub async fn find_dataset(&self, owner: Owner<'_>, id: &str) -> Result<Option<DatasetRow>, RecordError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM datasets d WHERE d.id = $1 AND d.account_id = $2 AND d.environment = $3"
        );
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(dataset))
    }

    /// A page of datasets by ID.
    pub async fn list_datasets(
        &self,
        owner: Owner<'_>,
        name_substring: Option<&str>,
        cursor: &Cursor,
        limit: u32,
    ) -> Result<Vec<DatasetRow>, RecordError> {
        let mut filter = Filter::default();
        filter.eq("d.account_id", owner.account_id).eq("d.environment", owner.environment);
        if let Some(text) = name_substring {
            filter.contains("d.name", text);
        }
        let sql = filter.page_sql(COLUMNS, "datasets d", "d.id", cursor, true, limit);
        let rows = filter.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(page_rows(rows.iter().map(dataset).collect(), cursor))
    }

    /// Deletes a dataset and its rows.
    pub async fn delete_dataset(&self, owner: Owner<'_>, id: &str) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("DELETE FROM datasets WHERE id = $1 AND account_id = $2 AND environment = $3")
            .bind(id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 1 {
            sqlx::query("DELETE FROM dataset_cells WHERE dataset_id = $1").bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Writes the values of one row (replacing those of the same columns), in one
    /// transaction, unless the row is new and the dataset holds `max_rows` already. The
    /// dataset must belong to the caller (checked by the service).
    pub async fn write_dataset_cells(
        &self,
        dataset_id: &str,
        row_key: &str,
        cells: &[(String, Value)],
        now: i64,
        max_rows: i64,
    ) -> Result<CellsWritten, RecordError> {
        let mut tx = self.begin_write().await?;
        // The dataset's row first: on PostgreSQL it is locked until the commit, so writes of
        // one dataset take turns and the row count below sees every earlier write's rows
        // (two writes of one new row at once counted it twice).
        let found = sqlx::query("UPDATE datasets SET updated_at = $1 WHERE id = $2")
            .bind(now)
            .bind(dataset_id)
            .execute(&mut *tx)
            .await?;
        if found.rows_affected() == 0 {
            return Ok(CellsWritten::NoDataset);
        }
        let existing =
            sqlx::query("SELECT 1 AS one FROM dataset_cells WHERE dataset_id = $1 AND row_key = $2 LIMIT 1")
                .bind(dataset_id)
                .bind(row_key)
                .fetch_optional(&mut *tx)
                .await?;
        if existing.is_none() {
            let counted =
                sqlx::query("UPDATE datasets SET row_count = row_count + 1 WHERE id = $1 AND row_count < $2")
                    .bind(dataset_id)
                    .bind(max_rows)
                    .execute(&mut *tx)
                    .await?;
            if counted.rows_affected() == 0 {
                return Ok(CellsWritten::DatasetFull);
            }
        }
        for (column, value) in cells {
            sqlx::query(
                "INSERT INTO dataset_cells (dataset_id, row_key, column_name, value, updated_at) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (dataset_id, row_key, column_name) DO UPDATE SET value = $4, updated_at = $5",
            )
            .bind(dataset_id)
            .bind(row_key)
            .bind(column)
            .bind(value.to_string())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(CellsWritten::Written)
    }

    /// Rows of a dataset in row-key order: after `after`, at most `limit` of them, and no more
    /// than fit in `max_bytes` of stored values (one row at least; a row is tenant-written,
    /// each write up to a request's 2 MB). The values are streamed: past the bound the rest
    /// are never read.
    pub async fn dataset_rows(
        &self,
        dataset_id: &str,
        after: Option<&str>,
        limit: u32,
        max_bytes: usize,
    ) -> Result<RowsRead, RecordError> {
        let keys_sql = format!(
            "SELECT DISTINCT row_key FROM dataset_cells WHERE dataset_id = $1 {} ORDER BY row_key LIMIT {limit}",
            if after.is_some() { "AND row_key > $2" } else { "" }
        );
        let mut query = sqlx::query(&keys_sql).bind(dataset_id);
        if let Some(after) = after {
            query = query.bind(after);
        }
        let keys: Vec<String> = query.fetch_all(&self.pool).await?.iter().map(|r| r.get("row_key")).collect();
        let mut read = RowsRead::default();
        let (Some(first), Some(last)) = (keys.first(), keys.last()) else { return Ok(read) };
        let mut cells = sqlx::query(
            "SELECT row_key, column_name, value FROM dataset_cells \
             WHERE dataset_id = $1 AND row_key >= $2 AND row_key <= $3 ORDER BY row_key, column_name",
        )
        .bind(dataset_id)
        .bind(first)
        .bind(last)
        .fetch(&self.pool);
        let mut row_bytes = 0;
        while let Some(cell) = cells.try_next().await? {
            let key: String = cell.get("row_key");
            if read.rows.last().is_none_or(|(last, _)| *last != key) {
                if read.bytes + row_bytes > max_bytes && !read.rows.is_empty() {
                    // The row just read takes the rows past the bound: it is left out, unless
                    // it is the first.
                    if read.rows.len() > 1 {
                        read.rows.pop();
                    } else {
                        read.bytes += row_bytes;
                    }
                    read.cut = true;
                    return Ok(read);
                }
                read.bytes += row_bytes;
                row_bytes = 0;
                read.rows.push((key, BTreeMap::new()));
            }
            let text: String = cell.get("value");
            row_bytes += text.len();
            let value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if let Some((_, values)) = read.rows.last_mut() {
                values.insert(cell.get("column_name"), value);
            }
        }
        if read.bytes + row_bytes > max_bytes && read.rows.len() > 1 {
            read.rows.pop();
            read.cut = true;
        } else {
            read.bytes += row_bytes;
        }
        Ok(read)
    }

    /// One row's values (empty when the row has none).
    pub async fn dataset_row(
        &self,
        dataset_id: &str,
        row_key: &str,
    ) -> Result<BTreeMap<String, Value>, RecordError> {
        let rows = sqlx::query(
            "SELECT column_name, value FROM dataset_cells WHERE dataset_id = $1 AND row_key = $2",
        )
        .bind(dataset_id)
        .bind(row_key)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|row| {
                (
                    row.get("column_name"),
                    serde_json::from_str(&row.get::<String, _>("value")).unwrap_or(Value::Null),
                )
            })
            .collect())
    }

    /// Deletes one row's values and counts it out; false when it had none.
    pub async fn delete_dataset_row(&self, dataset_id: &str, row_key: &str) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        // Locked first, as a write does (see `write_dataset_cells`).
        sqlx::query("UPDATE datasets SET row_count = row_count WHERE id = $1")
            .bind(dataset_id)
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM dataset_cells WHERE dataset_id = $1 AND row_key = $2")
            .bind(dataset_id)
            .bind(row_key)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() > 0 {
            sqlx::query("UPDATE datasets SET row_count = row_count - 1 WHERE id = $1 AND row_count > 0")
                .bind(dataset_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    /// Up to `limit` non-error events of a function (oldest first), with the input of the
    /// call each came from: `(event body, call input)`, when together they hold at most
    /// `max_bytes`. Their sizes are asked first (`octet_length`, which neither database
    /// reads the value for), so events past the bound are never read.
    pub async fn events_with_inputs(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        event_ids: &[String],
        corrected_only: bool,
        limit: u32,
        max_bytes: usize,
    ) -> Result<EventsChosen, RecordError> {
        let mut filter = Filter::default();
        filter.eq("e.account_id", owner.account_id).eq("e.environment", owner.environment);
        filter.eq("e.function_id", function_id).raw("e.event_type <> 'error'").any_of("e.id", event_ids);
        if corrected_only {
            filter.raw("e.labelled = 1");
        }
        let sizes_sql = format!(
            "SELECT e.id, CAST(octet_length(e.body) + COALESCE(octet_length(c.input), 0) AS BIGINT) AS bytes \
             FROM events e LEFT JOIN calls c ON c.id = e.call_id {} ORDER BY e.id LIMIT {limit}",
            filter.where_clause()
        );
        let sizes = filter.bind(sqlx::query(&sizes_sql)).fetch_all(&self.pool).await?;
        let (mut ids, mut bytes, mut fit) = (Vec::new(), 0usize, 0);
        for row in &sizes {
            bytes += row.get::<i64, _>("bytes").max(0) as usize;
            fit += usize::from(bytes <= max_bytes);
            ids.push(row.get::<String, _>("id"));
        }
        if bytes > max_bytes {
            return Ok(EventsChosen::TooLarge { events: ids.len(), fit, bytes });
        }
        let mut read = Filter::default();
        read.eq("e.account_id", owner.account_id).eq("e.environment", owner.environment).any_of("e.id", &ids);
        let sql = format!(
            "SELECT e.body, c.input FROM events e LEFT JOIN calls c ON c.id = e.call_id {} ORDER BY e.id",
            read.where_clause()
        );
        let rows = read.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(EventsChosen::Read(
            rows.iter()
                .filter_map(|row| {
                    let body = serde_json::from_str(&row.get::<String, _>("body")).ok()?;
                    Some((body, row.get::<Option<String>, _>("input")))
                })
                .collect(),
        ))
    }
}
