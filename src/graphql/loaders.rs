//! Per-request DataLoaders: every entity of a page asks for its mentions or relations, and
//! the loader answers them all with one batched service call.

use super::gql_error;
use crate::access::state::AppState;
use crate::graph::entities::{Entity, Mention};
use crate::graph::merge_history::MERGES_PAGE;
use crate::graph::relations::{Direction, EntityRelations, GraphNode, RelationsQuery};
use crate::graph::{GraphService, Tenant};
use async_graphql::dataloader::{DataLoader, Loader};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The loaders of one request (they hold the caller's tenant).
pub struct Loaders {
    pub entities: DataLoader<EntityLoader>,
    pub mentions: DataLoader<MentionsLoader>,
    pub relations: DataLoader<RelationsLoader>,
    pub neighbors: DataLoader<NeighborsLoader>,
    pub merges: DataLoader<MergesLoader>,
    pub synonyms: DataLoader<SynonymsLoader>,
    pub timelines: DataLoader<TimelinesLoader>,
    pub entity_types: DataLoader<EntityTypeLoader>,
    pub type_children: DataLoader<TypeChildrenLoader>,
    /// Child types this request has listed (see [`CHILD_TYPES_LISTED`]).
    child_types_listed: AtomicUsize,
}

/// Child types one GraphQL request lists at most, every `children` field together.
pub const CHILD_TYPES_LISTED: usize = 10_000;

impl Loaders {
    /// Counts `n` more child types listed; an error (code 400) past [`CHILD_TYPES_LISTED`].
    pub fn list_child_types(&self, n: usize) -> async_graphql::Result<()> {
        let listed = self.child_types_listed.fetch_add(n, Ordering::Relaxed) + n;
        if listed > CHILD_TYPES_LISTED {
            return Err(gql_error(crate::error::ServiceError::invalid_field(
                "children",
                format!("a request lists at most {CHILD_TYPES_LISTED} child types, every level together; walk fewer levels"),
            )));
        }
        Ok(())
    }

    pub fn new(state: &AppState, tenant: &Tenant) -> Self {
        let scope = || Scope { graph: state.graph.clone(), tenant: tenant.clone() };
        Self {
            entities: DataLoader::new(EntityLoader(scope()), tokio::spawn),
            mentions: DataLoader::new(MentionsLoader(scope()), tokio::spawn),
            relations: DataLoader::new(RelationsLoader(scope()), tokio::spawn),
            neighbors: DataLoader::new(NeighborsLoader(scope()), tokio::spawn),
            merges: DataLoader::new(MergesLoader(scope()), tokio::spawn),
            synonyms: DataLoader::new(SynonymsLoader(scope()), tokio::spawn),
            timelines: DataLoader::new(TimelinesLoader(scope()), tokio::spawn),
            entity_types: DataLoader::new(EntityTypeLoader(scope()), tokio::spawn),
            type_children: DataLoader::new(TypeChildrenLoader(scope()), tokio::spawn),
            child_types_listed: AtomicUsize::new(0),
        }
    }
}

pub struct Scope {
    graph: Arc<GraphService>,
    tenant: Tenant,
}

/// Live entity records by ID ([`GraphService::entity_details`] takes a list).
pub struct EntityLoader(Scope);

impl Loader<String> for EntityLoader {
    type Value = Entity;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Entity>, Self::Error> {
        let found = self.0.graph.entity_details(&self.0.tenant, keys).await.map_err(gql_error)?;
        Ok(found.into_iter().map(|e| (e.entity_id.clone(), e)).collect())
    }
}

/// The first `limit` items of one entity's list (its mentions, synonyms, timeline); keys with
/// the same limit batch together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FirstOf {
    pub entity_id: String,
    pub limit: u32,
}

/// Loads `keys` one limit at a time (`load(ids, limit)`: one statement for each limit
/// asked), each answer keyed back by its entity and that limit.
async fn first_of_each<T, I, Fut>(
    keys: &[FirstOf],
    load: impl Fn(Vec<String>, u32) -> Fut,
) -> Result<HashMap<FirstOf, T>, async_graphql::Error>
where
    I: IntoIterator<Item = (String, T)>,
    Fut: std::future::Future<Output = crate::error::ServiceResult<I>>,
{
    let mut groups: HashMap<u32, Vec<String>> = HashMap::new();
    for key in keys {
        groups.entry(key.limit).or_default().push(key.entity_id.clone());
    }
    let mut out = HashMap::new();
    for (limit, ids) in groups {
        let found = load(ids, limit).await.map_err(gql_error)?;
        out.extend(found.into_iter().map(|(entity_id, value)| (FirstOf { entity_id, limit }, value)));
    }
    Ok(out)
}

/// The first mentions of each entity ([`GraphService::mentions_of_many`]).
pub struct MentionsLoader(Scope);

impl Loader<FirstOf> for MentionsLoader {
    type Value = Vec<Mention>;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[FirstOf]) -> Result<HashMap<FirstOf, Vec<Mention>>, Self::Error> {
        let Scope { graph, tenant } = &self.0;
        first_of_each(keys, |ids, limit| async move { graph.mentions_of_many(tenant, &ids, limit).await })
            .await
    }
}

/// One entity's relations page request; keys with the same arguments batch together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RelationsKey {
    pub entity_id: String,
    pub direction: Direction,
    pub relation_type: Option<String>,
    pub after: Option<String>,
    pub bucket: Option<String>,
    pub first: u32,
}

