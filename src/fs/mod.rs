//! `POST /v3/fs`: shell verbs over parsed documents (`ls`, `cat`, `grep`, `head`, `stat`)
//! and over the entity memory (`find`, `open`, `xref`), answered in one envelope
//! `{op, data, hasMore, nextCursor, count, hint}`. Shared by REST and MCP.
//!
//! - Documents are the parsed documents of [`crate::documents`]; a `path` is a referenceID
//!   (the latest document with it) or a transformationID.
//! - Entities are the knowledge graph's live canonical entities; a merged-away entityID
//!   opens its survivor. `context.bucket` narrows memory ops to one bucket.
//! - `grep` asks the record store's trigram index for candidates (see
//!   [`crate::store::records::documents`]) and checks each itself; a page stops after
//!   [`SCAN_LIMIT`] candidates without enough hits, and a `countOnly` count after as many,
//!   and says so (`hasMore`, a cursor, a hint). `cat` selects at most 50 paths of at most
//!   256 characters ([`select::check`]).

pub mod grep;
pub mod request;
pub mod select;

use crate::error::{ServiceError, ServiceResult};
use crate::graph::search::FindFilter;
use crate::graph::{GraphService, Tenant};
use crate::store::records::documents::{DocumentQuery, DocumentRow, ItemRow};
use crate::store::records::Records;
use request::{FsRequest, Op};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use utoipa::ToSchema;

/// Candidates one grep page reads at most before answering with what it found.
pub const SCAN_LIMIT: usize = 20_000;

const NO_MEMORY_HINT: &str = "No parsed document has been linked into the entity memory yet: \
    run a parse function (parseConfig.linkAcrossDocuments, on by default) over documents first.";

/// The uniform answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsResponse {
    pub op: Op,
    /// Op-specific: a list (ls, find, grep, head, xref) or an object (cat, stat, open).
    pub data: Value,
    pub has_more: bool,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl FsResponse {
    fn one(op: Op, data: Value) -> Self {
        Self { op, data, has_more: false, next_cursor: None, count: None, hint: None }
    }

    fn list(op: Op, data: Vec<Value>, next_cursor: Option<String>) -> Self {
        let count = data.len() as i64;
        Self {
            op,
            data: Value::Array(data),
            has_more: next_cursor.is_some(),
            next_cursor,
            count: Some(count),
            hint: None,
        }
    }

    fn no_memory(op: Op) -> Self {
        let data = if op == Op::Open { json!({}) } else { json!([]) };
        Self { hint: Some(NO_MEMORY_HINT.into()), count: Some(0), ..Self::one(op, data) }
    }
}

#[derive(Clone)]
pub struct FsService {
    records: Records,
    graph: Arc<GraphService>,
    /// What a grep request reads and matches at most (the production bounds but in tests).
    grep_bounds: grep::Bounds,
}

impl FsService {
    pub fn new(records: Records, graph: Arc<GraphService>) -> Self {
        Self { records, graph, grep_bounds: grep::Bounds::default() }
    }

    /// This service with another bound on a grep request's reading (tests reach it with a
    /// small one).
    pub fn with_scan_limit(mut self, limit: usize) -> Self {
        self.grep_bounds.candidates = limit.max(1);
        self
    }

    /// This service with another bound on a grep request's matching time (tests reach it
    /// with none).
    pub fn with_match_budget(mut self, budget: std::time::Duration) -> Self {
        self.grep_bounds.matching = budget;
        self
    }

