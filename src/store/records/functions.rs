//! Storage of functions: a head row per function (name, current version) and one immutable
//! row per version (type, body and audit as JSON). Every query filters by the owning
//! account and environment; versions are reached through their head row.

use super::filters::placeholders;
use super::json_params::pg_json;
use super::Owner;
use super::{Dialect, RecordError, Records};
use crate::versions::FunctionVersion;
use futures::TryStreamExt;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

/// A function's head row.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub id: String,
    pub name: String,
    pub current_version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One stored version of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredFunctionVersion {
    pub version_num: i64,
    /// The type as the client sent it.
    pub function_type: String,
    /// `type`, `displayName`, `tags`, `outputSchema`, … as the API returns them.
    pub body: Value,
    /// `{functionCreatedBy, functionLastUpdatedBy, versionCreatedBy}`.
    pub audit: Value,
    pub created_at: i64,
}

/// A function with one of its versions.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRecord {
    pub head: FunctionRow,
    pub version: StoredFunctionVersion,
}

/// One workflow version running one function version (what `usedInWorkflows` is made of).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionUse {
    pub function_id: String,
    pub function_version_num: i64,
    pub workflow_id: String,
    pub workflow_name: String,
    pub workflow_current_version: i64,
    pub workflow_version_num: i64,
}

/// Outcome of writing a new version (or renaming).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    Done,
    /// Another resource of the environment has the name.
    NameTaken,
    /// Someone else wrote a version first (or the resource is gone).
    Stale,
}

const RECORD_COLUMNS: &str = "f.id, f.name, f.current_version, f.created_at, f.updated_at, \
    v.version_num, v.function_type, v.body, v.audit, v.created_at AS version_created_at";

fn json_column(row: &AnyRow, column: &str) -> Value {
    serde_json::from_str(&row.get::<String, _>(column)).unwrap_or(Value::Null)
}

