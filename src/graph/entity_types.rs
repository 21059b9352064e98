//! Entity types: the tenant's taxonomy. Names are unique among live types and immutable;
//! `parentTypeID` forms a hierarchy without cycles; deletes are soft and refused while a
//! live child type exists.

use super::buckets::is_constraint;
use super::{counted, decode, int_column, queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::pagination::PageRequest;
use crate::params;
use crate::text;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Child types one read of a type's children shows (GraphQL `EntityType.children`); the REST
/// list with `parentTypeID` pages them all.
pub const CHILDREN_SHOWN: usize = 200;

/// Characters an entity type name may hold.
pub const NAME_MAX: usize = 100;
const DESCRIPTION_MAX: usize = 2_000;
/// Largest `attributeSchema`, serialized.
const ATTRIBUTE_SCHEMA_MAX_BYTES: usize = 64 * 1024;

/// A customer-defined type of the knowledge-graph taxonomy.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EntityType {
    /// Stable identifier (`ety_…`).
    #[serde(rename = "typeID")]
    pub type_id: String,
    /// Unique among the tenant's live types; immutable.
    pub name: String,
    pub description: String,
    /// The parent type's ID, or an empty string for a top-level type.
    #[serde(rename = "parentTypeID")]
    pub parent_type_id: String,
    /// Per-type structured attribute metadata (an object), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute_schema: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
}

/// A page of entity types and how many match in all.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityTypePage {
    pub entity_types: Vec<EntityType>,
    pub total_count: i64,
}

/// The stored form: `attributeSchema` is kept as JSON text (graph properties hold no maps).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredEntityType {
    #[serde(rename = "typeID")]
    type_id: String,
    name: String,
    description: Option<String>,
    #[serde(rename = "parentTypeID")]
    parent_type_id: String,
    attribute_schema: Option<String>,
    created_at: String,
    updated_at: String,
}

impl TryFrom<StoredEntityType> for EntityType {
    type Error = ServiceError;
    fn try_from(stored: StoredEntityType) -> ServiceResult<Self> {
        let attribute_schema =
            stored.attribute_schema.map(|text| serde_json::from_str(&text)).transpose().map_err(|err| {
                ServiceError::Internal(anyhow::anyhow!("stored attributeSchema is not JSON: {err}"))
            })?;
        Ok(EntityType {
            type_id: stored.type_id,
            name: stored.name,
            description: stored.description.unwrap_or_default(),
            parent_type_id: stored.parent_type_id,
            attribute_schema,
            created_at: stored.created_at,
            updated_at: stored.updated_at,
        })
    }
}

pub struct NewEntityType {
    pub name: String,
    pub description: Option<String>,
    pub parent_type_id: Option<String>,
    pub attribute_schema: Option<Value>,
}

/// A PATCH: each `Some` is a change. `parent_type_id: Some(None)` clears the parent.
pub struct EntityTypeChanges {
    pub description: Option<String>,
    pub parent_type_id: Option<Option<String>>,
    pub attribute_schema: Option<Value>,
}

fn schema_text(schema: Option<&Value>) -> ServiceResult<Option<String>> {
    let Some(schema) = schema else {
        return Ok(None);
    };
    if !schema.is_object() {
        return Err(ServiceError::invalid_field("attributeSchema", "must be a JSON object"));
    }
    let text = schema.to_string();
    if text.len() > ATTRIBUTE_SCHEMA_MAX_BYTES {
        return Err(ServiceError::invalid_field(
            "attributeSchema",
            format!("must be at most {ATTRIBUTE_SCHEMA_MAX_BYTES} bytes as JSON"),
        ));
    }
    Ok(Some(text))
}

fn check_parent_id(id: &str) -> ServiceResult<()> {
    if ids::has_prefix(id, "ety") {
        Ok(())
    } else {
        Err(ServiceError::invalid_field("parentTypeID", "must be an entity type ID (ety_…)"))
    }
}

impl GraphService {
    pub async fn create_entity_type(&self, tenant: &Tenant, new: NewEntityType) -> ServiceResult<EntityType> {
        text::check_len("name", &new.name, NAME_MAX, true)?;
        let description = new.description.unwrap_or_default();
        text::check_len("description", &description, DESCRIPTION_MAX, false)?;
        let schema = schema_text(new.attribute_schema.as_ref())?;
        let parent = new.parent_type_id.filter(|id| !id.is_empty());
        if let Some(parent) = &parent {
            check_parent_id(parent)?;
        }
        let id = ids::new_id("ety");
        let rows = self
            .run(
                tenant,
                queries::ENTITY_TYPE_CREATE,
                params! {
                    "id" => id,
                    "name" => new.name,
                    "description" => description,
                    "attributeSchema" => schema,
                    "parentTypeID" => parent,
                    "liveNameKey" => tenant.scoped_key(&new.name),
                    "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        match rows.first().and_then(|row| row.get("typeID")).and_then(Value::as_str) {
            Some(created) if created == id => self.get_entity_type(tenant, &id).await,
            Some(_) => Err(ServiceError::Conflict(format!(
                "an entity type named {:?} already exists; names are unique",
                new.name
            ))),
            None => Err(ServiceError::not_found("parent entity type", parent.unwrap_or_default())),
        }
    }

    /// The live types of these IDs (those that exist), in one statement.
    pub async fn entity_types_by_ids(
        &self,
        tenant: &Tenant,
        ids: &[String],
    ) -> ServiceResult<Vec<EntityType>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(tenant, queries::ENTITY_TYPES_BY_IDS, params! { "ids" => ids }).await?;
        rows.into_iter().map(|row| decode::<StoredEntityType>(row)?.try_into()).collect()
    }

