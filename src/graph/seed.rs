//! Bulk seeding with resolution: each row becomes a new `proposed` entity or merges into the
//! entity its name (or one of its synonyms) already resolves to, under the same effective
//! type and bucket. Invalid rows are rejected with a reason while the others apply.
//!
//! Decisions: a row's `type` is resolved by exact name against the tenant's entity types and
//! created when missing. When the type's `attributeSchema` has a `properties` object (JSON
//! Schema style) its keys are the declared attributes, else its top-level keys are; an
//! attribute the schema does not declare rejects the row. On merge, attribute keys the
//! entity lacks are added and existing values are kept (curated values are not overwritten).
//!
//! Attributes guard the merge: a row whose compared attributes disagree with those of the
//! entity its name names becomes a homonym instead (see [`homonyms`]).

use super::columns::str_col;
use super::entities::{normalized_name, resolution_key, MAX_SYNONYMS_AT_ONCE};
use super::entity_types::NewEntityType;
use super::events::StatusChange;
use super::resolution::comparisons::{self, Field};
use super::tenant_size::Held;
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::params;
use crate::store::graph::GraphError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

mod homonyms;
mod pipeline;

pub use homonyms::HOMONYMS_PER_NAME;

use utoipa::ToSchema;

/// Rows a request may carry.
pub const MAX_ROWS: usize = 10_000;
/// Fewer rows than this are seeded in the request; more go to a seed job.
pub const SYNC_LIMIT: usize = 100;
/// Rows [`GraphService::prepare_rows`] prepares between two yields to the runtime (~0.4 ms).
const PREPARED_BETWEEN_YIELDS: usize = 64;
/// Attempts of a wave that lost a race on the key constraint.
const RACE_RETRIES: usize = 8;
/// Lookups again of rows a concurrent writer overtook between lookup and write.
const OVERTAKEN_RETRIES: usize = 32;

/// One row of a bulk seed.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedRow {
    pub canonical: String,
    /// Entity type name; created when missing.
    #[serde(rename = "type")]
    pub type_name: String,
    pub description: Option<String>,
    /// Other names of the entity: at most 1,000 (a row with more is rejected, saying so).
    #[serde(default)]
    pub synonyms: Vec<String>,
    #[schema(value_type = Option<Object>)]
    pub attributes: Option<Value>,
}

/// What happened to one row.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedRowResult {
    pub canonical: String,
    /// `created`, `merged-with` or `rejected`.
    pub outcome: String,
    #[serde(rename = "entityID", skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Declared synonyms that already name another entity: they stay with it, not this row's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms_not_taken: Vec<String>,
}

impl crate::store::records::seed_jobs::StoredResult for SeedRowResult {
    fn outcome(&self) -> &str {
        &self.outcome
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct SeedSummary {
    pub created: usize,
    pub merged: usize,
    pub rejected: usize,
}

impl SeedSummary {
    pub fn of(results: &[SeedRowResult]) -> Self {
        let count = |outcome: &str| results.iter().filter(|r| r.outcome == outcome).count();
        Self { created: count("created"), merged: count("merged-with"), rejected: count("rejected") }
    }
}

/// A chunk's rows ready for the write, and the results of those rejected.
pub(crate) struct PreparedRows {
    prepared: Vec<Prepared>,
    results: Vec<Option<SeedRowResult>>,
}

/// A row ready for Cypher.
struct Prepared {
    index: usize,
    /// The ID the row's entity gets if it creates one (sent as `targetID` then).
    new_id: String,
    canonical: String,
    key: String,
    synonym_keys: Vec<String>,
    /// The type's compared attributes and the row's values of them.
    fields: Arc<Vec<Field>>,
    compared: BTreeMap<String, String>,
    /// The row as the seed statement reads it; [`GraphService::seed_wave`] sets the keys its
    /// lookup decides, sends the rows and takes them back (they are never copied). Only what
    /// the statement reads, and no null (a missing key reads as null in Cypher): FalkorDB
    /// parses every byte of a statement's rows, and the row's unread `newID` and four null
    /// placeholders cost ~9 % of its time for 500 rows (median 25.9 against 23.7 ms, measured
    /// on a FalkorDB of its own).
    params: serde_json::Map<String, Value>,
}

impl Prepared {
    /// The row's name key, then its synonyms' keys.
    fn keys(&self) -> impl Iterator<Item = &String> + Clone {
        std::iter::once(&self.key).chain(&self.synonym_keys)
    }
}

impl GraphService {
    /// The tenant's default bucket, or the given live one (404 otherwise).
    pub async fn write_bucket(&self, tenant: &Tenant, bucket: Option<&str>) -> ServiceResult<String> {
        crate::text::check_opt("bucket", bucket)?;
        match bucket {
            Some(id) => Ok(self.get_bucket(tenant, id).await?.bucket_id),
            None => {
                let rows = self
                    .run(tenant, queries::BUCKET_DEFAULT, params! { "defaultKey" => tenant.scoped_key("") })
                    .await?;
                rows.first()
                    .map(|row| str_col(row, "bucketID"))
                    .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("tenant has no default bucket")))
            }
        }
    }

