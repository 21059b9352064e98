//! Storage of workflows: a head row per workflow (name, current version, display name) and
//! one immutable row per version (the graph, tags, connectors and audit as JSON), plus which
//! function versions each workflow version runs (`workflow_version_functions`, what the
//! list filters and `usedInWorkflows` read). Every query filters by account and environment.

use super::filters::placeholders;
use super::functions::{is_unique_violation, Saved};
use super::json_params::pg_json;
use super::Owner;
use super::{Dialect, RecordError, Records};
use crate::versions::{Edge, Node, WorkflowVersion};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

/// A workflow's head row.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowRow {
    pub id: String,
    pub name: String,
    pub current_version: i64,
    pub display_name: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One stored version of a workflow.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredWorkflowVersion {
    pub version_num: i64,
    /// `displayName`, `tags`, `mainNodeName`, `nodes`, `edges`, `connectors`, `audit`.
    pub body: Value,
    pub created_at: i64,
}

/// A workflow with one of its versions.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowRecord {
    pub head: WorkflowRow,
    pub version: StoredWorkflowVersion,
}

/// A node's function, pinned: `(function ID, function name, version)`.
pub type Pin = (String, String, i64);

const RECORD_COLUMNS: &str = "w.id, w.name, w.current_version, w.display_name, w.created_at, \
    w.updated_at, v.version_num, v.body, v.created_at AS version_created_at";

