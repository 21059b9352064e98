//! Storage of collections, their items and events. Every query filters by the owning account
//! and environment. An item row is the source of truth for its data and state; its vectors
//! live in the vector store.

use super::filters::{contains_pattern, placeholders};
use super::jobs::insert_job;
use super::{Dialect, Owner, RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;

/// A collection and how many items it holds itself (descendants not counted).
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionRow {
    pub id: String,
    pub name: String,
    pub item_count: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// An item as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRow {
    pub id: String,
    pub collection_id: String,
    pub collection_name: String,
    /// JSON text of the item's data.
    pub data: String,
    pub status: String,
    pub error: Option<String>,
    pub event_id: String,
    pub chunks: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// An item an embedding job works on, at the job's write.
#[derive(Clone, Debug)]
pub struct PendingItem {
    pub id: String,
    pub data: String,
    pub attempts: i64,
}

/// Pending items of one write that no job will embed.
#[derive(Clone, Debug, PartialEq)]
pub struct OrphanedWrite {
    pub account_id: String,
    pub environment: String,
    pub collection_id: String,
    pub collection_name: String,
    pub event_id: String,
    pub item_ids: Vec<String>,
    /// Whether the write added the items (else it updated them).
    pub added: bool,
}

/// The job a write of items enqueues with them, in the same transaction.
pub struct JobSpec<'a> {
    pub kind: &'a str,
    pub payload: &'a serde_json::Value,
    pub max_attempts: i64,
    /// The tenant that wrote the items: the embedding takes its share of the workers.
    pub account_id: &'a str,
}

/// Which collections a listing of items covers.
#[derive(Clone, Copy, Debug)]
pub enum Reach<'a> {
    /// Just this collection.
    Collection(&'a str),
    /// This collection path and every descendant.
    Subtree(&'a str),
}

fn collection_row(row: &AnyRow) -> CollectionRow {
    CollectionRow {
        id: row.get("id"),
        name: row.get("name"),
        item_count: row.get("item_count"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

fn item_row(row: &AnyRow) -> ItemRow {
    ItemRow {
        id: row.get("id"),
        collection_id: row.get("collection_id"),
        collection_name: row.get("collection_name"),
        data: row.get("data"),
        status: row.get("status"),
        error: row.get("error"),
        event_id: row.get("event_id"),
        chunks: row.get("chunks"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

/// Items one transaction of a collection delete removes.
const DELETE_BATCH: u64 = 10_000;

const ITEM_COLUMNS: &str = "i.id, i.collection_id, c.name AS collection_name, i.data, i.status, \
    i.error, i.event_id, i.chunks, i.created_at, i.updated_at";

/// The SQL condition (on `c.name`) and its one bound value for a reach, placeholder `$n`.
fn reach_condition(reach: Reach<'_>, n: usize) -> (String, String) {
    match reach {
        Reach::Collection(name) => (format!("c.name = ${n}"), name.to_string()),
        Reach::Subtree(name) => (
            // A substring comparison, not LIKE: names contain `_`.
            format!("(c.name = ${n} OR substr(c.name, 1, length(${n}) + 1) = ${n} || '.')"),
            name.to_string(),
        ),
    }
}

impl Records {
    /// Creates a collection; `None` when the name is taken.
    pub async fn create_collection(
        &self,
        owner: Owner<'_>,
        id: &str,
        name: &str,
        now: i64,
    ) -> Result<Option<CollectionRow>, RecordError> {
        let done = sqlx::query(
            "INSERT INTO collections (id, account_id, environment, name, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (account_id, environment, name) DO NOTHING",
        )
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok((done.rows_affected() == 1).then(|| CollectionRow {
            id: id.to_string(),
            name: name.to_string(),
            item_count: 0,
            created_at: now,
            updated_at: now,
        }))
    }

    pub async fn find_collection(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Option<CollectionRow>, RecordError> {
        let row = sqlx::query(
            "SELECT c.id, c.name, c.created_at, c.updated_at, \
                 (SELECT COUNT(*) FROM collection_items i WHERE i.collection_id = c.id) AS item_count \
             FROM collections c WHERE c.account_id = $1 AND c.environment = $2 AND c.name = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(collection_row))
    }

    /// A page of collections in name order, optionally under a path and/or containing a
    /// case-insensitive substring, and how many match in all.
    pub async fn list_collections(
        &self,
        owner: Owner<'_>,
        parent: Option<&str>,
        search: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<CollectionRow>, i64), RecordError> {
        let mut conditions = vec!["c.account_id = $1".to_string(), "c.environment = $2".into()];
        let mut values = vec![owner.account_id.to_string(), owner.environment.to_string()];
        if let Some(parent) = parent {
            let (condition, value) = reach_condition(Reach::Subtree(parent), values.len() + 1);
            conditions.push(condition);
            values.push(value);
        }
        if let Some(search) = search {
            conditions.push(format!("LOWER(c.name) LIKE ${} ESCAPE '\\'", values.len() + 1));
            values.push(contains_pattern(search));
        }
        let filter = conditions.join(" AND ");
        let list_sql = format!(
            "SELECT c.id, c.name, c.created_at, c.updated_at, \
                 (SELECT COUNT(*) FROM collection_items i WHERE i.collection_id = c.id) AS item_count \
             FROM collections c WHERE {filter} ORDER BY c.name LIMIT ${} OFFSET ${}",
            values.len() + 1,
            values.len() + 2
        );
        let mut list = sqlx::query(&list_sql);
        for value in &values {
            list = list.bind(value);
        }
        let rows = list.bind(limit).bind(offset).fetch_all(&self.pool).await?;
        let count_sql = format!("SELECT COUNT(*) AS total FROM collections c WHERE {filter}");
        let mut count = sqlx::query(&count_sql);
        for value in &values {
            count = count.bind(value);
        }
        let total: i64 = count.fetch_one(&self.pool).await?.get("total");
        Ok((rows.iter().map(collection_row).collect(), total))
    }

    /// Deletes the collection named `name` and every descendant, with their items; returns
    /// the names deleted.
    pub async fn delete_collection_tree(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Vec<String>, RecordError> {
        let (condition, value) = reach_condition(Reach::Subtree(name), 3);
        let of_tree = format!(
            "collection_id IN \
                 (SELECT c.id FROM collections c WHERE c.account_id = $1 AND c.environment = $2 AND {condition})"
        );
        // Items go a batch a transaction first: one transaction deleting a million items held
        // the record store's one writer (SQLite: every tenant's) for its whole length. A crash
        // between batches leaves the collections with fewer items; deleting again finishes.
        let batch = format!(
            "DELETE FROM collection_items WHERE id IN \
                 (SELECT id FROM collection_items WHERE {of_tree} LIMIT {DELETE_BATCH})"
        );
        loop {
            let mut tx = self.begin_write().await?;
            let deleted = sqlx::query(&batch)
                .bind(owner.account_id)
                .bind(owner.environment)
                .bind(&value)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            if deleted < DELETE_BATCH {
                break;
            }
        }
        // The last (items added meanwhile) and the collections together.
        let mut tx = self.begin_write().await?;
        sqlx::query(&format!("DELETE FROM collection_items WHERE {of_tree}"))
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(&value)
            .execute(&mut *tx)
            .await?;
        let collections = format!(
            "DELETE FROM collections WHERE id IN \
                 (SELECT c.id FROM collections c WHERE c.account_id = $1 AND c.environment = $2 AND {condition}) \
             RETURNING name"
        );
        let rows = sqlx::query(&collections)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(&value)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(rows.iter().map(|row| row.get("name")).collect())
    }

    /// Adds items (state `pending`, at write `event_id`) and the job that embeds them, in one
    /// transaction: a crash leaves both or neither.
    pub async fn insert_items(
        &self,
        owner: Owner<'_>,
        collection_id: &str,
        items: &[(String, String)],
        event_id: &str,
        job: JobSpec<'_>,
        now: i64,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        for (id, data) in items {
            sqlx::query(
                "INSERT INTO collection_items (id, collection_id, account_id, environment, data, status, \
                     event_id, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $7)",
            )
            .bind(id)
            .bind(collection_id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(data)
            .bind(event_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        touch_collection(&mut tx, collection_id, now).await?;
        insert_job(&mut tx, job.kind, job.payload, job.max_attempts, Some(job.account_id)).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Replaces the data of existing items (back to `pending` at write `event_id`) and
    /// enqueues their job, in one transaction. Returns the IDs not found in the collection;
    /// when any is missing nothing is written.
    pub async fn update_items(
        &self,
        collection_id: &str,
        items: &[(String, String)],
        event_id: &str,
        job: JobSpec<'_>,
        now: i64,
    ) -> Result<Vec<String>, RecordError> {
        let mut tx = self.begin_write().await?;
        let mut missing = Vec::new();
        for (id, data) in items {
            let done = sqlx::query(
                "UPDATE collection_items SET data = $1, status = 'pending', error = NULL, event_id = $2, \
                     attempts = 0, updated_at = $3 \
                 WHERE id = $4 AND collection_id = $5",
            )
            .bind(data)
            .bind(event_id)
            .bind(now)
            .bind(id)
            .bind(collection_id)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                missing.push(id.clone());
            }
        }
        if !missing.is_empty() {
            tx.rollback().await?;
            return Ok(missing);
        }
        touch_collection(&mut tx, collection_id, now).await?;
        insert_job(&mut tx, job.kind, job.payload, job.max_attempts, Some(job.account_id)).await?;
        tx.commit().await?;
        Ok(missing)
    }

    /// A page of items (in creation order) of a collection or a subtree, and the total.
    pub async fn list_items(
        &self,
        owner: Owner<'_>,
        reach: Reach<'_>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<ItemRow>, i64), RecordError> {
        let (condition, value) = reach_condition(reach, 3);
        let from = format!(
            "FROM collection_items i JOIN collections c ON c.id = i.collection_id \
             WHERE c.account_id = $1 AND c.environment = $2 AND {condition}"
        );
        let rows = sqlx::query(&format!("SELECT {ITEM_COLUMNS} {from} ORDER BY i.id LIMIT $4 OFFSET $5"))
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(&value)
            .bind(limit)
            .bind(offset)
            .fetch_all(&self.pool)
            .await?;
        let total: i64 = sqlx::query(&format!("SELECT COUNT(*) AS total {from}"))
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(&value)
            .fetch_one(&self.pool)
            .await?
            .get("total");
        Ok((rows.iter().map(item_row).collect(), total))
    }

    /// The owner's items with these IDs (any order; unknown IDs left out).
    pub async fn items_by_id(&self, owner: Owner<'_>, ids: &[String]) -> Result<Vec<ItemRow>, RecordError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM collection_items i JOIN collections c ON c.id = i.collection_id \
             WHERE i.account_id = $1 AND i.environment = $2 AND i.id IN ({})",
            placeholders(3, ids.len())
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in ids {
            query = query.bind(id);
        }
        Ok(query.fetch_all(&self.pool).await?.iter().map(item_row).collect())
    }

    /// Deletes one item of a collection; `false` when there is none.
    pub async fn delete_item(
        &self,
        collection_id: &str,
        item_id: &str,
        now: i64,
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("DELETE FROM collection_items WHERE id = $1 AND collection_id = $2")
            .bind(item_id)
            .bind(collection_id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 1 {
            touch_collection(&mut tx, collection_id, now).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The items among `ids` still at write `event_id`, each counting one more embedding
    /// attempt.
    pub async fn claim_items_for_embedding(
        &self,
        ids: &[String],
        event_id: &str,
    ) -> Result<Vec<PendingItem>, RecordError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "UPDATE collection_items SET attempts = attempts + 1 \
             WHERE event_id = $1 AND id IN ({}) \
             RETURNING id, data, attempts",
            placeholders(2, ids.len())
        );
        let mut query = sqlx::query(&sql).bind(event_id);
        for id in ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(&mut *self.write().await?).await?;
        Ok(rows
            .iter()
            .map(|row| PendingItem {
                id: row.get("id"),
                data: row.get("data"),
                attempts: row.get("attempts"),
            })
            .collect())
    }

    /// Writes whose items are still pending with no embedding job queued or running for
    /// them (their job gave up, say while a backend was down): owner, collection, event and
    /// the pending item IDs.
    ///
    /// The event IDs of the queued and running jobs are read out of their payloads once, as
    /// a set the pending items are checked against (`NOT IN` an uncorrelated subquery): a
    /// `LIKE` over every job's payload for every pending item made the start of a server
    /// with many queued writes quadratic.
    pub async fn orphaned_writes(&self, job_kind: &str) -> Result<Vec<OrphanedWrite>, RecordError> {
        let event_of_job = match self.dialect {
            Dialect::Sqlite => "j.payload ->> '$.eventID'".to_string(),
            Dialect::Postgres => format!("{} ->> 'eventID'", super::json_params::pg_json("j.payload")),
        };
        let rows = sqlx::query(&format!(
            "SELECT i.account_id, i.environment, i.collection_id, c.name AS collection_name, \
                 i.event_id, i.id, i.created_at, i.updated_at \
             FROM collection_items i JOIN collections c ON c.id = i.collection_id \
             WHERE i.status = 'pending' AND i.event_id NOT IN (SELECT {event_of_job} FROM jobs j \
                 WHERE j.kind = $1 AND j.status IN ('queued', 'running') AND {event_of_job} IS NOT NULL) \
             ORDER BY i.event_id, i.id"
        ))
        .bind(job_kind)
        .fetch_all(&self.pool)
        .await?;
        let mut writes: Vec<OrphanedWrite> = Vec::new();
        for row in rows {
            let event_id: String = row.get("event_id");
            let id: String = row.get("id");
            let created_at: i64 = row.get("created_at");
            let updated_at: i64 = row.get("updated_at");
            let added = created_at == updated_at;
            match writes.last_mut() {
                Some(write) if write.event_id == event_id => {
                    write.item_ids.push(id);
                    write.added &= added;
                }
                _ => writes.push(OrphanedWrite {
                    added,
                    account_id: row.get("account_id"),
                    environment: row.get("environment"),
                    collection_id: row.get("collection_id"),
                    collection_name: row.get("collection_name"),
                    event_id,
                    item_ids: vec![id],
                }),
            }
        }
        Ok(writes)
    }

    /// Sets the embedding attempts of items still at write `event_id` back to zero.
    pub async fn reset_attempts(&self, ids: &[String], event_id: &str) -> Result<(), RecordError> {
        if ids.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "UPDATE collection_items SET attempts = 0 WHERE event_id = $1 AND id IN ({})",
            placeholders(2, ids.len())
        );
        let mut query = sqlx::query(&sql).bind(event_id);
        for id in ids {
            query = query.bind(id);
        }
        query.execute(&mut *self.write().await?).await?;
        Ok(())
    }

    /// Marks items embedded if they are still at write `event_id`; returns those marked.
    pub async fn mark_embedded(
        &self,
        items: &[(String, i64)],
        event_id: &str,
        now: i64,
    ) -> Result<Vec<String>, RecordError> {
        let mut marked = Vec::new();
        let mut tx = self.begin_write().await?;
        for (id, chunks) in items {
            let done = sqlx::query(
                "UPDATE collection_items SET status = 'embedded', error = NULL, chunks = $1, updated_at = $2 \
                 WHERE id = $3 AND event_id = $4",
            )
            .bind(chunks)
            .bind(now)
            .bind(id)
            .bind(event_id)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 1 {
                marked.push(id.clone());
            }
        }
        tx.commit().await?;
        Ok(marked)
    }

    /// Marks items failed, with the reason, if they are still at write `event_id`.
    pub async fn mark_failed(
        &self,
        items: &[(String, String)],
        event_id: &str,
        now: i64,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        for (id, reason) in items {
            sqlx::query(
                "UPDATE collection_items SET status = 'failed', error = $1, updated_at = $2 \
                 WHERE id = $3 AND event_id = $4",
            )
            .bind(reason)
            .bind(now)
            .bind(id)
            .bind(event_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Marks the items of write `event_id` still pending failed, with `reason`; returns those
    /// it marked (an item embedded or failed already, or rewritten since, keeps its state).
    /// One statement over the write's items (at most a write's 100), as `reset_attempts`.
    pub async fn fail_pending(
        &self,
        item_ids: &[String],
        reason: &str,
        event_id: &str,
        now: i64,
    ) -> Result<Vec<String>, RecordError> {
        if item_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "UPDATE collection_items SET status = 'failed', error = $1, updated_at = $2 \
             WHERE event_id = $3 AND status = 'pending' AND id IN ({}) RETURNING id",
            placeholders(4, item_ids.len())
        );
        let mut query = sqlx::query(&sql).bind(reason).bind(now).bind(event_id);
        for id in item_ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(&mut *self.write().await?).await?;
        let marked: std::collections::HashSet<String> = rows.iter().map(|row| row.get("id")).collect();
        // In the write's order (RETURNING promises none).
        Ok(item_ids.iter().filter(|id| marked.contains(*id)).cloned().collect())
    }

    /// Records a collection's event once (recording the same ID again changes nothing), with
    /// its deliveries to the collection's subscriptions in the same transaction.
    pub async fn record_event(
        &self,
        owner: Owner<'_>,
        id: &str,
        event_type: &str,
        body: &serde_json::Value,
        now: i64,
    ) -> Result<(), RecordError> {
        let source = body
            .get("collectionID")
            .and_then(|v| v.as_str())
            .map(|collection_id| super::outbox::EventSource::Collection { collection_id });
        self.record_event_once(owner, id, event_type, body, now, source).await
    }

    /// The body of one of the owner's events.
    pub async fn event(&self, owner: Owner<'_>, id: &str) -> Result<Option<serde_json::Value>, RecordError> {
        let row =
            sqlx::query("SELECT body FROM events WHERE id = $1 AND account_id = $2 AND environment = $3")
                .bind(id)
                .bind(owner.account_id)
                .bind(owner.environment)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.and_then(|row| serde_json::from_str(&row.get::<String, _>("body")).ok()))
    }
}

async fn touch_collection(
    conn: &mut sqlx::AnyConnection,
    collection_id: &str,
    now: i64,
) -> Result<(), RecordError> {
    sqlx::query("UPDATE collections SET updated_at = $1 WHERE id = $2")
        .bind(now)
        .bind(collection_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
