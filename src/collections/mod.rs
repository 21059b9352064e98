//! Collections: named, hierarchical groups of embedded items, and the search enrich functions
//! call. The behaviour REST (and later GraphQL) share.
//!
//! - A collection's name is its path; dots form the hierarchy (`customers.premium`). A parent
//!   need not exist for a child to be created.
//! - Items are written to the record store as `pending` together with an embedding job, in
//!   one transaction, and acknowledged at once with an `eventID`. The job embeds them (chunks
//!   of the model's window; texts over 8,192 tokens fail with the reason, never truncated),
//!   stores their points, marks them `embedded` or `failed`, and records the
//!   `collection_processing` event with that ID. At start, pending items whose job gave up
//!   (its retries ran out while a backend was down) are queued again, so no item stays
//!   pending across a restart.
//! - Decision: deleting a collection deletes its whole subtree (every descendant path) with
//!   all their items and vectors, so nothing is orphaned.

pub mod embed_job;
mod model;
pub mod names;

pub use model::{
    Acknowledgement, Collection, CollectionItems, CollectionPage, Item, SearchHit, SearchMode, SearchRequest,
    SearchResults, TokenCount, TokenCounts,
};

use crate::embeddings::{text_of, Embedder};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::collections::{CollectionRow, ItemRow, JobSpec, Reach};
use crate::store::records::Records;
use crate::store::vectors::{
    fields, Condition, Filter, Query, Ranking, Space, Sparse, VectorError, VectorStore,
};
use crate::wire::whole_of;
use model::{collection, item};
use qdrant_edge::bm25_embed::{EdgeBm25, EdgeBm25Config};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Items per add or update request.
pub const MAX_ITEMS_PER_REQUEST: usize = 100;
/// Tokens per text the API accepts for embedding (a longer item fails, saying so).
pub const MAX_TOKENS_PER_TEXT: usize = 8_192;
/// Texts per token-count request.
pub const MAX_TEXTS_PER_COUNT: usize = 100;
/// Results per search.
pub const MAX_SEARCH_LIMIT: usize = 100;
/// An item's `data`, serialized: each search result carries it, and so does each of the item's
/// chunks in the vector store, so 2 MB items made a 200 MB search answer.
pub const MAX_ITEM_DATA_BYTES: usize = 256 * 1024;
/// Characters of a search query: a paragraph, at most a few of MiniLM's 256-token windows
/// (one for English), so one search costs little time and bounded memory.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Job kind of the embedding of one write of items.
pub const EMBED_JOB: &str = "collections.embed";
/// Attempts of an embedding job before its items are marked failed.
pub const EMBED_ATTEMPTS: i64 = 5;
/// Event type recorded when a write of items has been processed.
pub const PROCESSING_EVENT: &str = "collection_processing";

/// Entry point of the collections service.
pub struct CollectionsService {
    records: Records,
    vectors: Arc<dyn VectorStore>,
    embedder: Arc<dyn Embedder>,
    bm25: Arc<EdgeBm25>,
    space: Space,
    /// Writes one account may have waiting for their embeddings ([`crate::jobs::QUEUE_BOUNDS`]).
    queued_most: usize,
}

fn vector_error(err: VectorError) -> ServiceError {
    ServiceError::Internal(err.into())
}

/// Checks a collection name, naming the field in the 400.
pub fn check_name(field: &str, name: &str) -> ServiceResult<()> {
    match names::problem(name) {
        None => Ok(()),
        Some(problem) => Err(ServiceError::invalid_field(field, problem)),
    }
}

/// Checks the name of a collection created or written to: [`check_name`] and
/// [`names::too_long`] (every item's points carry each prefix of the name).
fn check_written_name(field: &str, name: &str) -> ServiceResult<()> {
    check_name(field, name)?;
    match names::too_long(name) {
        None => Ok(()),
        Some(problem) => Err(ServiceError::invalid_field(field, problem)),
    }
}

/// Highest page number: the document's int32, and small enough that `(page - 1) * limit`
/// (the rows skipped) cannot overflow.
pub const MAX_PAGE_NUMBER: i64 = i32::MAX as i64;

