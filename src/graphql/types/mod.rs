//! GraphQL output types. Field names are the REST JSON names, so a GraphQL answer reads like
//! the REST body for the same data; doc comments become the SDL's descriptions. Curation's
//! types (suggestions, synonyms, merges, reviewers, validation) are in [`curation`].

mod curation;

pub use curation::*;

use super::loaders::{FirstOf, RelationsKey};
use super::{request, OrGql};
use crate::graph::buckets::Bucket as BucketRecord;
use crate::graph::entities::{Entity as EntityRecord, Mention as MentionRecord, SYNONYMS_LISTED};
use crate::graph::entity_types::EntityType as EntityTypeRecord;
use crate::graph::relations::{
    Direction, Edge as EdgeRecord, GraphEdge as GraphEdgeRecord, GraphNode as GraphNodeRecord,
    RelatedEntity as RelatedRecord,
};
use crate::graph::timeline::MAX_TIMELINE_PAGE;
use async_graphql::connection::{Connection, Edge};
use async_graphql::{ComplexObject, Context, Enum, Json, Object, SimpleObject, ID};
use serde_json::Value;

/// Deepest `neighbors` walk.
pub const MAX_NEIGHBOR_DEPTH: i32 = 3;

/// What a list of `size` items costs: its selection once per item, plus the field itself
/// (sizes past the page maximum are refused when the field runs; here they only cost more).
pub fn list_cost(size: i32, child_complexity: usize) -> usize {
    (size.max(1) as usize).saturating_mul(child_complexity).saturating_add(1)
}

/// Which edges of an entity to list.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum RelationDirection {
    /// Edges pointing at the entity.
    Inbound,
    /// Edges leaving the entity.
    Outbound,
    /// Both (a self-loop is listed once, as outbound).
    Both,
}

impl From<RelationDirection> for Direction {
    fn from(direction: RelationDirection) -> Self {
        match direction {
            RelationDirection::Inbound => Direction::Inbound,
            RelationDirection::Outbound => Direction::Outbound,
            RelationDirection::Both => Direction::Both,
        }
    }
}

/// Checks a page size (`first`) against 1..=max.
pub fn page_size(first: i32, max: u32) -> async_graphql::Result<u32> {
    if first >= 1 && first as u32 <= max {
        Ok(first as u32)
    } else {
        Err(crate::error::ServiceError::invalid_field(
            "first",
            format!("must be between 1 and {max} (got {first})"),
        ))
        .gql()
    }
}

/// A canonical thing of the knowledge graph. A merged-away ID resolves to its survivor.
pub struct Entity(pub EntityRecord);

/// A canonical thing of the knowledge graph. A merged-away ID resolves to its survivor.
#[Object]
impl Entity {
    /// Stable identifier (`ent_…`).
    #[graphql(name = "entityID")]
    async fn entity_id(&self) -> ID {
        ID(self.0.entity_id.clone())
    }

    async fn canonical(&self) -> &str {
        &self.0.canonical
    }

    /// Effective type name: the assigned type's, else the inferred one.
    #[graphql(name = "type")]
    async fn type_name(&self) -> &str {
        &self.0.type_name
    }

    /// Assigned entity type (`ety_…`), when one is.
    #[graphql(name = "typeID")]
    async fn type_id(&self) -> Option<ID> {
        self.0.type_id.clone().map(ID)
    }

    async fn description(&self) -> &str {
        &self.0.description
    }

    async fn mention_count(&self) -> i64 {
        self.0.mention_count
    }

    /// Every spelling that resolves to this entity, sorted.
    async fn surface_forms(&self) -> &[String] {
        &self.0.surface_forms
    }

    /// `extracted`, `proposed`, `approved`, `rejected` or `merged`.
    async fn status(&self) -> &str {
        &self.0.status
    }

    async fn created_at(&self) -> &str {
        &self.0.created_at
    }

    async fn updated_at(&self) -> &str {
        &self.0.updated_at
    }

    async fn validated_at(&self) -> Option<&str> {
        self.0.validated_at.as_deref()
    }

    #[graphql(name = "validatedByUserID")]
    async fn validated_by_user_id(&self) -> Option<&str> {
        self.0.validated_by_user_id.as_deref()
    }

    /// The first two mentions (as the review queue shows them).
    async fn preview_mentions(&self) -> Vec<Mention> {
        self.0.preview_mentions.iter().cloned().map(Mention::from).collect()
    }

    #[graphql(name = "bucketID")]
    async fn bucket_id(&self) -> ID {
        ID(self.0.bucket_id.clone())
    }

    /// Structured attribute values (a JSON object).
    async fn attributes(&self) -> Json<Value> {
        Json(Value::Object(self.0.attributes.clone()))
    }

