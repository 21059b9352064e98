//! Storage of views (a head row and immutable versions); the SQL that projects, filters and
//! aggregates the outputs a view reads is in [`projection`].

mod projection;
pub(crate) mod scan;

pub use projection::{
    Aggregate, Cell, Condition, Past, Projection, Scope, Step, CELL_BYTES, EXCERPT_CHARS, PAGE_BYTES,
};

use super::filters::Cursor;
use super::filters::{page_rows, Filter};
use super::Owner;
use super::{RecordError, Records};
use serde_json::Value;
use sqlx::Row;

/// A view's head row.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewRow {
    pub id: String,
    pub name: String,
    pub current_version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One version of a view: its definition as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewVersionRow {
    pub head: ViewRow,
    pub version_num: i64,
    pub body: Value,
}

/// Which views a list returns; every given filter holds.
#[derive(Default, Debug)]
pub struct ViewFilter {
    pub view_ids: Vec<String>,
    /// Views reading at least one of these functions.
    pub function_ids: Vec<String>,
    /// Views reading at least one of these functions too (the functions a list of names
    /// names): both lists must hold.
    pub named_function_ids: Vec<String>,
    pub name_substring: Option<String>,
}

const HEAD_COLUMNS: &str = "id, name, current_version, created_at, updated_at";

fn head(row: &sqlx::any::AnyRow) -> ViewRow {
    ViewRow {
        id: row.get("id"),
        name: row.get("name"),
        current_version: row.get("current_version"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

impl Records {
    /// Writes a new view at version 1.
    pub async fn insert_view(
        &self,
        owner: Owner<'_>,
        view: &ViewRow,
        body: &Value,
        function_ids: &[String],
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO views (id, account_id, environment, name, current_version, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&view.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&view.name)
        .bind(view.current_version)
        .bind(view.created_at)
        .bind(view.updated_at)
        .execute(&mut *tx)
        .await?;
        write_version(&mut tx, &view.id, view.current_version, body, function_ids, view.updated_at).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds version `expected + 1` if the view is still at `expected`; `false` when it is
    /// gone or someone else wrote a version first.
    pub async fn add_view_version(
        &self,
        owner: Owner<'_>,
        view: &ViewRow,
        expected: i64,
        body: &Value,
        function_ids: &[String],
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE views SET current_version = $1, name = $2, updated_at = $3 \
             WHERE id = $4 AND account_id = $5 AND environment = $6 AND current_version = $7",
        )
        .bind(expected + 1)
        .bind(&view.name)
        .bind(view.updated_at)
        .bind(&view.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(expected)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() != 1 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM view_functions WHERE view_id = $1").bind(&view.id).execute(&mut *tx).await?;
        write_version(&mut tx, &view.id, expected + 1, body, function_ids, view.updated_at).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// A view at `version` (its current one when `None`).
    pub async fn find_view(
        &self,
        owner: Owner<'_>,
        id: &str,
        version: Option<i64>,
    ) -> Result<Option<ViewVersionRow>, RecordError> {
        let version_clause =
            if version.is_some() { "v.version_num = $4" } else { "v.version_num = h.current_version" };
        let sql = format!(
            "SELECT h.id, h.name, h.current_version, h.created_at, h.updated_at, v.version_num, v.body \
             FROM views h JOIN view_versions v ON v.view_id = h.id \
             WHERE h.id = $1 AND h.account_id = $2 AND h.environment = $3 AND {version_clause}"
        );
        let mut query = sqlx::query(&sql).bind(id).bind(owner.account_id).bind(owner.environment);
        if let Some(version) = version {
            query = query.bind(version);
        }
        let row = query.fetch_optional(&self.pool).await?;
        Ok(row.map(|row| ViewVersionRow {
            head: head(&row),
            version_num: row.get("version_num"),
            body: serde_json::from_str(&row.get::<String, _>("body")).unwrap_or(Value::Null),
        }))
    }

    /// A page of views (current versions) by ID.
    pub async fn list_views(
        &self,
        owner: Owner<'_>,
        filter: &ViewFilter,
        cursor: &Cursor,
        ascending: bool,
        limit: u32,
    ) -> Result<Vec<ViewVersionRow>, RecordError> {
        let mut conditions = Filter::default();
        conditions.eq("h.account_id", owner.account_id).eq("h.environment", owner.environment);
        conditions.any_of("h.id", &filter.view_ids);
        if let Some(text) = &filter.name_substring {
            conditions.contains("h.name", text);
        }
        let reading = "SELECT view_id FROM view_functions WHERE function_id";
        conditions.any_of_through("h.id", reading, &filter.function_ids);
        conditions.any_of_through("h.id", reading, &filter.named_function_ids);
        let columns = "h.id, h.name, h.current_version, h.created_at, h.updated_at, v.version_num, v.body";
        let table = "views h JOIN view_versions v ON v.view_id = h.id AND v.version_num = h.current_version";
        let sql = conditions.page_sql(columns, table, "h.id", cursor, ascending, limit);
        let rows = conditions.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        let views = rows
            .iter()
            .map(|row| ViewVersionRow {
                head: head(row),
                version_num: row.get("version_num"),
                body: serde_json::from_str(&row.get::<String, _>("body")).unwrap_or(Value::Null),
            })
            .collect();
        Ok(page_rows(views, cursor))
    }

    /// Deletes a view and every version of it.
    pub async fn delete_view(&self, owner: Owner<'_>, id: &str) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let found = sqlx::query(&format!(
            "SELECT {HEAD_COLUMNS} FROM views WHERE id = $1 AND account_id = $2 AND environment = $3"
        ))
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&mut *tx)
        .await?;
        if found.is_none() {
            return Ok(false);
        }
        // Children first: the cascade needs SQLite's foreign keys on, this does not.
        for table in ["view_functions", "view_versions"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE view_id = $1"))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM views WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }
}

async fn write_version(
    tx: &mut super::writer::WriteTx,
    view_id: &str,
    version: i64,
    body: &Value,
    function_ids: &[String],
    now: i64,
) -> Result<(), RecordError> {
    sqlx::query("INSERT INTO view_versions (view_id, version_num, body, created_at) VALUES ($1, $2, $3, $4)")
        .bind(view_id)
        .bind(version)
        .bind(body.to_string())
        .bind(now)
        .execute(&mut **tx)
        .await?;
    let mut ids: Vec<&String> = function_ids.iter().collect();
    ids.sort();
    ids.dedup();
    for function_id in ids {
        sqlx::query("INSERT INTO view_functions (view_id, function_id) VALUES ($1, $2)")
            .bind(view_id)
            .bind(function_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