    /// This service with another bound on the text one query of grep candidates reads (tests
    /// reach it with a few bytes).
    pub fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.grep_bounds.batch_bytes = bytes;
        self
    }

    pub async fn run(&self, tenant: &Tenant, request: FsRequest) -> ServiceResult<FsResponse> {
        crate::text::check_opt("cursor", request.cursor.as_deref())?;
        match request.op {
            Op::Ls => self.ls(tenant, &request).await,
            Op::Cat => self.cat(tenant, &request).await,
            Op::Head => self.head(tenant, &request).await,
            Op::Stat => self.stat(tenant, &request).await,
            Op::Grep => grep::run(&self.records, tenant, &request, &self.grep_bounds).await,
            Op::Find => self.find(tenant, &request).await,
            Op::Open => self.open(tenant, &request).await,
            Op::Xref => self.xref(tenant, &request).await,
        }
    }

    async fn ls(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let limit = request::limit(request)?;
        let filter = request.filter.clone().unwrap_or_default();
        crate::text::check_opt("filter.functionName", filter.function_name.as_deref())?;
        crate::text::check_opt("filter.search", filter.search.as_deref())?;
        let since_ms = since(filter.since.as_deref())?.map(|t| t.timestamp_millis());
        let rows = self
            .records
            .list_documents(
                tenant.owner(),
                &DocumentQuery {
                    function_name: filter.function_name.as_deref(),
                    search: filter.search.as_deref(),
                    since_ms,
                    after: request.cursor.as_deref(),
                    limit: limit + 1,
                },
            )
            .await?;
        let (rows, next) = page(rows, limit, |d| d.id.clone());
        Ok(FsResponse::list(Op::Ls, rows.iter().map(summary).collect(), next))
    }

    async fn document(&self, tenant: &Tenant, path: &str) -> ServiceResult<DocumentRow> {
        self.records
            .find_document(tenant.owner(), path)
            .await?
            .ok_or_else(|| ServiceError::not_found("parsed document", path))
    }

    async fn cat(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        if let Some(paths) = &request.select {
            select::check(paths)?;
        }
        let doc = self.document(tenant, request::required_path(request)?).await?;
        let owner = tenant.owner();
        let mut sections = self.records.document_items(owner, &doc.id, "sections", None).await?;
        let mut entities = self.records.document_items(owner, &doc.id, "entities", None).await?;
        let mut relationships = self.records.document_items(owner, &doc.id, "relationships", None).await?;
        if let Some(range) = &request.range {
            // A page range applies to everything page-scoped in the answer: sections and the
            // entities found on those pages (by their mention's page), and the relationships
            // between entities found there (a relationship carries no page of its own).
            let (from, to) = page_bounds(range)?;
            let in_range = |item: &ItemRow| item.page.is_some_and(|p| p >= from && p <= to);
            sections.retain(in_range);
            entities.retain(in_range);
            let seen: std::collections::HashSet<&str> =
                entities.iter().filter_map(|e| e.entity_id.as_deref()).collect();
            relationships.retain(|r| {
                let (source, target) = relationship_ends(r);
                seen.contains(source) && seen.contains(target)
            });
            if let Some(types) = &range.section_types {
                sections.retain(|s| types.iter().any(|t| t.eq_ignore_ascii_case(&s.item_type)));
            }
        }
        let mut data = summary(&doc);
        let object = data.as_object_mut().expect("summary is an object");
        object.insert("sections".into(), sections.iter().map(section).collect());
        let output = self.records.document_output(tenant.owner(), &doc.id).await?.unwrap_or_default();
        object.insert("output".into(), serde_json::from_str(&output).unwrap_or(Value::Null));
        object.insert("entities".into(), entities.iter().map(entity_item).collect());
        object.insert("relationships".into(), relationships.iter().map(relationship_item).collect());
        if let Some(paths) = &request.select {
            data = select::project(&data, paths);
        }
        Ok(FsResponse::one(Op::Cat, data))
    }

    async fn head(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let n = match request.n {
            None => 10,
            Some(n) if (1..=request::MAX_HEAD).contains(&n) => n as usize,
            Some(_) => {
                let message = format!("must be between 1 and {}", request::MAX_HEAD);
                return Err(ServiceError::invalid_field("n", message));
            }
        };
        let doc = self.document(tenant, request::required_path(request)?).await?;
        // One more than shown tells whether there are more.
        let first = Some(n as u32 + 1);
        let sections = self.records.document_items(tenant.owner(), &doc.id, "sections", first).await?;
        let more = sections.len() > n;
        let data: Vec<Value> = sections.iter().take(n).map(section).collect();
        let count = data.len() as i64;
        Ok(FsResponse { has_more: more, count: Some(count), ..FsResponse::one(Op::Head, Value::Array(data)) })
    }

    async fn stat(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let path = request::required_path(request)?;
        if let Some(doc) = self.records.find_document(tenant.owner(), path).await? {
            let mut types: Map<String, Value> = Map::new();
            let mut entity_count = 0;
            for (scope, item_type, n) in self.records.document_item_counts(tenant.owner(), &doc.id).await? {
                match scope.as_str() {
                    "sections" => {
                        types.insert(item_type, json!(n));
                    }
                    "entities" => entity_count += n,
                    _ => {}
                }
            }
            let mut data = summary(&doc);
            let object = data.as_object_mut().expect("summary is an object");
            object.insert("kind".into(), json!("document"));
            object.insert("sectionTypes".into(), Value::Object(types));
            object.insert("entityCount".into(), json!(entity_count));
            return Ok(FsResponse::one(Op::Stat, data));
        }
        if path.starts_with("ent_") {
            let entity = self.graph.get_entity(tenant, path, bucket(request)).await?;
            let mut data = serde_json::to_value(&entity).map_err(|e| ServiceError::Internal(e.into()))?;
            if let Some(object) = data.as_object_mut() {
                object.remove("previewMentions");
                object.insert("kind".into(), json!("entity"));
            }
            return Ok(FsResponse::one(Op::Stat, data));
        }
        Err(ServiceError::not_found("parsed document or entity", path))
    }

    async fn find(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let limit = request::limit(request)?;
        if !self.records.any_memory_linked(tenant.owner()).await? {
            return Ok(FsResponse::no_memory(Op::Find));
        }
        let filter = request.filter.clone().unwrap_or_default();
        crate::text::check_opt("filter.search", filter.search.as_deref())?;
        crate::text::check_opt("filter.type", filter.type_name.as_deref())?;
        let find = FindFilter {
            bucket: bucket(request).map(str::to_string),
            since: since(filter.since.as_deref())?.map(|t| t.with_timezone(&chrono::Utc)),
            search: filter.search,
            type_name: filter.type_name,
        };
        let (ids, next) =
            self.graph.find_entity_ids(tenant, find, request.cursor.as_deref(), limit as usize).await?;
        let entities = self.graph.entity_details(tenant, &ids).await?;
        let data = entities
            .iter()
            .map(|e| {
                json!({
                    "entityID": e.entity_id, "canonical": e.canonical, "type": e.type_name,
                    "status": e.status, "mentionCount": e.mention_count, "surfaceForms": e.surface_forms,
                    "bucketID": e.bucket_id,
                })
            })
            .collect();
        let short = next.is_some() && (ids.len() as u32) < limit;
        let mut response = FsResponse::list(Op::Find, data, next);
        if short {
            response.hint = Some(FIND_SHORT_HINT.into());
        }
        Ok(response)
    }

    async fn open(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let path = request::required_path(request)?;
        if !self.records.any_memory_linked(tenant.owner()).await? {
            return Ok(FsResponse::no_memory(Op::Open));
        }
        let entity = self.graph.get_entity(tenant, path, bucket(request)).await?;
        let mentions = self.mentions(tenant, &entity.entity_id).await?;
        let mut data = serde_json::to_value(&entity).map_err(|e| ServiceError::Internal(e.into()))?;
        if let Some(object) = data.as_object_mut() {
            object.remove("previewMentions");
            object.insert("mentions".into(), serde_json::to_value(&mentions).unwrap_or_default());
            if entity.entity_id != path {
                object.insert("requestedID".into(), json!(path));
            }
        }
        Ok(FsResponse::one(Op::Open, data))
    }

    async fn xref(&self, tenant: &Tenant, request: &FsRequest) -> ServiceResult<FsResponse> {
        let path = request::required_path(request)?;
        let limit = request::limit(request)? as usize;
        if !self.records.any_memory_linked(tenant.owner()).await? {
            return Ok(FsResponse::no_memory(Op::Xref));
        }
        let entity = self.graph.get_entity(tenant, path, bucket(request)).await?;
        let mut mentions = self.mentions(tenant, &entity.entity_id).await?;
        if let Some(cursor) = &request.cursor {
            mentions.retain(|m| &m.mention_id > cursor);
        }
        let (mentions, next) = page(mentions, limit as u32, |m| m.mention_id.clone());
        let doc_ids: Vec<String> = mentions.iter().filter_map(|m| m.transformation_id.clone()).collect();
        let docs: HashMap<String, DocumentRow> = self
            .records
            .documents_by_ids(tenant.owner(), &doc_ids)
            .await?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        let mut data = Vec::new();
        for mention in &mentions {
            let doc = mention.transformation_id.as_ref().and_then(|id| docs.get(id));
            let mut hit = json!({
                "mentionID": mention.mention_id, "surface": mention.surface,
                "referenceID": mention.reference_id, "transformationID": mention.transformation_id,
                "sectionLabel": mention.section_label, "page": mention.page,
            });
            if let Some(doc) = doc {
                let found = match &mention.section_label {
                    Some(label) => self.records.document_section(tenant.owner(), &doc.id, label).await?,
                    None => None,
                };
                if let Some(found) = found {
                    hit["section"] = section_excerpt(&found);
                }
                hit["functionName"] = json!(doc.function_name);
            }
            data.push(hit);
        }
        Ok(FsResponse::list(Op::Xref, data, next))
    }

    async fn mentions(
        &self,
        tenant: &Tenant,
        entity_id: &str,
    ) -> ServiceResult<Vec<crate::graph::entities::Mention>> {
        let mut all = self.graph.mentions_of_many(tenant, &[entity_id.to_string()], 10_000).await?;
        Ok(all.remove(entity_id).unwrap_or_default())
    }
}