fn head_row(row: &AnyRow) -> WorkflowRow {
    WorkflowRow {
        id: row.get("id"),
        name: row.get("name"),
        current_version: row.get("current_version"),
        display_name: row.get("display_name"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

fn version_row(row: &AnyRow, created_at: &str) -> StoredWorkflowVersion {
    StoredWorkflowVersion {
        version_num: row.get("version_num"),
        body: serde_json::from_str(&row.get::<String, _>("body")).unwrap_or(Value::Null),
        created_at: row.get(created_at),
    }
}

fn record_row(row: &AnyRow) -> WorkflowRecord {
    WorkflowRecord { head: head_row(row), version: version_row(row, "version_created_at") }
}

async fn insert_version(
    conn: &mut sqlx::AnyConnection,
    workflow_id: &str,
    version: &StoredWorkflowVersion,
    pins: &[Pin],
) -> Result<(), RecordError> {
    sqlx::query(
        "INSERT INTO workflow_versions (workflow_id, version_num, body, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(workflow_id)
    .bind(version.version_num)
    .bind(version.body.to_string())
    .bind(version.created_at)
    .execute(&mut *conn)
    .await?;
    for (function_id, function_name, function_version) in pins {
        sqlx::query(
            "INSERT INTO workflow_version_functions \
                 (workflow_id, workflow_version_num, function_id, function_name, function_version_num) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(workflow_id)
        .bind(version.version_num)
        .bind(function_id)
        .bind(function_name)
        .bind(function_version)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The executor's view of a stored version body.
fn workflow_version(head: &WorkflowRow, version: &StoredWorkflowVersion) -> WorkflowVersion {
    let body = &version.body;
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    let nodes = body["nodes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|node| Node {
                    name: text(&node["name"]),
                    function_id: text(&node["function"]["id"]),
                    function_name: text(&node["function"]["name"]),
                    function_version_num: node["function"]["versionNum"].as_i64().unwrap_or(1),
                })
                .collect()
        })
        .unwrap_or_default();
    let edges = body["edges"]
        .as_array()
        .map(|edges| {
            edges
                .iter()
                .map(|edge| Edge {
                    source_node_name: text(&edge["sourceNodeName"]),
                    destination_node_name: text(&edge["destinationNodeName"]),
                    destination_name: edge["destinationName"].as_str().map(String::from),
                })
                .collect()
        })
        .unwrap_or_default();
    WorkflowVersion {
        workflow_id: head.id.clone(),
        workflow_name: head.name.clone(),
        version_num: version.version_num,
        main_node_name: text(&body["mainNodeName"]),
        nodes,
        edges,
    }
}

impl Records {
    /// Creates a workflow with its first version; `false` when the name is taken.
    pub async fn insert_workflow(
        &self,
        owner: Owner<'_>,
        head: &WorkflowRow,
        version: &StoredWorkflowVersion,
        pins: &[Pin],
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "INSERT INTO workflows (id, account_id, environment, name, current_version, display_name, \
                 created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (account_id, environment, name) DO NOTHING",
        )
        .bind(&head.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&head.name)
        .bind(head.current_version)
        .bind(&head.display_name)
        .bind(head.created_at)
        .bind(head.updated_at)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        insert_version(&mut tx, &head.id, version, pins).await?;
        tx.commit().await?;
        self.forget_plans();
        Ok(true)
    }

    /// A workflow by name, at its current version.
    pub async fn find_workflow(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Option<WorkflowRecord>, RecordError> {
        let row = sqlx::query(&format!(
            "SELECT {RECORD_COLUMNS} FROM workflows w \
             JOIN workflow_versions v ON v.workflow_id = w.id AND v.version_num = w.current_version \
             WHERE w.account_id = $1 AND w.environment = $2 AND w.name = $3"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(record_row))
    }

    /// What the call executor runs: the current version of a workflow, every node pinned.
    pub async fn current_workflow(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Option<WorkflowVersion>, RecordError> {
        Ok(self
            .find_workflow(owner, name)
            .await?
            .map(|record| workflow_version(&record.head, &record.version)))
    }

    /// Every workflow of the owner at its current version, in ID order, each version's body
    /// cut to what lists filter on (`tags`, `displayName`, each node's `function`): a body is
    /// up to a request's 2 MB. [`Records::current_workflows_by_ids`] reads a page whole.
    pub async fn current_workflow_summaries(
        &self,
        owner: Owner<'_>,
    ) -> Result<Vec<WorkflowRecord>, RecordError> {
        let summary = match self.dialect {
            Dialect::Sqlite => {
                "json_object('tags', v.body -> '$.tags', 'displayName', v.body -> '$.displayName', \
                 'nodes', (SELECT json_group_array(json_object('function', n.value -> '$.function')) \
                           FROM json_each(v.body, '$.nodes') n))"
                    .to_string()
            }
            // The body read as json once a row (`OFFSET 0` keeps it from being folded into
            // each use), NUL escapes and all.
            Dialect::Postgres => format!(
                "(SELECT CAST(json_build_object('tags', b -> 'tags', 'displayName', b -> 'displayName', \
                 'nodes', (SELECT COALESCE(json_agg(json_build_object('function', n -> 'function')), '[]') \
                           FROM json_array_elements(b -> 'nodes') n)) AS TEXT) \
                 FROM (SELECT {} AS b OFFSET 0) j)",
                pg_json("v.body")
            ),
        };
        let columns = RECORD_COLUMNS.replace("v.body", &format!("{summary} AS body"));
        let rows = sqlx::query(&format!(
            "SELECT {columns} FROM workflows w \
             JOIN workflow_versions v ON v.workflow_id = w.id AND v.version_num = w.current_version \
             WHERE w.account_id = $1 AND w.environment = $2 ORDER BY w.id"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(record_row).collect())
    }

    /// These workflows at their current version, whole, in the order of `ids` (those that
    /// exist), as many of the first as fit in `max_bytes` of bodies (one at least).
    pub async fn current_workflows_by_ids(
        &self,
        owner: Owner<'_>,
        ids: &[String],
        max_bytes: usize,
    ) -> Result<Vec<WorkflowRecord>, RecordError> {
        let from = |ids: &[String]| {
            format!(
                "FROM workflows w \
                 JOIN workflow_versions v ON v.workflow_id = w.id AND v.version_num = w.current_version \
                 WHERE w.account_id = $1 AND w.environment = $2 AND w.id IN ({})",
                placeholders(3, ids.len())
            )
        };
        let rows = self.rows_of_ids(owner, ids, "w.id", RECORD_COLUMNS, from, max_bytes).await?;
        Ok(rows.iter().map(record_row).collect())
    }

    /// The version numbers of one workflow, oldest first.
    pub async fn workflow_version_nums(
        &self,
        owner: Owner<'_>,
        workflow_id: &str,
    ) -> Result<Vec<i64>, RecordError> {
        let rows = sqlx::query(
            "SELECT v.version_num FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id \
             WHERE w.account_id = $1 AND w.environment = $2 AND w.id = $3 ORDER BY v.version_num",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(workflow_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(|row| row.get("version_num")).collect())
    }

    /// These versions of one workflow (those that exist), in the order of `nums`, as many of
    /// the first as fit in `max_bytes` of bodies (one at least).
    pub async fn workflow_versions_numbered(
        &self,
        owner: Owner<'_>,
        workflow_id: &str,
        nums: &[i64],
        max_bytes: usize,
    ) -> Result<Vec<StoredWorkflowVersion>, RecordError> {
        let from = |nums: &[i64]| {
            let listed = nums.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            format!(
                "FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id \
                 WHERE w.account_id = $1 AND w.environment = $2 AND w.id = $3 AND v.version_num IN ({listed})"
            )
        };
        let columns = "v.version_num, v.body, v.created_at";
        let rows = self.rows_of_versions(owner, workflow_id, nums, columns, from, max_bytes).await?;
        Ok(rows.iter().map(|row| version_row(row, "created_at")).collect())
    }

    /// Adds the next version of a workflow (with its name and display name) if its current
    /// version is still `expected`.
    pub async fn add_workflow_version(
        &self,
        owner: Owner<'_>,
        head: &WorkflowRow,
        expected: i64,
        version: &StoredWorkflowVersion,
        pins: &[Pin],
    ) -> Result<Saved, RecordError> {
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE workflows SET current_version = $1, name = $2, display_name = $3, updated_at = $4 \
             WHERE account_id = $5 AND environment = $6 AND id = $7 AND current_version = $8",
        )
        .bind(version.version_num)
        .bind(&head.name)
        .bind(&head.display_name)
        .bind(version.created_at)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&head.id)
        .bind(expected)
        .execute(&mut *tx)
        .await;
        match updated {
            Err(err) if is_unique_violation(&err) => return Ok(Saved::NameTaken),
            Err(err) => return Err(err.into()),
            Ok(done) if done.rows_affected() == 0 => return Ok(Saved::Stale),
            Ok(_) => {}
        }
        insert_version(&mut tx, &head.id, version, pins).await?;
        tx.commit().await?;
        self.forget_plans();
        Ok(Saved::Done)
    }

    /// Deletes a workflow with its versions; `false` when there is none.
    pub async fn delete_workflow(&self, owner: Owner<'_>, workflow_id: &str) -> Result<bool, RecordError> {
        let done =
            sqlx::query("DELETE FROM workflows WHERE account_id = $1 AND environment = $2 AND id = $3")
                .bind(owner.account_id)
                .bind(owner.environment)
                .bind(workflow_id)
                .execute(&mut *self.write().await?)
                .await?;
        self.forget_plans();
        Ok(done.rows_affected() == 1)
    }

    /// Names of the owner's workflows whose current version runs the function.
    pub async fn workflows_running(
        &self,
        owner: Owner<'_>,
        function_id: &str,
    ) -> Result<Vec<String>, RecordError> {
        let rows = sqlx::query(
            "SELECT DISTINCT w.name FROM workflows w JOIN workflow_version_functions u \
                 ON u.workflow_id = w.id AND u.workflow_version_num = w.current_version \
             WHERE w.account_id = $1 AND w.environment = $2 AND u.function_id = $3 ORDER BY w.name",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(|row| row.get("name")).collect())
    }
}
