//! Workflow calls and the function calls (node runs) inside them.

use super::batch::{Batch, Statement};
use super::filters::Cursor;
use super::filters::{page_rows, placeholders, value_rows, Filter};
use super::jobs::{new_job, JobClaim};
use super::Owner;
use super::{RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::HashMap;

/// A call as stored.
#[derive(Clone, Debug)]
pub struct CallRow {
    pub id: String,
    pub account_id: String,
    pub environment: String,
    pub workflow_id: String,
    pub workflow_name: String,
    pub workflow_version_num: i64,
    pub reference_id: Option<String>,
    pub status: String,
    /// JSON: the submitted files (base64 content) and their types; in a listed call
    /// ([`Records::list_calls`]) the files without their content.
    pub input: String,
    /// JSON: the workflow version and its function versions, as resolved at submission;
    /// empty in a listed call.
    pub plan: String,
    pub metadata: Option<String>,
    pub bucket: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    /// Why the call failed when no node's run could say it (its job was given up).
    pub error: Option<String>,
}

/// A function call (one node run on one item) as stored.
#[derive(Clone, Debug)]
pub struct FunctionCallRow {
    pub id: String,
    pub call_id: String,
    pub node_name: String,
    pub item_key: String,
    pub function_id: String,
    pub function_name: String,
    pub function_version_num: i64,
    pub function_type: String,
    pub status: String,
    pub input: Option<String>,
    pub output: Option<String>,
    pub error: Option<String>,
    pub source_event_id: Option<String>,
    pub source_function_call_id: Option<String>,
    pub incoming_destination: Option<String>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

/// A node run that has just ended, to checkpoint with its events.
#[derive(Clone, Copy, Debug)]
pub struct FinishedRun<'a> {
    /// The run with its final status, output and error.
    pub run: &'a FunctionCallRow,
    /// It was stored as `running` while it ran (then it is updated).
    pub shown: bool,
    /// An earlier attempt left a row for the same node and item (then it is replaced).
    pub replaces: bool,
}

/// Which calls a list returns; every given filter must hold.
#[derive(Default, Debug)]
pub struct CallFilter {
    pub call_ids: Vec<String>,
    pub workflow_ids: Vec<String>,
    pub workflow_names: Vec<String>,
    pub reference_ids: Vec<String>,
    pub reference_id_substring: Option<String>,
    pub statuses: Vec<String>,
}

const CALL_COLUMNS: &str = "id, account_id, environment, workflow_id, workflow_name, workflow_version_num, \
    reference_id, status, input, plan, metadata, bucket, created_at, finished_at, input_summary";
/// What a read of a call returns: the columns it is stored with, and what its end added.
const CALL_READ_COLUMNS: &str =
    "id, account_id, environment, workflow_id, workflow_name, workflow_version_num, \
    reference_id, status, input, plan, metadata, bucket, created_at, finished_at, error";
/// What a listed call returns: its input's summary as its `input` and no plan (a call written
/// by a canon older than the summary shows its input whole).
const CALL_LIST_COLUMNS: &str =
    "id, account_id, environment, workflow_id, workflow_name, workflow_version_num, \
    reference_id, status, COALESCE(input_summary, input) AS input, '' AS plan, metadata, bucket, \
    created_at, finished_at, error";

pub(super) const FUNCTION_CALL_COLUMNS: &str =
    "id, call_id, node_name, item_key, function_id, function_name, \
    function_version_num, function_type, status, input, output, error, source_event_id, \
    source_function_call_id, incoming_destination, started_at, finished_at";

/// Job kind of a workflow call (the calls are stored with the job that runs them).
pub const CALL_JOB: &str = "workflow_call";
/// A call's job runs again after a crash or an infrastructure failure, up to this many
/// times; node failures are events, not job failures.
pub const CALL_JOB_ATTEMPTS: i64 = 5;

impl Records {
    /// Stores a new call with the job that runs it (claimed by `claim` when given) and
    /// returns it with that job's ID, or returns the call already made with the same
    /// `callReferenceID` for the same workflow since `window_start` (then no job ID).
    pub async fn insert_call(
        &self,
        call: &CallRow,
        window_start: i64,
        claim: Option<JobClaim<'_>>,
    ) -> Result<(CallRow, Option<String>), RecordError> {
        let payload = serde_json::json!({ "callID": call.id });
        let (job, add_job) = new_job(CALL_JOB, &payload, CALL_JOB_ATTEMPTS, Some(&call.account_id), claim);
        let add_call = Statement::new(format!(
            "INSERT INTO calls ({CALL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        ))
        .arg(&call.id)
        .arg(&call.account_id)
        .arg(&call.environment)
        .arg(&call.workflow_id)
        .arg(&call.workflow_name)
        .arg(call.workflow_version_num)
        .arg(&call.reference_id)
        .arg(&call.status)
        .arg(&call.input)
        .arg(&call.plan)
        .arg(&call.metadata)
        .arg(&call.bucket)
        .arg(call.created_at)
        .arg(call.finished_at)
        .arg(input_summary(&call.input));
        let Some(reference) = &call.reference_id else {
            let mut batch = Batch::default();
            batch.add(add_call);
            batch.add(add_job);
            self.write_batch(&batch).await?;
            return Ok((call.clone(), Some(job)));
        };
        let mut tx = self.begin_write().await?;
        if let Some(id) = claim_reference(&mut tx, call, reference, window_start).await? {
            tx.commit().await?;
            if let Some(found) = self.call_by_id(&id).await? {
                return Ok((found, None));
            }
            return Err(RecordError::Unavailable(format!("call {id} named by a reference is gone")));
        }
        add_call.execute(&mut tx).await?;
        add_job.execute(&mut tx).await?;
        tx.commit().await?;
        Ok((call.clone(), Some(job)))
    }

    /// Any tenant's call by ID (the executor's view).
    pub async fn call_by_id(&self, id: &str) -> Result<Option<CallRow>, RecordError> {
        let row = sqlx::query(&format!("SELECT {CALL_READ_COLUMNS} FROM calls WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(call_row))
    }

    /// One of the owner's calls.
    pub async fn call(&self, owner: Owner<'_>, id: &str) -> Result<Option<CallRow>, RecordError> {
        Ok(self
            .call_by_id(id)
            .await?
            .filter(|call| call.account_id == owner.account_id && call.environment == owner.environment))
    }

    /// One page of the owner's calls and how many match in all.
    pub async fn list_calls(
        &self,
        owner: Owner<'_>,
        filter: &CallFilter,
        cursor: &Cursor,
        ascending: bool,
        limit: u32,
    ) -> Result<(Vec<CallRow>, i64), RecordError> {
        let mut conditions = Filter::default();
        conditions
            .eq("account_id", owner.account_id)
            .eq("environment", owner.environment)
            .any_of("id", &filter.call_ids)
            .any_of("workflow_id", &filter.workflow_ids)
            .any_of("workflow_name", &filter.workflow_names)
            .any_of("reference_id", &filter.reference_ids)
            .any_of("status", &filter.statuses);
        if let Some(text) = &filter.reference_id_substring {
            conditions.contains("reference_id", text);
        }
        let count_sql = format!("SELECT COUNT(*) AS n FROM calls {}", conditions.where_clause());
        let total: i64 = conditions.bind(sqlx::query(&count_sql)).fetch_one(&self.pool).await?.get("n");
        let sql = conditions.page_sql(CALL_LIST_COLUMNS, "calls", "id", cursor, ascending, limit);
        let rows = conditions.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok((page_rows(rows.iter().map(call_row).collect(), cursor), total))
    }

    /// Ends a call as `failed` with `error`, the reason its caller reads among its errors.
    pub async fn fail_call(&self, id: &str, error: &str, finished_at: i64) -> Result<(), RecordError> {
        sqlx::query("UPDATE calls SET status = 'failed', finished_at = $1, error = $2 WHERE id = $3")
            .bind(finished_at)
            .bind(error)
            .bind(id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    pub async fn set_call_status(
        &self,
        id: &str,
        status: &str,
        finished_at: Option<i64>,
    ) -> Result<(), RecordError> {
        sqlx::query("UPDATE calls SET status = $1, finished_at = $2 WHERE id = $3")
            .bind(status)
            .bind(finished_at)
            .bind(id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    /// Records a run as started, or restarted (`replaces`: a run left `running` by a crash
    /// starts over).
    pub async fn start_function_call(
        &self,
        run: &FunctionCallRow,
        replaces: bool,
    ) -> Result<(), RecordError> {
        let mut batch = Batch::default();
        add_function_calls(&mut batch, &[run], replaces);
        self.write_batch(&batch).await
    }

    /// Every run of a call, in the order they started.
    pub async fn function_calls(&self, call_id: &str) -> Result<Vec<FunctionCallRow>, RecordError> {
        let sql = format!(
            "SELECT {FUNCTION_CALL_COLUMNS} FROM function_calls WHERE call_id = $1 ORDER BY started_at, id"
        );
        Ok(sqlx::query(&sql)
            .bind(call_id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(function_call_row)
            .collect())
    }

    /// Each run's node by run ID, for each of many calls, in one statement: what a call's
    /// answer names its errors with, and nothing else of the runs (their inputs and outputs,
    /// up to the call's 128 MiB, are for its trace alone).
    pub async fn run_nodes_of_calls(
        &self,
        call_ids: &[String],
    ) -> Result<HashMap<String, HashMap<String, String>>, RecordError> {
        let mut by_call: HashMap<String, HashMap<String, String>> = HashMap::new();
        if call_ids.is_empty() {
            return Ok(by_call);
        }
        let sql = format!(
            "SELECT call_id, id, node_name FROM function_calls WHERE call_id IN ({})",
            placeholders(1, call_ids.len())
        );
        let mut query = sqlx::query(&sql);
        for id in call_ids {
            query = query.bind(id);
        }
        for row in query.fetch_all(&self.pool).await? {
            by_call.entry(row.get("call_id")).or_default().insert(row.get("id"), row.get("node_name"));
        }
        Ok(by_call)
    }
}

/// Adds to `batch` what stores runs: removing the row an earlier attempt left for a run's node
/// and item when `replaces`, then inserting the runs as multi-row statements.
fn add_function_calls<'a>(batch: &mut Batch<'a>, runs: &[&'a FunctionCallRow], replaces: bool) {
    if replaces {
        for run in runs {
            batch.add(
                Statement::new(
                    "DELETE FROM function_calls WHERE call_id = $1 AND node_name = $2 AND item_key = $3",
                )
                .arg(&run.call_id)
                .arg(&run.node_name)
                .arg(&run.item_key),
            );
        }
    }
    for chunk in runs.chunks(super::batch::ROWS_PER_INSERT) {
        let rows = value_rows(chunk.len(), 17);
        let mut insert =
            Statement::new(format!("INSERT INTO function_calls ({FUNCTION_CALL_COLUMNS}) VALUES {rows}"));
        for run in chunk {
            insert.push(&run.id);
            insert.push(&run.call_id);
            insert.push(&run.node_name);
            insert.push(&run.item_key);
            insert.push(&run.function_id);
            insert.push(&run.function_name);
            insert.push(run.function_version_num);
            insert.push(&run.function_type);
            insert.push(&run.status);
            insert.push(&run.input);
            insert.push(&run.output);
            insert.push(&run.error);
            insert.push(&run.source_event_id);
            insert.push(&run.source_function_call_id);
            insert.push(&run.incoming_destination);
            insert.push(run.started_at);
            insert.push(run.finished_at);
        }
        batch.add(insert);
    }
}

/// Adds to `batch` how runs ended: updates of the rows they showed while running,
/// replacements of the rows an earlier attempt left, and the rest inserted together.
pub(super) fn add_checkpoints<'a>(batch: &mut Batch<'a>, finished: &[FinishedRun<'a>]) {
    let mut fresh = Vec::new();
    for finished in finished {
        let run = finished.run;
        match (finished.shown, finished.replaces) {
            (false, false) => fresh.push(run),
            (false, true) => add_function_calls(batch, &[run], true),
            (true, _) => batch.add(
                Statement::new(
                    "UPDATE function_calls SET status = $1, output = $2, error = $3, finished_at = $4 WHERE id = $5",
                )
                .arg(&run.status)
                .arg(&run.output)
                .arg(&run.error)
                .arg(run.finished_at)
                .arg(&run.id),
            ),
        }
    }
    add_function_calls(batch, &fresh, false);
}

/// Makes `reference` name `call` unless it names a call made since `window_start`; returns
/// that call's ID then. Each step is one statement that cannot race: the insert waits for a
/// concurrent first use of the key to commit (and then does nothing), and the update takes an
/// expired window only if it is still expired once it holds the row.
async fn claim_reference(
    conn: &mut sqlx::AnyConnection,
    call: &CallRow,
    reference: &str,
    window_start: i64,
) -> Result<Option<String>, RecordError> {
    let inserted = keyed(
        "INSERT INTO call_references (account_id, environment, workflow_id, reference_id, call_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (account_id, environment, workflow_id, reference_id) DO NOTHING",
        call,
        reference,
    )
    .bind(&call.id)
    .bind(call.created_at)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(None);
    }
    let renewed = keyed(
        "UPDATE call_references SET call_id = $5, created_at = $6 \
         WHERE account_id = $1 AND environment = $2 AND workflow_id = $3 AND reference_id = $4 \
             AND created_at < $7",
        call,
        reference,
    )
    .bind(&call.id)
    .bind(call.created_at)
    .bind(window_start)
    .execute(&mut *conn)
    .await?;
    if renewed.rows_affected() == 1 {
        return Ok(None);
    }
    let row = keyed(
        "SELECT call_id FROM call_references \
         WHERE account_id = $1 AND environment = $2 AND workflow_id = $3 AND reference_id = $4",
        call,
        reference,
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(Some(row.get("call_id")))
}

/// `sql` with the reference's key bound as $1..$4: account, environment, workflow, reference.
fn keyed<'q>(
    sql: &'q str,
    call: &'q CallRow,
    reference: &'q str,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    sqlx::query(sql).bind(&call.account_id).bind(&call.environment).bind(&call.workflow_id).bind(reference)
}

/// A submitted file without its content, as a call's stored input names its fields: what a
/// call's answer shows of it. A call's `input_summary` is a list of these, and read from a
/// whole `input` the content is skipped, not copied.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSummary {
    pub input_type: Option<String>,
    pub item_reference_id: Option<String>,
}

/// The files of a call's stored `input` (or of its summary) without their content.
pub fn file_summaries(input: &str) -> Vec<FileSummary> {
    serde_json::from_str(input).unwrap_or_default()
}

/// A call's input files without their content (`input_summary`).
fn input_summary(input: &str) -> String {
    serde_json::to_string(&file_summaries(input)).unwrap_or_else(|_| "[]".into())
}

fn call_row(row: &AnyRow) -> CallRow {
    CallRow {
        id: row.get("id"),
        account_id: row.get("account_id"),
        environment: row.get("environment"),
        workflow_id: row.get("workflow_id"),
        workflow_name: row.get("workflow_name"),
        workflow_version_num: row.get("workflow_version_num"),
        reference_id: row.get("reference_id"),
        status: row.get("status"),
        input: row.get("input"),
        plan: row.get("plan"),
        metadata: row.get("metadata"),
        bucket: row.get("bucket"),
        created_at: row.get("created_at"),
        finished_at: row.get("finished_at"),
        error: row.get("error"),
    }
}

pub(super) fn function_call_row(row: &AnyRow) -> FunctionCallRow {
    FunctionCallRow {
        id: row.get("id"),
        call_id: row.get("call_id"),
        node_name: row.get("node_name"),
        item_key: row.get("item_key"),
        function_id: row.get("function_id"),
        function_name: row.get("function_name"),
        function_version_num: row.get("function_version_num"),
        function_type: row.get("function_type"),
        status: row.get("status"),
        input: row.get("input"),
        output: row.get("output"),
        error: row.get("error"),
        source_event_id: row.get("source_event_id"),
        source_function_call_id: row.get("source_function_call_id"),
        incoming_destination: row.get("incoming_destination"),
        started_at: row.get("started_at"),
        finished_at: row.get("finished_at"),
    }
}