/// Page number and size, validated: page 1..=[`MAX_PAGE_NUMBER`], limit 1..=`max` (default 50).
pub fn page_bounds(page: Option<i64>, limit: Option<i64>, max: i64) -> ServiceResult<(i64, i64)> {
    let page = page.unwrap_or(1);
    if !(1..=MAX_PAGE_NUMBER).contains(&page) {
        return Err(ServiceError::invalid_field(
            "page",
            format!("must be between 1 and {MAX_PAGE_NUMBER} (got {page})"),
        ));
    }
    let limit = limit.unwrap_or(50);
    if !(1..=max).contains(&limit) {
        return Err(ServiceError::invalid_field(
            "limit",
            format!("must be between 1 and {max} (got {limit})"),
        ));
    }
    Ok((page, limit))
}

fn total_pages(total: i64, limit: i64) -> i64 {
    (total.max(1) + limit - 1) / limit
}

/// Checks an item's data: a non-empty string or a JSON object, at most
/// [`MAX_ITEM_DATA_BYTES`] serialized.
fn check_data(field: &str, data: &Value) -> ServiceResult<String> {
    let text = match data {
        Value::String(s) if s.trim().is_empty() => {
            return Err(ServiceError::invalid_field(field, "must not be empty"))
        }
        Value::String(_) | Value::Object(_) => data.to_string(),
        _ => return Err(ServiceError::invalid_field(field, "must be a string or a JSON object")),
    };
    if text.len() > MAX_ITEM_DATA_BYTES {
        return Err(ServiceError::invalid_field(
            field,
            format!(
                "{} bytes serialized; at most {MAX_ITEM_DATA_BYTES} (split the item into several, or keep \
                 large content elsewhere and its reference here)",
                text.len()
            ),
        ));
    }
    if text_of(data).is_none() {
        return Err(ServiceError::invalid_field(field, crate::embeddings::item_text_too_long()));
    }
    Ok(text)
}

fn check_item_count(count: usize) -> ServiceResult<()> {
    if count == 0 {
        return Err(ServiceError::invalid_field("items", "must not be empty"));
    }
    if count > MAX_ITEMS_PER_REQUEST {
        return Err(ServiceError::invalid_field(
            "items",
            format!("at most {MAX_ITEMS_PER_REQUEST} items per request (got {count}); split the request"),
        ));
    }
    Ok(())
}

/// Fields one search's `filter` names at most, and values one field's list holds: the vector
/// store checks each condition on each candidate point, and a 2 MB body holds 100,000 of them.
pub const MAX_FILTER_FIELDS: usize = 32;
pub const MAX_FILTER_LIST: usize = 1_000;