    /// Seeds `rows` into `bucket_id` and announces the entities it proposed. `tag` makes
    /// replays of the same rows idempotent: a row tagged `tag:i` that created an entity
    /// reports `created` again when re-run (and its event, recorded once, is not repeated).
    pub async fn seed_rows(
        &self,
        tenant: &Tenant,
        bucket_id: &str,
        rows: &[Value],
        tag: &str,
        offset: usize,
    ) -> ServiceResult<Vec<SeedRowResult>> {
        let prepared =
            self.prepare_rows(tenant, bucket_id, rows, tag, offset, &mut TypeCache::default()).await;
        let (results, proposed) = self.write_prepared(tenant, rows, prepared).await?;
        self.emit(tenant, proposed).await;
        Ok(results)
    }

    /// Validates `rows` and builds their Cypher parameters (a seed job prepares its next
    /// chunk while the current one is written, see `seeding.rs`). `types` holds the entity
    /// types already read (a seed job keeps one for its whole run, see [`TypeCache`]).
    pub(crate) async fn prepare_rows(
        &self,
        tenant: &Tenant,
        bucket_id: &str,
        rows: &[Value],
        tag: &str,
        offset: usize,
        types: &mut TypeCache,
    ) -> PreparedRows {
        let mut results: Vec<Option<SeedRowResult>> = vec![None; rows.len()];
        let mut prepared = Vec::new();
        for (i, raw) in rows.iter().enumerate() {
            // A seed job prepares its next chunk beside the chunk being written, in one task:
            // 2,000 rows prepared without a pause (~13 ms) held back the next statement while
            // the engine ran out of work.
            if i % PREPARED_BETWEEN_YIELDS == PREPARED_BETWEEN_YIELDS - 1 {
                tokio::task::yield_now().await;
            }
            let canonical = raw.get("canonical").and_then(Value::as_str).unwrap_or_default().to_string();
            match self.prepare(tenant, bucket_id, raw, types, &format!("{tag}:{}", offset + i)).await {
                Ok(mut row) => {
                    row.index = i;
                    prepared.push(row);
                }
                Err(reason) => results[i] = Some(rejected(canonical, reason)),
            }
        }
        PreparedRows { prepared, results }
    }