/// `context.bucket`, when given and not empty.
fn bucket(request: &FsRequest) -> Option<&str> {
    request.context.as_ref().and_then(|c| c.bucket.as_deref()).filter(|b| !b.trim().is_empty())
}

fn since(raw: Option<&str>) -> ServiceResult<Option<chrono::DateTime<chrono::FixedOffset>>> {
    raw.map(|text| {
        chrono::DateTime::parse_from_rfc3339(text).map_err(|_| {
            ServiceError::invalid_field(
                "filter.since",
                "must be an RFC 3339 date-time such as 2024-01-31T00:00:00Z",
            )
        })
    })
    .transpose()
}

/// The first `limit` of `rows` (read as `limit + 1`) and the cursor after them, if more.
fn page<T>(mut rows: Vec<T>, limit: u32, id: impl Fn(&T) -> String) -> (Vec<T>, Option<String>) {
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = if more { rows.last().map(id) } else { None };
    (rows, next)
}

fn millis_rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What a `find` page that ended short says (see [`crate::graph::window::PageScan`]).
const FIND_SHORT_HINT: &str =
    "this page read its share of the entity memory and ended short; pass nextCursor to read on";

/// The inclusive pages a `range` asks for (all pages when it names none).
fn page_bounds(range: &request::Range) -> ServiceResult<(i64, i64)> {
    Ok(match (range.page, range.page_range.as_deref()) {
        (Some(_), Some(_)) => {
            return Err(ServiceError::invalid_field("range.pageRange", "give page or pageRange, not both"))
        }
        (Some(page), None) if page >= 1 => (page, page),
        (Some(_), None) => return Err(ServiceError::invalid_field("range.page", "pages start at 1")),
        (None, Some([from, to])) if *from >= 1 && from <= to => (*from, *to),
        (None, Some(_)) => {
            return Err(ServiceError::invalid_field(
                "range.pageRange",
                "must be [from, to] with 1 <= from <= to",
            ))
        }
        (None, None) => (1, i64::MAX),
    })
}

