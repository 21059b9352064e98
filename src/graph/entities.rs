//! Entities: canonical things of the knowledge graph, their surface forms (resolution keys),
//! curation status, and lookups that see through merges.
//!
//! Statuses: `extracted` and `proposed` (awaiting curation) → `approved` | `rejected`;
//! any live entity → `merged` (by a merge). Every other transition is a 409.

use super::audit::{self, Actor};
use super::columns::str_col;
use super::events::StatusChange;
use super::normalize::normalize;
use super::{decode, queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::params;
use crate::store::graph::Row;
use crate::store::records::audit::NewAuditEntry;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use utoipa::ToSchema;

/// A mention of an entity in a document.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Mention {
    #[serde(rename = "mentionID")]
    pub mention_id: String,
    #[serde(rename = "entityID")]
    pub entity_id: String,
    #[serde(rename = "referenceID")]
    pub reference_id: Option<String>,
    #[serde(rename = "transformationID")]
    pub transformation_id: Option<String>,
    pub page: Option<i64>,
    pub section_label: Option<String>,
    pub surface: String,
    pub created_at: String,
}

/// The live entity an ID stands for (itself, or the survivor of its merges).
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub entity_id: String,
    pub bucket_id: String,
    /// Effective type name: the assigned type's, else the inferred one.
    pub type_name: String,
}

/// An entity as the review queue and entity endpoints return it.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Entity {
    #[serde(rename = "entityID")]
    pub entity_id: String,
    pub canonical: String,
    /// Effective type name: the assigned type's, else the inferred one.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Assigned entity type (`ety_…`), when one is.
    #[serde(rename = "typeID", skip_serializing_if = "Option::is_none")]
    pub type_id: Option<String>,
    pub description: String,
    pub mention_count: i64,
    /// Spellings of the entity's names, sorted: at most 1,000.
    pub surface_forms: Vec<String>,
    /// `extracted`, `proposed`, `approved`, `rejected` or `merged`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validated_at: Option<String>,
    #[serde(rename = "validatedByUserID", skip_serializing_if = "Option::is_none")]
    pub validated_by_user_id: Option<String>,
    /// The first two mentions.
    pub preview_mentions: Vec<Mention>,
    #[serde(rename = "bucketID")]
    pub bucket_id: String,
    /// Structured attribute values.
    #[schema(value_type = Object)]
    pub attributes: Map<String, Value>,
    /// The type name extraction or seeding gave (the effective type without an assignment).
    #[serde(skip)]
    pub inferred_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredEntity {
    #[serde(rename = "entityID")]
    entity_id: String,
    canonical: String,
    #[serde(rename = "type")]
    type_name: Option<String>,
    #[serde(rename = "typeID")]
    type_id: Option<String>,
    description: Option<String>,
    mention_count: i64,
    surface_forms: Vec<String>,
    status: String,
    created_at: String,
    updated_at: String,
    validated_at: Option<String>,
    #[serde(rename = "validatedByUserID")]
    validated_by_user_id: Option<String>,
    preview_mentions: Vec<Mention>,
    #[serde(rename = "bucketID")]
    bucket_id: String,
    attribute_keys: Option<Vec<String>>,
    attribute_values: Option<Vec<String>>,
    inferred_type: Option<String>,
}

/// An entity from a row of `entity_details.cypher`'s columns.
pub(super) fn entity_of_row(row: Row) -> ServiceResult<Entity> {
    decode::<StoredEntity>(row).map(Entity::from)
}