fn head_row(row: &AnyRow) -> FunctionRow {
    FunctionRow {
        id: row.get("id"),
        name: row.get("name"),
        current_version: row.get("current_version"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

fn version_row(row: &AnyRow, created_at: &str) -> StoredFunctionVersion {
    StoredFunctionVersion {
        version_num: row.get("version_num"),
        function_type: row.get("function_type"),
        body: json_column(row, "body"),
        audit: json_column(row, "audit"),
        created_at: row.get(created_at),
    }
}

/// What the executor runs of a stored version.
fn executable(record: FunctionRecord) -> FunctionVersion {
    FunctionVersion {
        function_id: record.head.id,
        function_name: record.head.name,
        version_num: record.version.version_num,
        function_type: record.version.function_type,
        body: record.version.body,
    }
}

fn record_row(row: &AnyRow) -> FunctionRecord {
    FunctionRecord { head: head_row(row), version: version_row(row, "version_created_at") }
}

/// Whether a failed statement broke a unique constraint (a name taken meanwhile).
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// `$from, $from+1, …` for `count` values.
async fn insert_version(
    conn: &mut sqlx::AnyConnection,
    function_id: &str,
    version: &StoredFunctionVersion,
) -> Result<(), RecordError> {
    sqlx::query(
        "INSERT INTO function_versions (function_id, version_num, function_type, body, audit, created_at, \
             output_schema) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(function_id)
    .bind(version.version_num)
    .bind(&version.function_type)
    .bind(version.body.to_string())
    .bind(version.audit.to_string())
    .bind(version.created_at)
    .bind(version.body.get("outputSchema").filter(|s| !s.is_null()).map(Value::to_string))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl Records {
    /// Creates a function with its first version; `false` when the name is taken.
    pub async fn insert_function(
        &self,
        owner: Owner<'_>,
        head: &FunctionRow,
        version: &StoredFunctionVersion,
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "INSERT INTO functions \
                 (id, account_id, environment, name, current_version, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, environment, name) DO NOTHING",
        )
        .bind(&head.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&head.name)
        .bind(head.current_version)
        .bind(head.created_at)
        .bind(head.updated_at)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        insert_version(&mut tx, &head.id, version).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// A function by name, at its current version.
    pub async fn find_function(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Option<FunctionRecord>, RecordError> {
        let row = sqlx::query(&format!(
            "SELECT {RECORD_COLUMNS} FROM functions f \
             JOIN function_versions v ON v.function_id = f.id AND v.version_num = f.current_version \
             WHERE f.account_id = $1 AND f.environment = $2 AND f.name = $3"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(record_row))
    }

    /// A function's head row by ID.
    pub async fn find_function_by_id(
        &self,
        owner: Owner<'_>,
        id: &str,
    ) -> Result<Option<FunctionRow>, RecordError> {
        let row = sqlx::query(
            "SELECT id, name, current_version, created_at, updated_at FROM functions \
             WHERE account_id = $1 AND environment = $2 AND id = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(head_row))
    }

    /// One version of a function, by the function's ID.
    pub async fn function_version_by_id(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version_num: i64,
    ) -> Result<Option<FunctionRecord>, RecordError> {
        let row = sqlx::query(&format!(
            "SELECT {RECORD_COLUMNS} FROM functions f \
             JOIN function_versions v ON v.function_id = f.id \
             WHERE f.account_id = $1 AND f.environment = $2 AND f.id = $3 AND v.version_num = $4"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(version_num)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(record_row))
    }

    /// What the call executor runs: one immutable version of a function. Versions stay
    /// readable after later updates; after the function is deleted this is `None` (its
    /// versions are deleted with it).
    pub async fn function_version(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version_num: i64,
    ) -> Result<Option<FunctionVersion>, RecordError> {
        Ok(self.function_version_by_id(owner, function_id, version_num).await?.map(executable))
    }

    /// [`Records::function_version`] of several `(function ID, version)` pins in one
    /// statement (a call resolves every node of its workflow at once); a pin whose function
    /// is gone is missing from the answer.
    pub async fn pinned_function_versions(
        &self,
        owner: Owner<'_>,
        pins: &[(&str, i64)],
    ) -> Result<Vec<FunctionVersion>, RecordError> {
        if pins.is_empty() {
            return Ok(Vec::new());
        }
        let matches: Vec<String> = (0..pins.len())
            .map(|i| format!("(f.id = ${} AND v.version_num = ${})", 3 + 2 * i, 4 + 2 * i))
            .collect();
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM functions f \
             JOIN function_versions v ON v.function_id = f.id \
             WHERE f.account_id = $1 AND f.environment = $2 AND ({})",
            matches.join(" OR ")
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for (id, version) in pins {
            query = query.bind(*id).bind(*version);
        }
        let rows = query.fetch_all(&self.pool).await?;
        Ok(rows.iter().map(|row| executable(record_row(row))).collect())
    }

    /// Every function of the owner at its current version, in ID order, each version's body
    /// cut to what lists filter on (`tags`, `displayName`): a body is up to a request's 2 MB,
    /// and a tenant's functions are many. [`Records::current_functions_by_ids`] reads a
    /// page of them whole.
    pub async fn current_function_summaries(
        &self,
        owner: Owner<'_>,
    ) -> Result<Vec<FunctionRecord>, RecordError> {
        let summary = match self.dialect {
            Dialect::Sqlite => {
                "json_object('tags', v.body -> '$.tags', 'displayName', v.body -> '$.displayName')".to_string()
            }
            // The body read as json once a row (`OFFSET 0` keeps it from being folded into
            // each use), NUL escapes and all.
            Dialect::Postgres => format!(
                "(SELECT CAST(json_build_object('tags', b -> 'tags', 'displayName', b -> 'displayName') AS TEXT) \
                 FROM (SELECT {} AS b OFFSET 0) j)",
                pg_json("v.body")
            ),
        };
        let columns = RECORD_COLUMNS.replace("v.body", &format!("{summary} AS body"));
        let rows = sqlx::query(&format!(
            "SELECT {columns} FROM functions f \
             JOIN function_versions v ON v.function_id = f.id AND v.version_num = f.current_version \
             WHERE f.account_id = $1 AND f.environment = $2 ORDER BY f.id"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(record_row).collect())
    }

    /// These functions at their current version, whole, in the order of `ids` (those that
    /// exist), as many of the first as fit in `max_bytes` of bodies (one at least).
    pub async fn current_functions_by_ids(
        &self,
        owner: Owner<'_>,
        ids: &[String],
        max_bytes: usize,
    ) -> Result<Vec<FunctionRecord>, RecordError> {
        let from = |ids: &[String]| {
            format!(
                "FROM functions f \
                 JOIN function_versions v ON v.function_id = f.id AND v.version_num = f.current_version \
                 WHERE f.account_id = $1 AND f.environment = $2 AND f.id IN ({})",
                placeholders(3, ids.len())
            )
        };
        let rows = self.rows_of_ids(owner, ids, "f.id", RECORD_COLUMNS, from, max_bytes).await?;
        Ok(rows.iter().map(record_row).collect())
    }

    /// The version numbers of one function, oldest first.
    pub async fn function_version_nums(
        &self,
        owner: Owner<'_>,
        function_id: &str,
    ) -> Result<Vec<i64>, RecordError> {
        let rows = sqlx::query(
            "SELECT v.version_num FROM function_versions v JOIN functions f ON f.id = v.function_id \
             WHERE f.account_id = $1 AND f.environment = $2 AND f.id = $3 ORDER BY v.version_num",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(|row| row.get("version_num")).collect())
    }

    /// These versions of one function (those that exist), in the order of `nums`, as many of
    /// the first as fit in `max_bytes` of bodies (one at least).
    pub async fn function_versions_numbered(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        nums: &[i64],
        max_bytes: usize,
    ) -> Result<Vec<StoredFunctionVersion>, RecordError> {
        let from = |nums: &[i64]| {
            let listed = nums.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            format!(
                "FROM function_versions v JOIN functions f ON f.id = v.function_id \
                 WHERE f.account_id = $1 AND f.environment = $2 AND f.id = $3 AND v.version_num IN ({listed})"
            )
        };
        let columns = "v.version_num, v.function_type, v.body, v.audit, v.created_at";
        let rows = self.rows_of_versions(owner, function_id, nums, columns, from, max_bytes).await?;
        Ok(rows.iter().map(|row| version_row(row, "created_at")).collect())
    }

    /// The output schema of each of `versions` of one function (a version without one, or
    /// not found, is absent), read from the column written beside each body.
    pub async fn output_schemas_of_versions(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        versions: &[i64],
    ) -> Result<std::collections::HashMap<i64, Value>, RecordError> {
        if versions.is_empty() {
            return Ok(Default::default());
        }
        let sql = format!(
            "SELECT v.version_num AS num, v.output_schema AS schema FROM function_versions v \
             JOIN functions f ON f.id = v.function_id \
             WHERE f.account_id = $1 AND f.environment = $2 AND f.id = $3 AND v.output_schema IS NOT NULL \
               AND v.version_num IN ({})",
            placeholders(4, versions.len())
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment).bind(function_id);
        for version in versions {
            query = query.bind(*version);
        }
        Ok(query
            .fetch_all(&self.pool)
            .await?
            .iter()
            .filter_map(|row| {
                let schema = serde_json::from_str(&row.get::<String, _>("schema")).ok()?;
                Some((row.get::<i64, _>("num"), schema))
            })
            .collect())
    }

    /// The distinct output schemas of one function's versions (what a view's columns are
    /// checked against), newest first, as many as fit in `max_bytes` (the newest always):
    /// read from the column written beside each body, never from the bodies themselves.
    pub async fn function_output_schemas(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        max_bytes: usize,
    ) -> Result<Vec<Value>, RecordError> {
        let mut rows = sqlx::query(
            "SELECT v.output_schema AS schema FROM function_versions v JOIN functions f ON f.id = v.function_id \
             WHERE f.account_id = $1 AND f.environment = $2 AND f.id = $3 AND v.output_schema IS NOT NULL \
             GROUP BY v.output_schema ORDER BY MAX(v.version_num) DESC",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch(&self.pool);
        let (mut schemas, mut bytes) = (Vec::new(), 0usize);
        while let Some(row) = rows.try_next().await? {
            let text: String = row.get("schema");
            bytes += text.len();
            if bytes > max_bytes && !schemas.is_empty() {
                break;
            }
            schemas.extend(serde_json::from_str::<Value>(&text).ok());
        }
        Ok(schemas)
    }

    /// Adds the next version of a function (renaming it to `name`) if its current version
    /// is still `expected`.
    pub async fn add_function_version(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        expected: i64,
        name: &str,
        version: &StoredFunctionVersion,
    ) -> Result<Saved, RecordError> {
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE functions SET current_version = $1, name = $2, updated_at = $3 \
             WHERE account_id = $4 AND environment = $5 AND id = $6 AND current_version = $7",
        )
        .bind(version.version_num)
        .bind(name)
        .bind(version.created_at)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(expected)
        .execute(&mut *tx)
        .await;
        match updated {
            Err(err) if is_unique_violation(&err) => return Ok(Saved::NameTaken),
            Err(err) => return Err(err.into()),
            Ok(done) if done.rows_affected() == 0 => return Ok(Saved::Stale),
            Ok(_) => {}
        }
        insert_version(&mut tx, function_id, version).await?;
        tx.commit().await?;
        // A plan names its functions as they were called when it was read.
        self.forget_plans();
        Ok(Saved::Done)
    }

    /// Deletes a function and its versions unless the current version of a workflow uses
    /// it. `Ok(true)` when deleted; `Ok(false)` when a workflow holds it (or it is gone).
    pub async fn delete_function(&self, owner: Owner<'_>, function_id: &str) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "DELETE FROM functions WHERE account_id = $1 AND environment = $2 AND id = $3 \
             AND NOT EXISTS (SELECT 1 FROM workflow_version_functions u \
                 JOIN workflows w ON w.id = u.workflow_id AND u.workflow_version_num = w.current_version \
                 WHERE u.function_id = $3)",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .execute(&mut *self.write().await?)
        .await?;
        self.forget_plans();
        Ok(done.rows_affected() == 1)
    }

    /// Every workflow version (of the owner's live workflows) that runs one of these
    /// functions (`None`: any function), whatever the version.
    pub async fn function_uses(
        &self,
        owner: Owner<'_>,
        function_ids: Option<&[String]>,
    ) -> Result<Vec<FunctionUse>, RecordError> {
        let ids = function_ids.unwrap_or_default();
        if function_ids.is_some() && ids.is_empty() {
            return Ok(Vec::new());
        }
        let among = match function_ids {
            Some(ids) => format!("AND u.function_id IN ({})", placeholders(3, ids.len())),
            None => String::new(),
        };
        let sql = format!(
            "SELECT DISTINCT u.function_id, u.function_version_num, u.workflow_version_num, \
                 w.id AS workflow_id, w.name AS workflow_name, w.current_version \
             FROM workflow_version_functions u JOIN workflows w ON w.id = u.workflow_id \
             WHERE w.account_id = $1 AND w.environment = $2 {among} \
             ORDER BY w.id, u.workflow_version_num"
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(&self.pool).await?;
        Ok(rows
            .iter()
            .map(|row| FunctionUse {
                function_id: row.get("function_id"),
                function_version_num: row.get("function_version_num"),
                workflow_id: row.get("workflow_id"),
                workflow_name: row.get("workflow_name"),
                workflow_current_version: row.get("current_version"),
                workflow_version_num: row.get("workflow_version_num"),
            })
            .collect())
    }
}