/// The source and target entity IDs of a stored relationship.
fn relationship_ends(item: &ItemRow) -> (&str, &str) {
    item.label.split_once(" → ").unwrap_or((&item.label, ""))
}

/// A document as `ls` lists it.
fn summary(doc: &DocumentRow) -> Value {
    json!({
        "referenceID": doc.reference_id, "transformationID": doc.id, "callID": doc.call_id,
        "functionName": doc.function_name, "inputType": doc.input_type, "fileName": doc.file_name,
        "pageCount": doc.page_count, "sectionCount": doc.section_count,
        "memoryLinked": doc.memory_linked, "bucketID": doc.bucket_id, "parsedAt": millis_rfc3339(doc.created_at),
    })
}

fn section(item: &ItemRow) -> Value {
    json!({ "label": item.label, "type": item.item_type, "page": item.page, "text": item.text })
}

/// Longest section text a mention's hit shows (bytes, cut at a character): a page of 200
/// hits could otherwise carry 200 whole CSV or JSON documents.
const XREF_SECTION_BYTES: usize = 16 * 1024;

/// A section as a hit shows it: its text cut to [`XREF_SECTION_BYTES`] (then `textTruncated`).
fn section_excerpt(item: &ItemRow) -> Value {
    let end = item.text.floor_char_boundary(XREF_SECTION_BYTES);
    let mut shown =
        json!({ "label": item.label, "type": item.item_type, "page": item.page, "text": &item.text[..end] });
    if end < item.text.len() {
        shown["textTruncated"] = json!(true);
    }
    shown
}

fn entity_item(item: &ItemRow) -> Value {
    json!({ "entityID": item.entity_id, "surface": item.text, "type": item.item_type,
            "sectionLabel": item.label, "page": item.page })
}

fn relationship_item(item: &ItemRow) -> Value {
    let (source, target) = relationship_ends(item);
    json!({ "sourceEntityID": source, "targetEntityID": target, "type": item.item_type, "text": item.text })
}