    /// The entity's mentions in documents, in mention-ID order (batched across a page).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn mentions(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 50, desc = "At most this many (1..200).")] first: i32,
    ) -> async_graphql::Result<Vec<Mention>> {
        let limit = page_size(first, 200)?;
        let key = FirstOf { entity_id: self.0.entity_id.clone(), limit };
        let found = ctx.data_unchecked::<super::loaders::Loaders>().mentions.load_one(key).await?;
        Ok(found.unwrap_or_default().into_iter().map(Mention::from).collect())
    }

    /// The entity's relation edges in relation-ID order, as `GET /v3/entities/{id}/relations`
    /// pages them (batched across a page of entities).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn relations(
        &self,
        ctx: &Context<'_>,
        #[graphql(default_with = "RelationDirection::Both")] direction: RelationDirection,
        #[graphql(desc = "Exact relation type.")] relation_type: Option<String>,
        #[graphql(default = 50, desc = "Edges per page (1..200).")] first: i32,
        #[graphql(desc = "A relationID cursor: the page after it.")] after: Option<String>,
        #[graphql(desc = "Only edges of this bucket.")] bucket: Option<String>,
    ) -> async_graphql::Result<Connection<String, Relation>> {
        let first = page_size(first, 200)?;
        let key = RelationsKey {
            entity_id: self.0.entity_id.clone(),
            direction: direction.into(),
            relation_type,
            after: after.clone(),
            bucket,
            first,
        };
        let page = ctx.data_unchecked::<super::loaders::Loaders>().relations.load_one(key).await?;
        let page = page.unwrap_or_else(|| crate::graph::relations::EntityRelations {
            inbound: Vec::new(),
            outbound: Vec::new(),
            next_cursor: None,
        });
        let mut edges: Vec<Relation> = page
            .outbound
            .into_iter()
            .map(|e| Relation { edge: e, outbound: true })
            .chain(page.inbound.into_iter().map(|e| Relation { edge: e, outbound: false }))
            .collect();
        edges.sort_by(|a, b| a.edge.relation_id.cmp(&b.edge.relation_id));
        let mut connection = Connection::new(after.is_some(), page.next_cursor.is_some());
        connection.edges.extend(edges.into_iter().map(|r| Edge::new(r.edge.relation_id.clone(), r)));
        Ok(connection)
    }

    /// The merges this entity took part in, newest first, the newest 100
    /// (`GET /v3/entities/{id}/merges` pages them all; batched across a page).
    async fn merges(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Merge>> {
        let merges =
            ctx.data_unchecked::<super::loaders::Loaders>().merges.load_one(self.0.entity_id.clone()).await?;
        Ok(merges.unwrap_or_default().into_iter().map(Merge::from).collect())
    }

    /// The entity's synonyms with their IDs and sources, oldest first, as
    /// `GET /v3/entities/{id}/synonyms` lists them (there the first 500; batched across a page).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn synonyms(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 50, desc = "At most this many (1..500).")] first: i32,
    ) -> async_graphql::Result<Vec<Synonym>> {
        let limit = page_size(first, SYNONYMS_LISTED as u32)?;
        let key = FirstOf { entity_id: self.0.entity_id.clone(), limit };
        let found = ctx.data_unchecked::<super::loaders::Loaders>().synonyms.load_one(key).await?;
        Ok(found.unwrap_or_default().into_iter().map(Synonym::from).collect())
    }

    /// The first page of the entity's audit timeline, newest first, as
    /// `GET /v3/entities/{id}/timeline` gives it (batched across a page); `entityTimeline`
    /// pages on with its `nextCursor`.
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn timeline(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20, desc = "At most this many items (1..200).")] first: i32,
    ) -> async_graphql::Result<super::timeline::TimelinePage> {
        let limit = page_size(first, MAX_TIMELINE_PAGE)?;
        let key = FirstOf { entity_id: self.0.entity_id.clone(), limit };
        let page = ctx.data_unchecked::<super::loaders::Loaders>().timelines.load_one(key).await?;
        Ok(page.map(Into::into).unwrap_or_default())
    }

    /// Entities within `depth` hops (1..3), either direction, nearest first, at most `first`
    /// (batched across a page: one statement per hop).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn neighbors(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 1)] depth: i32,
        #[graphql(desc = "Only walk edges of this relation type.")] relation_type: Option<String>,
        #[graphql(default = 50, desc = "At most this many, nearest first (1..200).")] first: i32,
    ) -> async_graphql::Result<Vec<GraphNode>> {
        let first = page_size(first, crate::graph::relations::MAX_NEIGHBORS as u32)?;
        if !(1..=MAX_NEIGHBOR_DEPTH).contains(&depth) {
            return Err(crate::error::ServiceError::invalid_field(
                "depth",
                format!("must be between 1 and {MAX_NEIGHBOR_DEPTH} (got {depth})"),
            ))
            .gql();
        }
        let key = super::loaders::NeighborsKey {
            entity_id: self.0.entity_id.clone(),
            depth: depth as u32,
            relation_type,
            limit: first,
        };
        let nodes = ctx.data_unchecked::<super::loaders::Loaders>().neighbors.load_one(key).await?;
        Ok(nodes.map(|n| n.iter().cloned().map(GraphNode::from).collect()).unwrap_or_default())
    }
}