    /// Writes rows [`GraphService::prepare_rows`] prepared from `rows`: their results, and
    /// the entities they proposed, which the caller passes to [`GraphService::emit`] when it
    /// chooses (a seed job, while its next chunk is written), and must before it records the
    /// rows as done.
    pub(crate) async fn write_prepared(
        &self,
        tenant: &Tenant,
        rows: &[Value],
        prepared: PreparedRows,
    ) -> ServiceResult<(Vec<SeedRowResult>, Vec<StatusChange>)> {
        let PreparedRows { mut prepared, mut results } = prepared;
        // Rows past the tenant's room are rejected (see `tenant_size.rs`).
        let (held, room) = self.room(tenant, Held::Entities).await?;
        if prepared.len() as u64 > room {
            let reason = self.bound_reason(Held::Entities, held);
            for past in prepared.drain(room as usize..) {
                results[past.index] = Some(rejected(past.canonical, reason.clone()));
            }
        }
        self.write_rows(tenant, prepared, &mut results).await?;
        let results: Vec<SeedRowResult> = results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| rejected(String::new(), "not processed".into())))
            .collect();
        self.created(
            tenant,
            Held::Entities,
            results.iter().filter(|r| r.outcome == "created").count() as u64,
        );
        let proposed = results
            .iter()
            .zip(rows)
            .filter(|(result, _)| result.outcome == "created")
            .map(|(result, raw)| StatusChange {
                entity_id: result.entity_id.clone().unwrap_or_default(),
                type_name: raw.get("type").and_then(Value::as_str).map(String::from),
                prior_status: None,
                new_status: "proposed".into(),
                actor_user_id: None,
                reason: None,
            })
            .collect();
        Ok((results, proposed))
    }

    /// Validates one row and builds its Cypher parameters; `Err` is the rejection reason.
    async fn prepare(
        &self,
        tenant: &Tenant,
        bucket_id: &str,
        raw: &Value,
        types: &mut TypeCache,
        tag: &str,
    ) -> Result<Prepared, String> {
        // Rows from linking reach here unchecked: a control character rejects the row.
        crate::text::check_json("", raw).map_err(|e| e.to_string())?;
        let row = SeedRow::deserialize(raw).map_err(|err| format!("invalid row: {err}"))?;
        let canonical = row.canonical.trim().to_string();
        let normalized = normalized_name("canonical", &canonical).map_err(|e| e.to_string())?;
        let type_name = row.type_name.trim().to_string();
        // A row's type is created by name when missing: the same bound as a type's own name.
        if type_name.is_empty() || type_name.chars().count() > super::entity_types::NAME_MAX {
            return Err(format!(
                "type: must be a type name of 1 to {} characters",
                super::entity_types::NAME_MAX
            ));
        }
        let (type_id, declared, fields) =
            types.resolve(self, tenant, &type_name).await.map_err(|e| e.to_string())?;
        let attributes = match row.attributes {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err("attributes: must be an object".into()),
        };
        if let Some(declared) = declared {
            let undeclared: Vec<&String> = attributes.keys().filter(|k| !declared.contains(*k)).collect();
            if !undeclared.is_empty() {
                return Err(format!("attributes not declared by type {type_name:?}: {undeclared:?}"));
            }
        }
        if row.synonyms.len() > MAX_SYNONYMS_AT_ONCE {
            return Err(format!(
                "synonyms: at most {MAX_SYNONYMS_AT_ONCE} a row (got {}); seed the rest in another row of the same name",
                row.synonyms.len()
            ));
        }
        let key = resolution_key(tenant, bucket_id, &type_name, &normalized);
        // Every spelling, grouped by the key it normalises to (the canonical's first).
        let mut forms: Vec<(String, String, Vec<String>)> =
            vec![(key.clone(), normalized.clone(), vec![canonical.clone()])];
        for text in row.synonyms.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            let Ok(normalized) = normalized_name("synonyms", text) else {
                continue;
            };
            let synonym_key = resolution_key(tenant, bucket_id, &type_name, &normalized);
            match forms.iter_mut().find(|(k, _, _)| *k == synonym_key) {
                Some((_, _, texts)) if !texts.iter().any(|t| t == text) => texts.push(text.to_string()),
                Some(_) => {}
                None => forms.push((synonym_key, normalized, vec![text.to_string()])),
            }
        }
        let canonical_forms = forms[0].2.clone();
        let synonyms: Vec<Value> = forms[1..]
            .iter()
            .map(|(key, normalized, texts)| {
                json!({ "id": ids::new_id("esn"), "text": texts[0], "forms": texts, "normalized": normalized, "key": key })
            })
            .collect();
        let synonym_keys: Vec<String> = forms[1..].iter().map(|(key, _, _)| key.clone()).collect();
        let compared = fields
            .iter()
            .filter_map(|f| Some((f.key.clone(), comparisons::value_text(attributes.get(&f.key)?)?)))
            .collect();
        let (attr_keys, attr_values): (Vec<String>, Vec<String>) =
            attributes.into_iter().map(|(k, v)| (k, v.to_string())).unzip();
        let mut params = params! {
            "keyID" => ids::new_id("esn"), "tag" => tag,
            "canonical" => canonical, "normalized" => normalized, "key" => key, "forms" => canonical_forms,
            "typeName" => type_name, "typeID" => type_id, "bucketID" => bucket_id,
            "attrKeys" => attr_keys, "attrValues" => attr_values, "synonyms" => synonyms,
        };
        if let Some(description) = row.description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty()) {
            params.insert("description".into(), description.into());
        }
        let new_id = ids::new_id("ent");
        Ok(Prepared { index: 0, new_id, canonical, key, synonym_keys, fields, compared, params })
    }

    /// Resolves and writes one wave. The write applies a row only if its keys still point
    /// where the lookup saw them (FalkorDB runs one write at a time, so that check and the
    /// write are one step); a row another writer overtook is looked up and written again, so
    /// concurrent seeds end as if they had run one after the other.
    async fn seed_wave(&self, tenant: &Tenant, wave: Vec<Prepared>) -> WaveResult {
        let mut results = HashMap::with_capacity(wave.len());
        let mut pending = wave;
        for attempt in 0.. {
            let looked_up: Vec<&Prepared> =
                pending.iter().filter(|p| !homonyms::resolved_in_write(p)).collect();
            let named = match looked_up.is_empty() {
                true => homonyms::Named::default(),
                false => self.look_up_names(tenant, &looked_up).await?,
            };
            let owner = &named.owner;
            let new_ids: Vec<String> = pending.iter().map(|p| p.new_id.clone()).collect();
            // Positions in `pending` of the rows sent, in the order sent.
            let mut sent = Vec::with_capacity(pending.len());
            let mut rows = Vec::with_capacity(pending.len());
            let mut not_taken: HashMap<usize, Vec<String>> = HashMap::new();
            for (at, prepared) in pending.iter_mut().enumerate() {
                let target = match named.target(prepared, self.homonyms_per_name) {
                    Ok(target) => target,
                    Err(reason) => {
                        results.insert(prepared.index, rejected(prepared.canonical.clone(), reason));
                        continue;
                    }
                };
                not_taken.insert(prepared.index, synonyms_of_others(prepared, owner, &target.entity_id));
                let expected = match homonyms::resolved_in_write(prepared) {
                    true => Value::Null,
                    false => Value::Array(named.expected(prepared)),
                };
                let keys = json!(prepared.keys().collect::<Vec<_>>());
                let homonyms_checked = named.homonyms_checked(prepared);
                // Set only where checked: a row carries no key its statement does not read.
                let (homonym_keys, homonym_owners) = match homonyms_checked {
                    Some(_) => {
                        let (keys, owners) = named.expected_homonyms(prepared);
                        (json!(keys), json!(owners))
                    }
                    None => (Value::Null, Value::Null),
                };
                let homonyms_checked = json!(homonyms_checked);
                let row = &mut prepared.params;
                row.insert("i".into(), json!(prepared.index));
                row.insert("key".into(), json!(target.key));
                set_or_remove(row, "homonymOf", json!(target.homonym_of));
                set_or_remove(row, "homonymsChecked", homonyms_checked);
                set_or_remove(row, "homonymKeys", homonym_keys);
                set_or_remove(row, "homonymOwners", homonym_owners);
                row.insert("idKey".into(), json!(super::id_keys::id_key(&target.entity_id)));
                row.insert("targetID".into(), json!(target.entity_id));
                row.insert("keys".into(), keys);
                set_or_remove(row, "expected", expected);
                rows.push(Value::Object(std::mem::take(row)));
                sent.push(at);
            }
            let began = std::time::Instant::now();
            let mut statement = tenant.params();
            statement.extend(super::id_blocks::seed_params(tenant, new_ids.iter().map(String::as_str)));
            statement.insert("rows".into(), Value::Array(rows));
            statement.insert("now".into(), json!(ids::now_rfc3339()));
            let outcome = self.engine.run(queries::ENTITY_SEED, &statement).await;
            self.write_generations.wrote(tenant);
            // The rows come back to their rows, for a retry.
            if let Some(Value::Array(rows)) = statement.remove("rows") {
                for (row, at) in rows.into_iter().zip(sent) {
                    if let Value::Object(row) = row {
                        pending[at].params = row;
                    }
                }
            }
            tracing::debug!(rows = pending.len(), took = ?began.elapsed(), "seed statement");
            match outcome {
                Ok(written) => {
                    for row in written {
                        let index = row.get("i").and_then(Value::as_u64).unwrap_or_default() as usize;
                        let created = row.get("created").and_then(Value::as_bool) == Some(true);
                        results.insert(
                            index,
                            SeedRowResult {
                                // A wave keeps its rows' order: found by halving, not a walk per row.
                                canonical: pending
                                    .binary_search_by_key(&index, |p| p.index)
                                    .map(|at| pending[at].canonical.clone())
                                    .unwrap_or_default(),
                                outcome: if created { "created" } else { "merged-with" }.into(),
                                entity_id: Some(str_col(&row, "entityID")),
                                reason: None,
                                synonyms_not_taken: not_taken.remove(&index).unwrap_or_default(),
                            },
                        );
                    }
                    pending.retain(|p| !results.contains_key(&p.index));
                    if pending.is_empty() {
                        return Ok(results);
                    }
                    if attempt >= OVERTAKEN_RETRIES {
                        return Err(ServiceError::Internal(anyhow::anyhow!(
                            "{} seed rows were overtaken by concurrent writers {attempt} times",
                            pending.len()
                        )));
                    }
                }
                Err(GraphError::ConstraintViolation(_)) if attempt < RACE_RETRIES => {
                    tokio::time::sleep(std::time::Duration::from_millis(5 << attempt.min(6))).await;
                }
                Err(err) => return Err(err.into()),
            }
        }
        unreachable!("the retry loop returns")
    }
}