impl From<StoredEntity> for Entity {
    fn from(stored: StoredEntity) -> Self {
        let attributes = stored
            .attribute_keys
            .unwrap_or_default()
            .into_iter()
            .zip(stored.attribute_values.unwrap_or_default())
            .map(|(key, text)| (key, serde_json::from_str(&text).unwrap_or(Value::String(text))))
            .collect();
        let mut surface_forms = stored.surface_forms;
        surface_forms.sort();
        surface_forms.dedup();
        Entity {
            entity_id: stored.entity_id,
            canonical: stored.canonical,
            type_name: stored.type_name.unwrap_or_default(),
            type_id: stored.type_id,
            description: stored.description.unwrap_or_default(),
            mention_count: stored.mention_count,
            surface_forms,
            status: stored.status,
            created_at: stored.created_at,
            updated_at: stored.updated_at,
            validated_at: stored.validated_at,
            validated_by_user_id: stored.validated_by_user_id,
            preview_mentions: stored.preview_mentions,
            bucket_id: stored.bucket_id,
            attributes,
            inferred_type: stored.inferred_type.unwrap_or_default(),
        }
    }
}

/// A surface form attached to an entity by hand or by extraction.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Synonym {
    #[serde(rename = "synonymID")]
    pub synonym_id: String,
    pub text: String,
    pub normalized_text: String,
    /// `extracted`, `customer_defined` or `sme_approved`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    pub created_at: String,
}

/// Sources a caller may give a synonym.
pub const SYNONYM_SOURCES: &[&str] = &["extracted", "customer_defined", "sme_approved"];

/// The decisions a reviewer records on an entity.
pub const DECISIONS: [&str; 2] = ["approved", "rejected"];

/// Entity IDs one `POST /v3/entities/bulk-validate` takes at most.
pub const BULK_VALIDATE_MAX: usize = 1_000;

/// Synonyms one request gives at once: a seed row's `synonyms`, a PATCH's `addSynonyms` and
/// `removeSynonymIDs`. Bounded only by a request's 2 MB, one row could carry 200,000 (its
/// forms are grouped by a search of every earlier one: ~2 × 10^10 key comparisons on the
/// request's async worker, then one statement merging them all), and a PATCH makes a
/// statement for each.
pub const MAX_SYNONYMS_AT_ONCE: usize = 1_000;

/// How many synonyms `GET /v3/entities/{id}/synonyms` lists: the first by creation.
pub const SYNONYMS_LISTED: i64 = 500;

/// How many surface forms an entity's record carries at most. Every mention's new spelling
/// and every synonym adds one, so an entity can gather a tenant's hundreds of thousands; a
/// review page of 50 such records carried them all. Past it, the record lists the forms its
/// first keys give (sorted; the canonical name is the record's own field).
pub const SURFACE_FORMS_LISTED: usize = 1_000;

/// How many spellings one name key keeps (its `forms`: texts that normalise alike, "ACME",
/// "Acme", "acme."). Each new spelling was checked against the others and the list copied
/// with it, so a tenant sending ever new variants of one name made each of its mentions slower
/// than the last, in the engine every tenant shares. Past it a spelling is not recorded (the
/// name still matches: it is the key that matches). Written as a literal in the statements
/// that add spellings (`mention_create`, `entity_add_key`, `entity_seed`).
pub const FORMS_PER_KEY: usize = 100;

/// The source of the key of an entity's canonical name: never shown as a synonym.
const CANONICAL_SOURCE: &str = "canonical";

/// The resolution key of a normalised name: tenant, bucket, effective type and name.
pub fn resolution_key(tenant: &Tenant, bucket_id: &str, type_name: &str, normalized: &str) -> String {
    format!("{}{normalized}", key_prefix(tenant, bucket_id, type_name))
}

/// Everything of a resolution key but the name (re-keying swaps the type part).
pub fn key_prefix(tenant: &Tenant, bucket_id: &str, type_name: &str) -> String {
    format!(
        "{}\u{1f}{}\u{1f}{bucket_id}\u{1f}{}\u{1f}",
        tenant.account_id,
        tenant.environment.as_str(),
        type_name.trim().to_lowercase()
    )
}

/// A normalised, non-empty name, or a 400 naming the field.
pub fn normalized_name(field: &str, text: &str) -> ServiceResult<String> {
    crate::text::check_len(field, text, 500, false)?;
    let normalized = normalize(text);
    if normalized.is_empty() {
        return Err(ServiceError::invalid_field(field, "must contain a letter or a digit"));
    }
    Ok(normalized)
}