    /// The direct children of each of these types, the first [`CHILDREN_SHOWN`] of each in
    /// typeID order, in one statement.
    pub async fn entity_type_children(
        &self,
        tenant: &Tenant,
        ids: &[String],
    ) -> ServiceResult<std::collections::HashMap<String, Vec<EntityType>>> {
        let mut found: std::collections::HashMap<String, Vec<EntityType>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if ids.is_empty() {
            return Ok(found);
        }
        let limit = CHILDREN_SHOWN as i64;
        let rows = self
            .run(tenant, queries::ENTITY_TYPE_CHILDREN, params! { "ids" => ids, "limit" => limit })
            .await?;
        for row in rows {
            let child: EntityType = decode::<StoredEntityType>(row)?.try_into()?;
            if let Some(list) = found.get_mut(&child.parent_type_id) {
                list.push(child);
            }
        }
        Ok(found)
    }

    pub async fn get_entity_type(&self, tenant: &Tenant, id: &str) -> ServiceResult<EntityType> {
        let rows = self.run(tenant, queries::ENTITY_TYPE_GET, params! { "id" => id }).await?;
        match rows.into_iter().next() {
            Some(row) => decode::<StoredEntityType>(row)?.try_into(),
            None => Err(ServiceError::not_found("entity type", id)),
        }
    }

    pub async fn list_entity_types(
        &self,
        tenant: &Tenant,
        page: &PageRequest,
        parent_type_id: Option<&str>,
    ) -> ServiceResult<EntityTypePage> {
        let query =
            if page.backwards() { queries::ENTITY_TYPE_LIST_BEFORE } else { queries::ENTITY_TYPE_LIST_AFTER };
        let rows = self
            .run(
                tenant,
                query,
                params! {
                    "parentTypeID" => parent_type_id,
                    "startingAfter" => page.starting_after(),
                    "endingBefore" => page.ending_before(),
                    "limit" => page.limit,
                },
            )
            .await?;
        let mut entity_types = rows
            .into_iter()
            .map(|row| decode::<StoredEntityType>(row)?.try_into())
            .collect::<ServiceResult<Vec<EntityType>>>()?;
        if page.backwards() {
            entity_types.reverse();
        }
        let total = self
            .run(tenant, queries::ENTITY_TYPE_COUNT, params! { "parentTypeID" => parent_type_id })
            .await?;
        Ok(EntityTypePage { entity_types, total_count: int_column(&total, "total") })
    }

    pub async fn update_entity_type(
        &self,
        tenant: &Tenant,
        id: &str,
        changes: EntityTypeChanges,
    ) -> ServiceResult<EntityType> {
        if let Some(description) = &changes.description {
            text::check_len("description", description, DESCRIPTION_MAX, false)?;
        }
        let schema = schema_text(changes.attribute_schema.as_ref())?;
        // Existence first, so a missing type is a 404 whatever else the body says.
        self.get_entity_type(tenant, id).await?;
        let new_parent = changes.parent_type_id.clone().map(|p| p.filter(|id| !id.is_empty()));
        if let Some(Some(parent)) = &new_parent {
            check_parent_id(parent)?;
            self.check_parent(tenant, id, parent).await?;
        }
        let rows = self
            .run(
                tenant,
                queries::ENTITY_TYPE_UPDATE,
                params! {
                    "id" => id,
                    "description" => changes.description,
                    "attributeSchema" => schema,
                    "setParent" => new_parent.is_some(),
                    "parentTypeID" => new_parent.flatten(),
                    "now" => ids::now_rfc3339(),
                },
            )
            .await;
        match rows {
            Err(ServiceError::Internal(err)) if is_constraint(&err) => {
                Err(ServiceError::ConcurrentChange("the entity type changed concurrently; retry".into()))
            }
            Err(err) => Err(err),
            Ok(rows) if rows.is_empty() => Err(ServiceError::not_found("entity type", id)),
            Ok(_) => self.get_entity_type(tenant, id).await,
        }
    }

    /// A parent must exist, be live, and not be the type itself or one of its descendants.
    async fn check_parent(&self, tenant: &Tenant, id: &str, parent: &str) -> ServiceResult<()> {
        self.get_entity_type(tenant, parent).await.map_err(|err| match err {
            ServiceError::NotFound { .. } => ServiceError::not_found("parent entity type", parent),
            other => other,
        })?;
        let ancestors = self.run(tenant, queries::ENTITY_TYPE_ANCESTORS, params! { "id" => parent }).await?;
        let cycle =
            parent == id || ancestors.iter().any(|row| row.get("typeID").and_then(Value::as_str) == Some(id));
        if cycle {
            return Err(ServiceError::Unprocessable {
                message: format!(
                    "parentTypeID {parent} would make a cycle: it is {id} or one of its descendants"
                ),
                details: Some(serde_json::json!({ "field": "parentTypeID", "error": "cycle" })),
            });
        }
        Ok(())
    }

    /// Soft-deletes a type; refused (409) while a live child type or live entity uses it.
    pub async fn delete_entity_type(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        let rows = self
            .run(tenant, queries::ENTITY_TYPE_DELETE, params! { "id" => id, "now" => ids::now_rfc3339() })
            .await?;
        if !rows.is_empty() {
            return Ok(());
        }
        let blockers = self.delete_blockers(tenant, queries::ENTITY_TYPE_DELETE_BLOCKERS, id).await?;
        if blockers.is_empty() {
            return Err(ServiceError::not_found("entity type", id));
        }
        Err(ServiceError::Conflict(format!(
            "entity type {id} still has {} live child types and {} live entities assigned; \
             delete or re-parent the children and re-assign the entities first",
            int_column(&blockers, "liveChildren"),
            counted(int_column(&blockers, "liveEntities"))
        )))
    }
}