/// The row's declared synonyms that already name an entity other than `target`: they stay
/// with it, and the row's result says so.
fn synonyms_of_others(prepared: &Prepared, owner: &HashMap<String, String>, target: &str) -> Vec<String> {
    let Some(Value::Array(synonyms)) = prepared.params.get("synonyms") else {
        return Vec::new();
    };
    synonyms
        .iter()
        .filter(|s| s["key"].as_str().and_then(|k| owner.get(k)).is_some_and(|id| id != target))
        .filter_map(|s| s["text"].as_str().map(String::from))
        .collect()
}

/// Sets `key` of a seed row, or removes it when `value` is null (what a missing key reads as):
/// a retried wave may turn a key null that was set.
fn set_or_remove(row: &mut serde_json::Map<String, Value>, key: &str, value: Value) {
    match value {
        Value::Null => {
            row.remove(key);
        }
        value => {
            row.insert(key.into(), value);
        }
    }
}

fn rejected(canonical: String, reason: String) -> SeedRowResult {
    SeedRowResult {
        canonical,
        outcome: "rejected".into(),
        entity_id: None,
        reason: Some(reason),
        synonyms_not_taken: Vec::new(),
    }
}

/// What a wave's write decided for its rows, by row index.
type WaveResult = ServiceResult<HashMap<usize, SeedRowResult>>;