/// A mention of an entity in a document.
#[derive(SimpleObject)]
pub struct Mention {
    #[graphql(name = "mentionID")]
    pub mention_id: ID,
    #[graphql(name = "entityID")]
    pub entity_id: ID,
    #[graphql(name = "referenceID")]
    pub reference_id: Option<String>,
    #[graphql(name = "transformationID")]
    pub transformation_id: Option<String>,
    pub page: Option<i64>,
    pub section_label: Option<String>,
    /// The text as it appears in the document.
    pub surface: String,
    pub created_at: String,
}

impl From<MentionRecord> for Mention {
    fn from(m: MentionRecord) -> Self {
        Self {
            mention_id: ID(m.mention_id),
            entity_id: ID(m.entity_id),
            reference_id: m.reference_id,
            transformation_id: m.transformation_id,
            page: m.page,
            section_label: m.section_label,
            surface: m.surface,
            created_at: m.created_at,
        }
    }
}

/// One relation edge seen from an entity.
pub struct Relation {
    edge: EdgeRecord,
    outbound: bool,
}

/// One relation edge seen from an entity.
#[Object]
impl Relation {
    #[graphql(name = "relationID")]
    async fn relation_id(&self) -> ID {
        ID(self.edge.relation_id.clone())
    }

    async fn relation_type(&self) -> &str {
        &self.edge.relation_type
    }

    /// How many times the relation was observed.
    async fn mention_count(&self) -> i64 {
        self.edge.mention_count
    }

    async fn first_seen_at(&self) -> &str {
        &self.edge.first_seen_at
    }

    /// `OUTBOUND` when the entity is the source, else `INBOUND`.
    async fn direction(&self) -> RelationDirection {
        if self.outbound {
            RelationDirection::Outbound
        } else {
            RelationDirection::Inbound
        }
    }

    /// The source, on inbound edges (as REST's `inbound[].sourceEntity`).
    async fn source_entity(&self) -> Option<RelatedEntity> {
        self.edge.source_entity.clone().map(RelatedEntity::from)
    }

    /// The target, on outbound edges (as REST's `outbound[].targetEntity`).
    async fn target_entity(&self) -> Option<RelatedEntity> {
        self.edge.target_entity.clone().map(RelatedEntity::from)
    }

    /// The far end's full record (batched).
    async fn other(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Entity>> {
        let far = self.edge.target_entity.as_ref().or(self.edge.source_entity.as_ref());
        let Some(far) = far else { return Ok(None) };
        let found = ctx.data_unchecked::<super::loaders::Loaders>().entities.load_one(far.id.clone()).await?;
        Ok(found.map(Entity))
    }
}

/// The far end of an edge, compactly.
#[derive(SimpleObject)]
pub struct RelatedEntity {
    pub id: ID,
    pub canonical: String,
    /// Hops from the queried entity: 1, or 0 for a self-loop.
    pub depth: u32,
    #[graphql(name = "type")]
    pub type_name: String,
}

impl From<RelatedRecord> for RelatedEntity {
    fn from(r: RelatedRecord) -> Self {
        Self { id: ID(r.id), canonical: r.canonical, depth: r.depth, type_name: r.type_name }
    }
}

/// A node of the knowledge graph.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct GraphNode {
    pub id: ID,
    pub canonical: String,
    #[graphql(name = "type")]
    pub type_name: String,
    pub mention_count: i64,
    /// Hops from the centre (0 without one).
    pub depth: u32,
}