/// The changes a PATCH asks for.
#[derive(Default)]
pub struct EntityChanges {
    pub status: Option<String>,
    /// `Some("")` clears the assignment.
    pub assigned_type_id: Option<String>,
    pub canonical: Option<String>,
    pub add_synonyms: Vec<String>,
    pub remove_synonym_ids: Vec<String>,
    pub locale: Option<String>,
}

/// An entity after a PATCH, and the synonyms it asked for that were not added.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityUpdate {
    #[serde(flatten)]
    pub entity: Entity,
    /// Asked-for synonyms that were not added, each with why (absent when all were added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms_not_added: Vec<SynonymNotAdded>,
}

/// A synonym a PATCH asked for that was not added.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SynonymNotAdded {
    pub text: String,
    pub reason: String,
}

/// Outcome of one row of a bulk validation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidateRow {
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// `validated`, `skipped` (not found) or `rejected-row` (illegal transition).
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidateSummary {
    pub validated: usize,
    pub skipped: usize,
    pub rejected_row: usize,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ValidateResult {
    pub results: Vec<ValidateRow>,
    pub summary: ValidateSummary,
}

/// A decision: one of [`DECISIONS`] (per entity, or for a bulk selection).
pub(super) fn check_terminal_status(status: &str) -> ServiceResult<()> {
    if DECISIONS.contains(&status) {
        Ok(())
    } else {
        Err(ServiceError::invalid_field("status", "must be approved or rejected"))
    }
}

impl GraphService {
    /// The live entity an ID stands for (through merges), optionally only in `bucket`.
    pub async fn resolve_entity(
        &self,
        tenant: &Tenant,
        id: &str,
        bucket: Option<&str>,
    ) -> ServiceResult<(String, String)> {
        let resolved = self.resolved_entity(tenant, id, bucket).await?;
        Ok((resolved.entity_id, resolved.bucket_id))
    }

    /// The live entity `id` stands for, with its bucket and effective type: what a write
    /// beside it needs, without the entity's record (its forms and mentions, which grow).
    pub async fn resolved_entity(
        &self,
        tenant: &Tenant,
        id: &str,
        bucket: Option<&str>,
    ) -> ServiceResult<Resolved> {
        crate::text::check("id", id)?;
        crate::text::check_opt("bucket", bucket)?;
        let rows = self.run(tenant, queries::ENTITY_RESOLVE, params! { "id" => id }).await?;
        let row = rows.first().ok_or_else(|| ServiceError::not_found("entity", id))?;
        let resolved = Resolved {
            entity_id: str_col(row, "entityID"),
            bucket_id: str_col(row, "bucketID"),
            type_name: str_col(row, "type"),
        };
        if bucket.is_some_and(|b| b != resolved.bucket_id) {
            return Err(ServiceError::not_found("entity", id));
        }
        Ok(resolved)
    }

    /// Full records of these entity IDs (those that exist), in the order given.
    pub async fn entity_details(&self, tenant: &Tenant, ids: &[String]) -> ServiceResult<Vec<Entity>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let params = params! { "ids" => ids, "formsListed" => SURFACE_FORMS_LISTED };
        let rows = self.run(tenant, queries::ENTITY_DETAILS, params).await?;
        let mut found: Vec<Entity> = rows.into_iter().map(entity_of_row).collect::<ServiceResult<_>>()?;
        // By each ID's first place, looked up (a walk of the IDs per entity was quadratic).
        let place: std::collections::HashMap<&str, usize> =
            ids.iter().enumerate().rev().map(|(at, id)| (id.as_str(), at)).collect();
        found.sort_by_key(|e| place.get(e.entity_id.as_str()).copied());
        Ok(found)
    }

    pub async fn get_entity(&self, tenant: &Tenant, id: &str, bucket: Option<&str>) -> ServiceResult<Entity> {
        let (entity_id, _) = self.resolve_entity(tenant, id, bucket).await?;
        self.entity_details(tenant, &[entity_id])
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| ServiceError::not_found("entity", id))
    }

    /// Applies a PATCH: synonyms first, then canonical, type and status, so a new canonical
    /// may be one of the synonyms just added.
    pub async fn update_entity(
        &self,
        tenant: &Tenant,
        id: &str,
        bucket: Option<&str>,
        changes: EntityChanges,
        actor: &Actor,
    ) -> ServiceResult<EntityUpdate> {
        if let Some(status) = &changes.status {
            check_terminal_status(status)?;
        }
        crate::text::check_opt("canonical", changes.canonical.as_deref())?;
        for (field, list) in
            [("addSynonyms", &changes.add_synonyms), ("removeSynonymIDs", &changes.remove_synonym_ids)]
        {
            if list.len() > MAX_SYNONYMS_AT_ONCE {
                return Err(ServiceError::invalid_field(
                    field,
                    format!(
                        "at most {MAX_SYNONYMS_AT_ONCE} at once (got {}); send the rest in another request",
                        list.len()
                    ),
                ));
            }
            crate::text::check_each(field, list)?;
        }
        crate::text::check_opt("assignedTypeID", changes.assigned_type_id.as_deref())?;
        crate::text::check_opt("locale", changes.locale.as_deref())?;
        let (entity_id, _) = self.resolve_entity(tenant, id, bucket).await?;
        for synonym_id in &changes.remove_synonym_ids {
            self.remove_synonym(tenant, &entity_id, synonym_id, actor).await?;
        }
        let mut not_added = Vec::new();
        if !changes.add_synonyms.is_empty() {
            // A form of a canonical name is already a name of the entity: nothing to add, and
            // the answer says so instead of a silent 200.
            let entity = self.get_entity(tenant, &entity_id, None).await?;
            for text in &changes.add_synonyms {
                let (synonym, new) = self
                    .attach_name(tenant, &entity, text, "customer_defined", changes.locale.as_deref())
                    .await?;
                if new {
                    self.audit(tenant, vec![synonym_entry(&entity_id, "synonym_added", &synonym, actor)])
                        .await;
                }
                if synonym.source == CANONICAL_SOURCE {
                    not_added.push(SynonymNotAdded {
                        text: text.trim().to_string(),
                        reason: format!(
                            "normalises to {:?}, a canonical name of this entity (its own or that of an \
                             entity merged into it): it already resolves to the entity",
                            synonym.normalized_text
                        ),
                    });
                }
            }
        }
        if let Some(canonical) = &changes.canonical {
            self.set_canonical(tenant, &entity_id, canonical, actor).await?;
        }
        if let Some(type_id) = &changes.assigned_type_id {
            self.assign_type(tenant, &entity_id, type_id, actor).await?;
        }
        if let Some(status) = &changes.status {
            let rows = self.set_status(tenant, std::slice::from_ref(&entity_id), None, status, actor).await?;
            if let Some(row) = rows.first() {
                if row.get("allowed").and_then(Value::as_bool) != Some(true) {
                    let before = str_col(row, "before");
                    return Err(ServiceError::Conflict(format!(
                        "entity {entity_id} is {before}; only extracted or proposed entities can become {status}"
                    )));
                }
            }
        }
        let entity = self.get_entity(tenant, &entity_id, None).await?;
        Ok(EntityUpdate { entity, synonyms_not_added: not_added })
    }

    async fn set_status(
        &self,
        tenant: &Tenant,
        ids: &[String],
        bucket: Option<&str>,
        status: &str,
        actor: &Actor,
    ) -> ServiceResult<Vec<Row>> {
        let rows = self
            .run(
                tenant,
                queries::ENTITY_SET_STATUS,
                params! {
                    "ids" => ids, "bucketID" => bucket, "status" => status,
                    "userID" => actor.user_id, "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        let changes: Vec<StatusChange> = rows
            .iter()
            .filter(|row| row.get("allowed").and_then(Value::as_bool) == Some(true))
            .map(|row| StatusChange {
                entity_id: str_col(row, "entityID"),
                type_name: row.get("typeName").and_then(Value::as_str).map(String::from),
                prior_status: row.get("before").and_then(Value::as_str).map(String::from),
                new_status: status.to_string(),
                actor_user_id: actor.user_id.clone(),
                reason: None,
            })
            .collect();
        let history = changes.iter().map(|change| status_entry(change, actor)).collect();
        self.audit(tenant, history).await;
        self.emit(tenant, changes).await;
        Ok(rows)
    }

    /// Approves or rejects many entities; each row says what happened to it.
    pub async fn bulk_validate(
        &self,
        tenant: &Tenant,
        ids: &[String],
        status: &str,
        bucket: Option<&str>,
        actor: &Actor,
    ) -> ServiceResult<ValidateResult> {
        check_terminal_status(status)?;
        crate::text::check_each("entityIDs", ids)?;
        crate::text::check_opt("bucket", bucket)?;
        if ids.is_empty() || ids.len() > BULK_VALIDATE_MAX {
            return Err(ServiceError::invalid_field(
                "entityIDs",
                format!("must hold between 1 and {BULK_VALIDATE_MAX} IDs"),
            ));
        }
        let rows = self.set_status(tenant, ids, bucket, status, actor).await?;
        let mut summary = ValidateSummary::default();
        let results = rows
            .iter()
            .map(|row| {
                let entity_id = str_col(row, "entityID");
                let (outcome, reason) = if row.get("found").and_then(Value::as_bool) != Some(true) {
                    ("skipped", Some("not found".to_string()))
                } else if row.get("allowed").and_then(Value::as_bool) == Some(true) {
                    ("validated", None)
                } else if let Some(survivor) = row.get("mergedInto").and_then(Value::as_str) {
                    ("rejected-row", Some(format!("merged into {survivor}; validate that entity instead")))
                } else {
                    (
                        "rejected-row",
                        Some(format!(
                            "already {}; only extracted or proposed entities move",
                            str_col(row, "before")
                        )),
                    )
                };
                match outcome {
                    "validated" => summary.validated += 1,
                    "skipped" => summary.skipped += 1,
                    _ => summary.rejected_row += 1,
                }
                ValidateRow { entity_id, outcome, reason }
            })
            .collect();
        Ok(ValidateResult { results, summary })
    }

    /// Attaches a surface form; idempotent for the entity's own synonyms. 409 when the name
    /// already belongs to another entity, and when it normalises to a canonical name of this
    /// entity (its own, or one of an entity merged into it; 'Initech LLC' on 'Initech'): that
    /// name is no synonym, so there is none to return, and it could not be removed.
    pub async fn add_synonym(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        text: &str,
        source: &str,
        locale: Option<&str>,
        actor: &Actor,
    ) -> ServiceResult<Synonym> {
        let entity = self.get_entity(tenant, entity_id, None).await?;
        let (synonym, new) = self.attach_name(tenant, &entity, text, source, locale).await?;
        if new {
            self.audit(tenant, vec![synonym_entry(&entity.entity_id, "synonym_added", &synonym, actor)])
                .await;
        }
        if synonym.source == CANONICAL_SOURCE {
            return Err(ServiceError::Conflict(format!(
                "{:?} normalises to {:?}, a canonical name of entity {} (its own or that of an \
                 entity merged into it), not a synonym; it already resolves to the entity, and a \
                 new canonical name is set with PATCH /v3/entities/{{id}} {{\"canonical\"}}",
                text.trim(),
                synonym.normalized_text,
                entity.entity_id
            )));
        }
        Ok(synonym)
    }

    /// Gives the entity a name: a new key, or the entity's own key of that normalised name as it
    /// is (a synonym or a canonical name); 409 when the name already belongs to another entity.
    /// `true` with a key made now.
    async fn attach_name(
        &self,
        tenant: &Tenant,
        entity: &Entity,
        text: &str,
        source: &str,
        locale: Option<&str>,
    ) -> ServiceResult<(Synonym, bool)> {
        if !SYNONYM_SOURCES.contains(&source) {
            return Err(ServiceError::invalid_field(
                "source",
                "must be extracted, customer_defined or sme_approved",
            ));
        }
        crate::text::check_opt("locale", locale)?;
        let text = text.trim();
        let normalized = normalized_name("text", text)?;
        let key = resolution_key(tenant, &entity.bucket_id, &entity.type_name, &normalized);
        let key_id = ids::new_id("esn");
        let rows = self
            .run(
                tenant,
                queries::ENTITY_ADD_KEY,
                params! {
                    "entityID" => entity.entity_id, "key" => key, "keyID" => key_id,
                    "text" => text, "normalized" => normalized, "source" => source, "locale" => locale,
                    "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        let row =
            rows.into_iter().next().ok_or_else(|| ServiceError::not_found("entity", &entity.entity_id))?;
        let owner = str_col(&row, "entityID");
        if owner != entity.entity_id {
            return Err(ServiceError::Conflict(format!(
                "{text:?} already names entity {owner}; merge the two entities instead"
            )));
        }
        let synonym: Synonym = decode(row)?;
        let new = synonym.synonym_id == key_id;
        Ok((synonym, new))
    }

    /// The entity's synonyms with their IDs and sources, oldest first: at most
    /// [`SYNONYMS_LISTED`] (an entity with more is rare).
    /// A canonical name is no synonym and is left out. A merged-away ID lists its survivor's.
    pub async fn list_synonyms(&self, tenant: &Tenant, entity_id: &str) -> ServiceResult<Vec<Synonym>> {
        let entity_id = self.resolve_entity(tenant, entity_id, None).await?.0;
        let rows = self
            .run(
                tenant,
                queries::ENTITY_SYNONYMS,
                params! { "entityID" => entity_id, "limit" => SYNONYMS_LISTED },
            )
            .await?;
        rows.into_iter().map(decode).collect()
    }

    /// The synonyms of each live entity of `ids` as [`Self::list_synonyms`] lists them (the
    /// first `limit` of each, oldest first), in one statement: GraphQL asks for a page of
    /// entities' synonyms at once. Every ID has an entry, empty when it has none.
    pub async fn synonyms_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        limit: u32,
    ) -> ServiceResult<HashMap<String, Vec<Synonym>>> {
        let mut found: HashMap<String, Vec<Synonym>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if ids.is_empty() {
            return Ok(found);
        }
        let params = params! { "ids" => ids, "limit" => i64::from(limit) };
        for row in self.run(tenant, queries::ENTITY_SYNONYMS_BATCH, params).await? {
            let entity_id = str_col(&row, "entityID");
            let synonym: Synonym = decode(row)?;
            if let Some(list) = found.get_mut(&entity_id) {
                list.push(synonym);
            }
        }
        // Each entity's rows come in the order the statement collected them (oldest first).
        Ok(found)
    }

    /// Removes a customer_defined or sme_approved synonym; extracted ones and the canonical
    /// name cannot be removed (409).
    pub async fn remove_synonym(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        synonym_id: &str,
        actor: &Actor,
    ) -> ServiceResult<()> {
        let entity_id = self.resolve_entity(tenant, entity_id, None).await?.0;
        let rows = self
            .run(
                tenant,
                queries::ENTITY_REMOVE_KEY,
                params! { "entityID" => entity_id, "synonymID" => synonym_id, "now" => ids::now_rfc3339() },
            )
            .await?;
        if let Some(row) = rows.first() {
            let details = json!({ "synonymID": synonym_id, "text": str_col(row, "text") });
            self.audit(tenant, vec![audit::entry(&entity_id, "synonym_removed", actor, details)]).await;
            return Ok(());
        }
        let existing = self
            .run(
                tenant,
                queries::ENTITY_KEY_GET,
                params! { "entityID" => entity_id, "synonymID" => synonym_id },
            )
            .await?;
        match existing.first().map(|row| str_col(row, "source")) {
            None => Err(ServiceError::not_found("synonym", synonym_id)),
            Some(source) if source == CANONICAL_SOURCE => Err(ServiceError::Conflict(
                "that synonym is the canonical name; set another canonical first".into(),
            )),
            Some(source) => Err(ServiceError::Conflict(format!(
                "{source} synonyms belong to the resolver and cannot be removed"
            ))),
        }
    }

    /// Makes a name (attached first if new) the canonical one; the former canonical name
    /// stays as a customer_defined synonym.
    async fn set_canonical(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        canonical: &str,
        actor: &Actor,
    ) -> ServiceResult<()> {
        let entity = self.get_entity(tenant, entity_id, None).await?;
        let former = normalized_name("canonical", &entity.canonical)?;
        let (synonym, _) = self.attach_name(tenant, &entity, canonical, "customer_defined", None).await?;
        let key = |normalized: &str| resolution_key(tenant, &entity.bucket_id, &entity.type_name, normalized);
        self.run(
            tenant,
            queries::ENTITY_SET_CANONICAL,
            params! {
                "entityID" => entity_id, "key" => key(&synonym.normalized_text), "formerKey" => key(&former),
                "now" => ids::now_rfc3339(),
            },
        )
        .await?;
        let details = json!({ "from": entity.canonical, "to": synonym.text });
        self.audit(tenant, vec![audit::entry(entity_id, "canonical_changed", actor, details)]).await;
        Ok(())
    }

    async fn assign_type(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        type_id: &str,
        actor: &Actor,
    ) -> ServiceResult<()> {
        let entity = self.get_entity(tenant, entity_id, None).await?;
        let (type_id, effective_name) = if type_id.is_empty() {
            (None, entity.inferred_type.clone())
        } else {
            let entity_type = self.get_entity_type(tenant, type_id).await.map_err(|err| match err {
                ServiceError::NotFound { .. } => ServiceError::not_found("entity type", type_id),
                other => other,
            })?;
            (Some(entity_type.type_id), entity_type.name)
        };
        let prefix = key_prefix(tenant, &entity.bucket_id, &effective_name);
        let result = self
            .run(
                tenant,
                queries::ENTITY_ASSIGN_TYPE,
                params! { "entityID" => entity_id, "typeID" => &type_id, "keyPrefix" => prefix, "now" => ids::now_rfc3339() },
            )
            .await;
        match result {
            Err(ServiceError::Internal(err)) if super::buckets::is_constraint(&err) => Err(ServiceError::Conflict(
                format!("another entity of type {effective_name:?} already has one of this entity's names; merge them instead"),
            )),
            Err(other) => Err(other),
            Ok(_) => {
                let details = json!({ "typeID": type_id, "type": effective_name, "from": entity.type_name });
                self.audit(tenant, vec![audit::entry(entity_id, "type_changed", actor, details)]).await;
                Ok(())
            }
        }
    }
}

/// The timeline entry of a status change.
pub(super) fn status_entry(change: &StatusChange, actor: &Actor) -> NewAuditEntry {
    let details = json!({ "from": change.prior_status, "to": change.new_status, "reason": change.reason });
    audit::entry(&change.entity_id, "status_changed", actor, details)
}

fn synonym_entry(entity_id: &str, kind: &'static str, synonym: &Synonym, actor: &Actor) -> NewAuditEntry {
    let details = json!({ "synonymID": synonym.synonym_id, "text": synonym.text, "source": synonym.source });
    audit::entry(entity_id, kind, actor, details)
}