/// A type as seeding needs it: ID, declared attribute keys (None: any) and compared fields.
type SeedType = (String, Option<HashSet<String>>, Arc<Vec<Field>>);

/// Entity types by name for one seed: a request's rows, or a seed job's run. A job reads each
/// type its rows name once per run, not once per chunk: the read waited behind the other
/// seeding job's write and left the engine idle while the chunk was then prepared. So a
/// type's `attributeSchema` changed while a job runs applies to its rows from the job's next
/// run (a retry), not from its next chunk.
#[derive(Default)]
pub(crate) struct TypeCache(HashMap<String, SeedType>);

impl TypeCache {
    async fn resolve(
        &mut self,
        graph: &GraphService,
        tenant: &Tenant,
        name: &str,
    ) -> ServiceResult<SeedType> {
        if let Some(found) = self.0.get(name) {
            return Ok(found.clone());
        }
        let mut found = graph.run(tenant, queries::ENTITY_TYPE_BY_NAME, params! { "name" => name }).await?;
        if found.is_empty() {
            let new = NewEntityType {
                name: name.into(),
                description: None,
                parent_type_id: None,
                attribute_schema: None,
            };
            match graph.create_entity_type(tenant, new).await {
                Ok(_) | Err(ServiceError::Conflict(_)) => {}
                Err(err) => return Err(err),
            }
            found = graph.run(tenant, queries::ENTITY_TYPE_BY_NAME, params! { "name" => name }).await?;
        }
        let row =
            found.first().ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("type {name} vanished")))?;
        let schema: Option<Value> = row
            .get("attributeSchema")
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str(text).ok());
        let fields = Arc::new(comparisons::fields_of(schema.as_ref()));
        let declared = schema.map(|schema| {
            let fields = schema.get("properties").filter(|p| p.is_object()).unwrap_or(&schema);
            fields.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
        });
        let entry = (str_col(row, "typeID"), declared, fields);
        self.0.insert(name.to_string(), entry.clone());
        Ok(entry)
    }
}