/// A page of each entity's relations ([`GraphService::relations_of_many`]).
pub struct RelationsLoader(Scope);

type RelationsGroup = (Direction, Option<String>, Option<String>, Option<String>, u32);

impl Loader<RelationsKey> for RelationsLoader {
    type Value = EntityRelations;
    type Error = async_graphql::Error;

    async fn load(
        &self,
        keys: &[RelationsKey],
    ) -> Result<HashMap<RelationsKey, EntityRelations>, Self::Error> {
        let mut groups: HashMap<RelationsGroup, Vec<String>> = HashMap::new();
        for key in keys {
            let group =
                (key.direction, key.relation_type.clone(), key.after.clone(), key.bucket.clone(), key.first);
            groups.entry(group).or_default().push(key.entity_id.clone());
        }
        let mut out = HashMap::new();
        for ((direction, relation_type, after, bucket, first), ids) in groups {
            let query = RelationsQuery {
                direction,
                relation_type: relation_type.clone(),
                cursor: after.clone(),
                bucket: bucket.clone(),
                limit: first,
            };
            let pages =
                self.0.graph.relations_of_many(&self.0.tenant, &ids, query).await.map_err(gql_error)?;
            for (entity_id, page) in pages {
                let key = RelationsKey {
                    entity_id,
                    direction,
                    relation_type: relation_type.clone(),
                    after: after.clone(),
                    bucket: bucket.clone(),
                    first,
                };
                out.insert(key, page);
            }
        }
        Ok(out)
    }
}

/// One entity's neighbourhood request; keys with the same depth and type batch together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NeighborsKey {
    pub entity_id: String,
    pub depth: u32,
    pub relation_type: Option<String>,
    /// Most neighbours per entity.
    pub limit: u32,
}

/// The neighbourhoods of many entities ([`GraphService::neighbors_of_many`]).
pub struct NeighborsLoader(Scope);

impl Loader<NeighborsKey> for NeighborsLoader {
    type Value = Arc<Vec<GraphNode>>;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[NeighborsKey]) -> Result<HashMap<NeighborsKey, Self::Value>, Self::Error> {
        let mut groups: HashMap<(u32, Option<String>, u32), Vec<String>> = HashMap::new();
        for key in keys {
            groups
                .entry((key.depth, key.relation_type.clone(), key.limit))
                .or_default()
                .push(key.entity_id.clone());
        }
        let mut out = HashMap::new();
        for ((depth, relation_type, limit), ids) in groups {
            let found = self
                .0
                .graph
                .neighbors_of_many(&self.0.tenant, &ids, depth, relation_type.as_deref(), limit as usize)
                .await
                .map_err(gql_error)?;
            for (entity_id, nodes) in found {
                let key = NeighborsKey { entity_id, depth, relation_type: relation_type.clone(), limit };
                out.insert(key, Arc::new(nodes));
            }
        }
        Ok(out)
    }
}

/// The newest merges of each entity, [`MERGES_PAGE`] at most
/// ([`GraphService::merge_history_of_many`]).
pub struct MergesLoader(Scope);

impl Loader<String> for MergesLoader {
    type Value = Vec<crate::graph::merges::MergeRecord>;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let shown = MERGES_PAGE as usize;
        let mut found =
            self.0.graph.merge_history_of_many(&self.0.tenant, keys, shown).await.map_err(gql_error)?;
        found.values_mut().for_each(|merges| merges.truncate(shown));
        Ok(found)
    }
}

/// The synonyms of each entity ([`GraphService::synonyms_of_many`]).
pub struct SynonymsLoader(Scope);

impl Loader<FirstOf> for SynonymsLoader {
    type Value = Vec<crate::graph::entities::Synonym>;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[FirstOf]) -> Result<HashMap<FirstOf, Self::Value>, Self::Error> {
        let Scope { graph, tenant } = &self.0;
        first_of_each(keys, |ids, limit| async move { graph.synonyms_of_many(tenant, &ids, limit).await })
            .await
    }
}

/// The first page of each entity's timeline ([`GraphService::timelines_of_many`]).
pub struct TimelinesLoader(Scope);

impl Loader<FirstOf> for TimelinesLoader {
    type Value = crate::graph::timeline::TimelinePage;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[FirstOf]) -> Result<HashMap<FirstOf, Self::Value>, Self::Error> {
        let Scope { graph, tenant } = &self.0;
        first_of_each(keys, |ids, limit| async move {
            graph.timelines_of_many(tenant, &ids, limit as usize).await
        })
        .await
    }
}

/// Entity types by ID ([`GraphService::entity_types_by_ids`]), for `parent`.
pub struct EntityTypeLoader(Scope);

impl Loader<String> for EntityTypeLoader {
    type Value = crate::graph::entity_types::EntityType;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let found = self.0.graph.entity_types_by_ids(&self.0.tenant, keys).await.map_err(gql_error)?;
        Ok(found.into_iter().map(|t| (t.type_id.clone(), t)).collect())
    }
}

/// Each type's direct children ([`GraphService::entity_type_children`]).
pub struct TypeChildrenLoader(Scope);

impl Loader<String> for TypeChildrenLoader {
    type Value = Vec<crate::graph::entity_types::EntityType>;
    type Error = async_graphql::Error;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        self.0.graph.entity_type_children(&self.0.tenant, keys).await.map_err(gql_error)
    }
}