/// A payload filter on the item's data, as store conditions.
fn data_conditions(filter: &Map<String, Value>) -> ServiceResult<Vec<Condition>> {
    if filter.len() > MAX_FILTER_FIELDS {
        let message = format!("names at most {MAX_FILTER_FIELDS} fields (got {})", filter.len());
        return Err(ServiceError::invalid_field("filter", message));
    }
    let mut conditions = Vec::new();
    for (path, value) in filter {
        let field = format!("filter.{path}");
        if value.as_array().is_some_and(|list| list.len() > MAX_FILTER_LIST) {
            return Err(ServiceError::invalid_field(
                &field,
                format!("lists at most {MAX_FILTER_LIST} values"),
            ));
        }
        let valid_path = !path.is_empty()
            && path.split('.').all(|segment| {
                !segment.is_empty() && segment.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !valid_path {
            return Err(ServiceError::invalid_field(
                &field,
                "field paths are letters, digits and underscores, with dots for nesting",
            ));
        }
        let key = format!("{}.{path}", fields::DATA);
        let condition = match value {
            Value::String(s) => Condition::Keyword { key, value: s.clone() },
            Value::Bool(b) => Condition::Bool { key, value: *b },
            Value::Number(_) if whole_of(value).is_some() => {
                Condition::Integer { key, value: whole_of(value).unwrap_or_default() }
            }
            Value::Array(values) if !values.is_empty() && values.iter().all(Value::is_string) => {
                Condition::AnyKeyword {
                    key,
                    values: values.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
                }
            }
            Value::Array(values) if !values.is_empty() && values.iter().all(|v| whole_of(v).is_some()) => {
                Condition::AnyInteger { key, values: values.iter().filter_map(whole_of).collect() }
            }
            _ => {
                return Err(ServiceError::invalid_field(
                    &field,
                    "must be a string, an integer, a boolean, or a non-empty list of strings or of integers",
                ))
            }
        };
        conditions.push(condition);
    }
    Ok(conditions)
}

impl CollectionsService {
    /// The service over these backends; the embedder decides the vector space.
    pub fn new(
        records: Records,
        vectors: Arc<dyn VectorStore>,
        embedder: Arc<dyn Embedder>,
    ) -> anyhow::Result<Self> {
        let bm25 = EdgeBm25::new(EdgeBm25Config::default()).map_err(|err| anyhow::anyhow!("BM25: {err}"))?;
        let space = embedder.space();
        let queued_most = crate::jobs::QUEUE_BOUNDS.embeddings;
        Ok(Self { records, vectors, embedder, bm25: Arc::new(bm25), space, queued_most })
    }

    /// This service with another bound on writes waiting for their embeddings (tests reach it
    /// with a small one).
    pub fn with_queued_most(mut self, most: usize) -> Self {
        self.queued_most = most;
        self
    }

    /// Refuses a write when the account has its most writes waiting for their embeddings.
    async fn check_queue_room(&self, tenant: &Tenant) -> ServiceResult<()> {
        let room = crate::jobs::QueueRoom {
            kind: EMBED_JOB,
            what: "collection writes",
            limit: "queuedEmbeddingWritesPerAccount",
            most: self.queued_most,
        };
        room.check(&self.records, &tenant.account_id, 1).await
    }

    pub fn vectors(&self) -> &Arc<dyn VectorStore> {
        &self.vectors
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    pub fn space(&self) -> &Space {
        &self.space
    }

    /// BM25 term weights of a document.
    pub fn sparse_document(&self, text: &str) -> Sparse {
        let v = self.bm25.embed_document(text);
        Sparse { indices: v.indices, values: v.values }
    }

    fn sparse_query(&self, text: &str) -> Sparse {
        let v = self.bm25.embed_query(text);
        Sparse { indices: v.indices, values: v.values }
    }

    /// The store filter selecting a tenant's points.
    fn tenant_filter(tenant: &Tenant) -> Filter {
        Filter::default()
            .must(Condition::keyword(fields::ACCOUNT, &tenant.account_id))
            .must(Condition::keyword(fields::ENVIRONMENT, tenant.environment.as_str()))
    }

    async fn require(&self, tenant: &Tenant, name: &str) -> ServiceResult<CollectionRow> {
        self.records
            .find_collection(tenant.owner(), name)
            .await?
            .ok_or_else(|| ServiceError::not_found("collection", name))
    }

    pub async fn create(&self, tenant: &Tenant, name: &str) -> ServiceResult<Collection> {
        check_written_name("collectionName", name)?;
        let created = self
            .records
            .create_collection(tenant.owner(), &ids::new_id("col"), name, ids::now_millis())
            .await?;
        match created {
            Some(row) => Ok(collection(row)),
            None => Err(ServiceError::Conflict(format!(
                "a collection named {name:?} already exists; add items to it or choose another name"
            ))),
        }
    }

    pub async fn list(
        &self,
        tenant: &Tenant,
        parent: Option<&str>,
        search: Option<&str>,
        page: i64,
        limit: i64,
    ) -> ServiceResult<CollectionPage> {
        if let Some(parent) = parent {
            check_name("parentCollectionName", parent)?;
        }
        let (rows, total) =
            self.records.list_collections(tenant.owner(), parent, search, limit, (page - 1) * limit).await?;
        Ok(CollectionPage {
            collections: rows.into_iter().map(collection).collect(),
            page,
            limit,
            total_pages: total_pages(total, limit),
            total_count: total,
        })
    }

    /// Deletes the collection, every descendant and all their items and vectors.
    pub async fn delete(&self, tenant: &Tenant, name: &str) -> ServiceResult<()> {
        check_name("collectionName", name)?;
        self.require(tenant, name).await?;
        // Vectors first: if the records delete then fails, a retry finds the collection and
        // finishes; the other way round could leave vectors nothing points at.
        let filter = Self::tenant_filter(tenant).must(Condition::keyword(fields::SCOPE, name));
        self.vectors.delete(&self.space, &filter).await.map_err(vector_error)?;
        self.records.delete_collection_tree(tenant.owner(), name).await?;
        Ok(())
    }

    fn job_payload(
        tenant: &Tenant,
        row: &CollectionRow,
        event_id: &str,
        operation: &str,
        item_ids: &[String],
    ) -> Value {
        json!({
            "eventID": event_id,
            "accountID": tenant.account_id,
            "environment": tenant.environment.as_str(),
            "collectionID": row.id,
            "collectionName": row.name,
            "operation": operation,
            "itemIDs": item_ids,
        })
    }

    /// Adds items; they are embedded by a job. Returns at once.
    pub async fn add_items(
        &self,
        tenant: &Tenant,
        name: &str,
        data: Vec<Value>,
    ) -> ServiceResult<Acknowledgement> {
        check_written_name("collectionName", name)?;
        check_item_count(data.len())?;
        let items = ids::new_ids("itm", data.len())
            .into_iter()
            .zip(&data)
            .enumerate()
            .map(|(i, (id, d))| Ok((id, check_data(&format!("items[{i}].data"), d)?)))
            .collect::<ServiceResult<Vec<_>>>()?;
        let row = self.require(tenant, name).await?;
        self.check_queue_room(tenant).await?;
        let event_id = ids::new_ksuid();
        let item_ids: Vec<String> = items.iter().map(|(id, _)| id.clone()).collect();
        let payload = Self::job_payload(tenant, &row, &event_id, "add", &item_ids);
        self.records
            .insert_items(
                tenant.owner(),
                &row.id,
                &items,
                &event_id,
                JobSpec {
                    kind: EMBED_JOB,
                    payload: &payload,
                    max_attempts: EMBED_ATTEMPTS,
                    account_id: &tenant.account_id,
                },
                ids::now_millis(),
            )
            .await?;
        // Idle workers take the embedding job now, not at their next look.
        crate::jobs::wake();
        Ok(Acknowledgement {
            status: "pending".into(),
            message: format!(
                "{} item(s) queued for embedding; event {event_id} is recorded when they are done",
                items.len()
            ),
            event_id,
        })
    }

    /// Replaces the data of existing items; they are embedded again by a job.
    pub async fn update_items(
        &self,
        tenant: &Tenant,
        name: &str,
        updates: Vec<(String, Value)>,
    ) -> ServiceResult<Acknowledgement> {
        check_written_name("collectionName", name)?;
        check_item_count(updates.len())?;
        let mut seen = std::collections::HashSet::new();
        let mut items = Vec::with_capacity(updates.len());
        for (i, (id, data)) in updates.iter().enumerate() {
            if !seen.insert(id.as_str()) {
                return Err(ServiceError::invalid_field(
                    &format!("items[{i}].collectionItemID"),
                    format!("{id} appears more than once in this request"),
                ));
            }
            items.push((id.clone(), check_data(&format!("items[{i}].data"), data)?));
        }
        let row = self.require(tenant, name).await?;
        self.check_queue_room(tenant).await?;
        let event_id = ids::new_ksuid();
        let item_ids: Vec<String> = items.iter().map(|(id, _)| id.clone()).collect();
        let payload = Self::job_payload(tenant, &row, &event_id, "update", &item_ids);
        let missing = self
            .records
            .update_items(
                &row.id,
                &items,
                &event_id,
                JobSpec {
                    kind: EMBED_JOB,
                    payload: &payload,
                    max_attempts: EMBED_ATTEMPTS,
                    account_id: &tenant.account_id,
                },
                ids::now_millis(),
            )
            .await?;
        crate::jobs::wake();
        if !missing.is_empty() {
            return Err(ServiceError::NotFound {
                resource: "collection item",
                id: format!("{} in collection {name}", missing.join(", ")),
            });
        }
        Ok(Acknowledgement {
            status: "pending".into(),
            message: format!(
                "{} item(s) queued for embedding again; event {event_id} is recorded when they are done",
                items.len()
            ),
            event_id,
        })
    }

    /// A collection and a page of its items (with every descendant's when asked).
    pub async fn items(
        &self,
        tenant: &Tenant,
        name: &str,
        include_subcollections: bool,
        page: i64,
        limit: i64,
    ) -> ServiceResult<CollectionItems> {
        check_name("collectionName", name)?;
        let row = self.require(tenant, name).await?;
        let reach = if include_subcollections { Reach::Subtree(name) } else { Reach::Collection(name) };
        let (rows, total) = self.records.list_items(tenant.owner(), reach, limit, (page - 1) * limit).await?;
        Ok(CollectionItems {
            collection_id: row.id,
            collection_name: row.name,
            item_count: total,
            created_at: ids::millis_rfc3339(row.created_at),
            updated_at: ids::millis_rfc3339(row.updated_at),
            items: rows.into_iter().map(item).collect(),
            page,
            limit,
            total_pages: total_pages(total, limit),
        })
    }

    /// Deletes one item and its vectors.
    pub async fn delete_item(&self, tenant: &Tenant, name: &str, item_id: &str) -> ServiceResult<()> {
        check_name("collectionName", name)?;
        let row = self.require(tenant, name).await?;
        if !self.records.delete_item(&row.id, item_id, ids::now_millis()).await? {
            return Err(ServiceError::NotFound {
                resource: "collection item",
                id: format!("{item_id} in collection {name}"),
            });
        }
        let filter = Self::tenant_filter(tenant).must(Condition::keyword(fields::ITEM, item_id));
        self.vectors.delete(&self.space, &filter).await.map_err(vector_error)?;
        Ok(())
    }

    /// Token counts under the embedder's tokenizer, against the per-text limit.
    pub async fn count_tokens(&self, texts: &[String]) -> ServiceResult<TokenCounts> {
        if texts.is_empty() {
            return Err(ServiceError::invalid_field("texts", "must not be empty"));
        }
        if texts.len() > MAX_TEXTS_PER_COUNT {
            return Err(ServiceError::invalid_field(
                "texts",
                format!("at most {MAX_TEXTS_PER_COUNT} texts per request (got {})", texts.len()),
            ));
        }
        let counts =
            self.embedder.count_tokens(texts).await.map_err(|err| ServiceError::Internal(err.into()))?;
        let token_counts: Vec<TokenCount> = counts
            .iter()
            .zip(texts)
            .enumerate()
            .map(|(index, (&token_count, text))| TokenCount {
                index,
                token_count,
                char_count: text.chars().count(),
                exceeds_limit: token_count > MAX_TOKENS_PER_TEXT,
            })
            .collect();
        Ok(TokenCounts {
            total_tokens: counts.iter().sum(),
            max_token_limit: MAX_TOKENS_PER_TEXT,
            texts_exceeding_limit: token_counts.iter().filter(|c| c.exceeds_limit).count(),
            token_counts,
        })
    }

    /// Searches a collection (and optionally its subtree) for the items best matching a text.
    pub async fn search(&self, tenant: &Tenant, request: SearchRequest) -> ServiceResult<SearchResults> {
        check_name("collectionName", &request.collection_name)?;
        if request.query.trim().is_empty() {
            return Err(ServiceError::invalid_field("query", "must not be empty"));
        }
        // Bytes first: a megabyte query is refused without counting its characters.
        if request.query.len() > 4 * MAX_QUERY_CHARS || request.query.chars().count() > MAX_QUERY_CHARS {
            return Err(ServiceError::invalid_field(
                "query",
                format!(
                    "must be at most {MAX_QUERY_CHARS} characters (got {}); search with the passage that matters",
                    request.query.chars().count()
                ),
            ));
        }
        if !(1..=MAX_SEARCH_LIMIT).contains(&request.limit) {
            return Err(ServiceError::invalid_field(
                "limit",
                format!("must be between 1 and {MAX_SEARCH_LIMIT} (got {})", request.limit),
            ));
        }
        let mut filter = Self::tenant_filter(tenant);
        filter.must.push(if request.include_subcollections {
            Condition::keyword(fields::SCOPE, &request.collection_name)
        } else {
            Condition::keyword(fields::COLLECTION, &request.collection_name)
        });
        filter.must.extend(data_conditions(&request.filter)?);
        if request.include_subcollections {
            // A parent path is implicit: searching it needs only some collection under it.
            let (_, in_subtree) = self
                .records
                .list_collections(tenant.owner(), Some(&request.collection_name), None, 1, 0)
                .await?;
            if in_subtree == 0 {
                return Err(ServiceError::not_found("collection", &request.collection_name));
            }
        } else {
            self.require(tenant, &request.collection_name).await?;
        }

        let dense = match request.mode {
            SearchMode::Exact => None,
            SearchMode::Semantic | SearchMode::Hybrid => {
                let query_chunks = self
                    .embedder
                    .chunk(&request.query)
                    .await
                    .map_err(|err| ServiceError::Internal(err.into()))?;
                // A query longer than the window: the mean of its chunks' vectors.
                let vectors = self
                    .embedder
                    .embed(&query_chunks)
                    .await
                    .map_err(|err| ServiceError::Internal(err.into()))?;
                let mut mean = vec![0.0f32; self.space.dimension];
                for vector in &vectors {
                    mean.iter_mut().zip(vector).for_each(|(m, v)| *m += v);
                }
                crate::embeddings::normalize(&mut mean);
                Some(mean)
            }
        };
        // Long items have several points: ask for more, keep each item's best.
        let candidates = (request.limit * 4).max(40);
        let ranking = match (request.mode, dense) {
            (SearchMode::Exact, _) => Ranking::Sparse(self.sparse_query(&request.query)),
            (SearchMode::Hybrid, Some(dense)) => {
                Ranking::Hybrid { dense, sparse: self.sparse_query(&request.query), candidates }
            }
            (_, dense) => Ranking::Dense(dense.unwrap_or_default()),
        };
        let hits = self
            .vectors
            .search(
                &self.space,
                &Query { ranking, filter, limit: candidates, score_threshold: request.score_threshold },
            )
            .await
            .map_err(vector_error)?;
        let mut best: Vec<(String, f32)> = Vec::new();
        for hit in hits {
            let Some(item_id) = hit.payload.get(fields::ITEM).and_then(Value::as_str) else {
                continue;
            };
            if !best.iter().any(|(id, _)| id == item_id) {
                best.push((item_id.to_string(), hit.score));
            }
            if best.len() == request.limit {
                break;
            }
        }
        let ids: Vec<String> = best.iter().map(|(id, _)| id.clone()).collect();
        let mut rows: HashMap<String, ItemRow> = self
            .records
            .items_by_id(tenant.owner(), &ids)
            .await?
            .into_iter()
            .map(|row| (row.id.clone(), row))
            .collect();
        let results = best
            .into_iter()
            .filter_map(|(id, score)| rows.remove(&id).map(|row| SearchHit { item: item(row), score }))
            .collect();
        Ok(SearchResults { mode: request.mode, results })
    }

    /// Queues embedding again for pending items whose job gave up (run at start); returns
    /// how many writes were queued. Their attempts start over.
    pub async fn requeue_orphaned(&self) -> ServiceResult<usize> {
        let writes = self.records.orphaned_writes(EMBED_JOB).await?;
        for write in &writes {
            let payload = json!({
                "eventID": write.event_id,
                "accountID": write.account_id,
                "environment": write.environment,
                "collectionID": write.collection_id,
                "collectionName": write.collection_name,
                "operation": if write.added { "add" } else { "update" },
                "itemIDs": write.item_ids,
            });
            self.records.reset_attempts(&write.item_ids, &write.event_id).await?;
            self.records.enqueue_job(EMBED_JOB, &payload, EMBED_ATTEMPTS, Some(&write.account_id)).await?;
        }
        Ok(writes.len())
    }

    /// One recorded event of the tenant (the events issue serves these over HTTP).
    pub async fn event(&self, tenant: &Tenant, event_id: &str) -> ServiceResult<Option<Value>> {
        Ok(self.records.event(tenant.owner(), event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_filters_become_conditions_on_the_items_data() {
        let filter =
            json!({"brand": "acme", "size": 42, "inStock": true, "tags": ["a", "b"], "codes": [1, 2]});
        let conditions = data_conditions(filter.as_object().unwrap()).unwrap();
        assert!(conditions.contains(&Condition::keyword("data.brand", "acme")));
        assert!(conditions.contains(&Condition::Integer { key: "data.size".into(), value: 42 }));
        assert!(conditions.contains(&Condition::Bool { key: "data.inStock".into(), value: true }));
        assert!(conditions.contains(&Condition::any_keyword("data.tags", vec!["a".into(), "b".into()])));
        assert_eq!(conditions.len(), 5);
    }

    #[test]
    fn a_filter_is_bounded_in_fields_and_list_values() {
        let wide: Map<String, Value> =
            (0..=MAX_FILTER_FIELDS).map(|i| (format!("f{i}"), json!("x"))).collect();
        let err = data_conditions(&wide).unwrap_err();
        assert!(err.to_string().contains("at most 32 fields (got 33)"), "{err}");
        let long = json!({"tags": vec!["t"; MAX_FILTER_LIST + 1]});
        let err = data_conditions(long.as_object().unwrap()).unwrap_err();
        assert!(
            matches!(err, ServiceError::Invalid { ref details, .. } if details.as_ref().is_some_and(|d| d["field"] == "filter.tags")),
            "{err}"
        );
        assert!(data_conditions(json!({"tags": vec!["t"; MAX_FILTER_LIST]}).as_object().unwrap()).is_ok());
    }

    #[test]
    fn unsupported_filters_are_refused_naming_the_field() {
        for bad in [
            json!({"price": 1.5}),
            json!({"x": null}),
            json!({"x": []}),
            json!({"x": {"y": 1}}),
            json!({"a[0]": "b"}),
        ] {
            let err = data_conditions(bad.as_object().unwrap()).unwrap_err();
            assert!(
                matches!(err, ServiceError::Invalid { ref message, .. } if message.starts_with("filter.")),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn data_must_be_a_non_empty_string_or_an_object() {
        assert!(check_data("d", &json!("text")).is_ok());
        assert!(check_data("d", &json!({"a": 1})).is_ok());
        for bad in [json!(""), json!(1), json!([1]), json!(null)] {
            assert!(check_data("d", &bad).is_err(), "{bad}");
        }
        let within = json!("x".repeat(MAX_ITEM_DATA_BYTES - 2));
        assert!(check_data("d", &within).is_ok());
        let past = json!({"text": "x".repeat(MAX_ITEM_DATA_BYTES)});
        let err = check_data("d", &past).unwrap_err();
        assert!(err.to_string().contains("at most 262144"), "{err}");
        let fields: serde_json::Map<String, Value> =
            (0..10_000).map(|i| (format!("f{i}"), json!(0))).collect();
        let err = check_data("d", &json!({ "k".repeat(128 * 1024): fields })).unwrap_err();
        assert!(err.to_string().contains("would pass 1048576 bytes"), "{err}");
    }

    #[test]
    fn pages_are_bounded_and_counted() {
        assert_eq!(page_bounds(None, None, 100).unwrap(), (1, 50));
        assert!(page_bounds(Some(0), None, 100).is_err());
        assert!(page_bounds(Some(MAX_PAGE_NUMBER + 1), None, 100).is_err());
        assert_eq!(page_bounds(Some(MAX_PAGE_NUMBER), Some(100), 100).unwrap(), (MAX_PAGE_NUMBER, 100));
        assert!(page_bounds(None, Some(101), 100).is_err());
        assert_eq!(total_pages(0, 10), 1);
        assert_eq!(total_pages(10, 10), 1);
        assert_eq!(total_pages(11, 10), 2);
    }
}