#[ComplexObject]
impl GraphNode {
    /// The node's full entity record (batched).
    async fn entity(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Entity>> {
        let found =
            ctx.data_unchecked::<super::loaders::Loaders>().entities.load_one(self.id.0.clone()).await?;
        Ok(found.map(Entity))
    }
}

impl From<GraphNodeRecord> for GraphNode {
    fn from(n: GraphNodeRecord) -> Self {
        Self {
            id: ID(n.id),
            canonical: n.canonical,
            type_name: n.type_name,
            mention_count: n.mention_count,
            depth: n.depth,
        }
    }
}

/// An edge of the knowledge graph.
#[derive(SimpleObject)]
pub struct GraphEdge {
    #[graphql(name = "relationID")]
    pub relation_id: ID,
    pub relation_type: String,
    pub mention_count: i64,
    /// Named as REST names it (`sourceId`).
    pub source_id: ID,
    /// Named as REST names it (`targetId`).
    pub target_id: ID,
}

impl From<GraphEdgeRecord> for GraphEdge {
    fn from(e: GraphEdgeRecord) -> Self {
        Self {
            relation_id: ID(e.relation_id),
            relation_type: e.relation_type,
            mention_count: e.mention_count,
            source_id: ID(e.source_id),
            target_id: ID(e.target_id),
        }
    }
}

/// A page of the knowledge graph: edges in relation-ID order and their endpoints.
#[derive(SimpleObject)]
pub struct KnowledgeGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// A page of the review queue, as `GET /v3/review-queue` returns it.
#[derive(SimpleObject)]
pub struct ReviewPage {
    pub entities: Vec<Entity>,
    pub has_more: bool,
    pub next_cursor: Option<String>,
}

/// A type of the account's taxonomy.
pub struct EntityType(pub EntityTypeRecord);

/// A type of the account's taxonomy.
#[Object]
impl EntityType {
    /// Stable identifier (`ety_…`).
    #[graphql(name = "typeID")]
    async fn type_id(&self) -> ID {
        ID(self.0.type_id.clone())
    }

    async fn name(&self) -> &str {
        &self.0.name
    }

    async fn description(&self) -> &str {
        &self.0.description
    }

    /// The parent's ID, or the empty string for a top-level type.
    #[graphql(name = "parentTypeID")]
    async fn parent_type_id(&self) -> &str {
        &self.0.parent_type_id
    }

    /// Per-type attribute metadata (a JSON object), if any.
    async fn attribute_schema(&self) -> Option<Json<Value>> {
        self.0.attribute_schema.clone().map(Json)
    }

    async fn created_at(&self) -> &str {
        &self.0.created_at
    }

    async fn updated_at(&self) -> &str {
        &self.0.updated_at
    }

    /// The parent type; null for a top-level type (batched).
    async fn parent(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<EntityType>> {
        if self.0.parent_type_id.is_empty() {
            return Ok(None);
        }
        let loaders = ctx.data_unchecked::<super::loaders::Loaders>();
        Ok(loaders.entity_types.load_one(self.0.parent_type_id.clone()).await?.map(EntityType))
    }

    /// Users reviewing this type (dashboard token with the operator or admin role).
    async fn reviewers(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Reviewer>> {
        let identity = super::dashboard_user(ctx)?;
        let list = request(ctx).state.reviewers.list(identity, &self.0.type_id).await.gql()?;
        Ok(list.into_iter().map(Reviewer::from).collect())
    }

    /// The direct child types, the first 200 by ID (batched; `GET
    /// /v3/entity-types?parentTypeID=` pages them all). One request lists at most
    /// [`super::loaders::CHILD_TYPES_LISTED`] child types in all: walked down and back up
    /// (`children { parent { children … } }`), each level multiplied the answer by 200 at a cost
    /// of 1, and a type has one parent, so a request walking down only lists each type once.
    async fn children(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<EntityType>> {
        let loaders = ctx.data_unchecked::<super::loaders::Loaders>();
        let children = loaders.type_children.load_one(self.0.type_id.clone()).await?.unwrap_or_default();
        loaders.list_child_types(children.len())?;
        Ok(children.into_iter().map(EntityType).collect())
    }
}

/// A partition of the knowledge graph.
#[derive(SimpleObject)]
pub struct Bucket {
    #[graphql(name = "bucketID")]
    pub bucket_id: ID,
    pub name: String,
    pub description: String,
    pub is_default: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl From<BucketRecord> for Bucket {
    fn from(b: BucketRecord) -> Self {
        Self {
            bucket_id: ID(b.bucket_id),
            name: b.name,
            description: b.description,
            is_default: b.is_default,
            created_at: b.created_at,
            updated_at: b.updated_at,
        }
    }
}

/// Wraps entities into a Relay connection whose cursors are entity IDs.
pub fn entity_connection(
    entities: Vec<EntityRecord>,
    has_previous: bool,
    has_next: bool,
) -> Connection<String, Entity> {
    let mut connection = Connection::new(has_previous, has_next);
    connection.edges.extend(entities.into_iter().map(|e| Edge::new(e.entity_id.clone(), Entity(e))));
    connection
}
