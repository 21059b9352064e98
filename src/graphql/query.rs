//! Reads: each field calls the service function its REST endpoint calls.

use super::timeline::TimelinePage;
use super::types::{
    entity_connection, list_cost, page_size, Bucket, Entity, EntityType, KnowledgeGraph, MergeSuggestionPage,
    ReviewPage, Synonym,
};
use super::{request, OrGql, RequestContext};
use crate::access::params::time_param;
use crate::graph::entities::SYNONYMS_LISTED;
use crate::graph::relations::GraphQuery;
use crate::graph::review::{ReviewFilter, STATUSES};
use crate::pagination::{Limits, PageRequest};
use async_graphql::connection::Connection;
use async_graphql::{Context, InputObject, Object, ID};

/// Bounded page reads one `entities` connection page may take to find an entity (see
/// [`crate::graph::GraphService::review_queue_until_found`]).
const ENTITY_PAGE_READS: usize = 8;

pub struct QueryRoot;

/// The review-queue filters (`GET /v3/review-queue`); they AND together.
#[derive(InputObject, Default)]
pub struct EntityFilter {
    /// Statuses to include.
    pub status: Option<Vec<String>>,
    /// Effective types (`ety_…`): the assigned type, else the inferred type by name.
    #[graphql(name = "type")]
    pub types: Option<Vec<ID>>,
    /// `me` or `usr_…`: entities whose effective type that user reviews (dashboard token).
    pub assigned_to: Option<String>,
    /// Created at or after (RFC 3339).
    pub since: Option<String>,
    /// Only this bucket (`bkt_…`).
    pub bucket: Option<String>,
}

/// The service filter for `filter`, as the REST handler builds it.
async fn review_filter(
    rc: &RequestContext,
    filter: EntityFilter,
    default_statuses: &[&str],
    cursor: Option<String>,
    limit: u32,
) -> async_graphql::Result<ReviewFilter> {
    let types: Vec<String> = filter.types.unwrap_or_default().into_iter().map(|id| id.0).collect();
    let me = rc.caller.user.as_ref().map(|u| u.user_id.as_str());
    let type_ids = rc
        .state
        .reviewers
        .queue_types(&rc.caller.tenant, me, types, filter.assigned_to.as_deref())
        .await
        .gql()?;
    let statuses = match filter.status {
        Some(list) if !list.is_empty() => list,
        _ => default_statuses.iter().map(|s| s.to_string()).collect(),
    };
    Ok(ReviewFilter {
        statuses,
        type_ids,
        since: time_param("since", filter.since.as_deref()).gql()?,
        cursor,
        bucket: filter.bucket,
        limit,
    })
}

#[Object]
impl QueryRoot {
    /// One entity by ID; a merged-away ID resolves to its survivor (`GET /v3/entities/{id}`).
    async fn entity(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(desc = "Only find the entity in this bucket.")] bucket: Option<String>,
    ) -> async_graphql::Result<Entity> {
        let rc = request(ctx);
        Ok(Entity(rc.state.graph.get_entity(&rc.caller.tenant, &id, bucket.as_deref()).await.gql()?))
    }

    /// Entities in ID order with the review-queue filters, as a Relay connection. Without a
    /// status filter every live status is listed (extracted, proposed, approved, rejected).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn entities(
        &self,
        ctx: &Context<'_>,
        filter: Option<EntityFilter>,
        #[graphql(default = 50, desc = "Page size (1..200).")] first: i32,
        #[graphql(desc = "An entityID cursor (an edge's `cursor`): the page after it.")] after: Option<
            String,
        >,
    ) -> async_graphql::Result<Connection<String, Entity>> {
        let rc = request(ctx);
        let limit = page_size(first, 200)?;
        let live: Vec<&str> = STATUSES.iter().copied().filter(|s| *s != "merged").collect();
        let filter = review_filter(rc, filter.unwrap_or_default(), &live, after.clone(), limit).await?;
        // A page that ends short with no entity has no `endCursor` to go on from: read on.
        let page = rc
            .state
            .graph
            .review_queue_until_found(&rc.caller.tenant, filter, ENTITY_PAGE_READS)
            .await
            .gql()?;
        if let (true, Some(resume)) = (page.entities.is_empty(), &page.next_cursor) {
            let message = format!(
                "no entity matched in the {ENTITY_PAGE_READS} bounded reads of the entities after the cursor; \
                 pass extensions.details.after as `after` to read on, or narrow the filter (since, bucket, type)"
            );
            let details = Some(serde_json::json!({ "after": resume }));
            return Err(crate::error::ServiceError::Unprocessable { message, details }).gql();
        }
        Ok(entity_connection(page.entities, after.is_some(), page.has_more))
    }

    /// Entities awaiting curation, exactly as `GET /v3/review-queue` pages them (default
    /// statuses extracted and proposed).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "list_cost(limit, child_complexity)")]
    async fn review_queue(
        &self,
        ctx: &Context<'_>,
        status: Option<Vec<String>>,
        #[graphql(name = "type")] types: Option<Vec<ID>>,
        assigned_to: Option<String>,
        since: Option<String>,
        #[graphql(desc = "A previous page's nextCursor: the page after it.")] cursor: Option<String>,
        bucket: Option<String>,
        #[graphql(default = 50, desc = "1..200.")] limit: i32,
    ) -> async_graphql::Result<ReviewPage> {
        let rc = request(ctx);
        let limit = limit_arg(limit)?;
        let filter = EntityFilter { status, types, assigned_to, since, bucket };
        let filter = review_filter(rc, filter, &["extracted", "proposed"], cursor, limit).await?;
        let page = rc.state.graph.review_queue(&rc.caller.tenant, filter).await.gql()?;
        Ok(ReviewPage {
            entities: page.entities.into_iter().map(Entity).collect(),
            has_more: page.has_more,
            next_cursor: page.next_cursor,
        })
    }

    /// A page of the knowledge graph with `GET /v3/knowledge-graph`'s filters.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "list_cost(limit, child_complexity)")]
    async fn knowledge_graph(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "type", desc = "Effective types (`ety_…`); both endpoints must match.")]
        types: Option<Vec<ID>>,
        #[graphql(desc = "Edges created at or after (RFC 3339).")] since: Option<String>,
        #[graphql(desc = "Case-insensitive substring of a canonical name or surface form. At most \
                          10,000 entities may match: past that the read is refused (code 400 naming \
                          `search`).")]
        search: Option<String>,
        #[graphql(name = "nodeID", desc = "Centre entity: only the subgraph within `maxDepth` hops.")]
        node_id: Option<ID>,
        #[graphql(
            default = 2,
            desc = "Hops from the centre, 0..5. At most 10,000 entities (the centre included) may be \
                    within them: past that the read is refused (code 400 naming `maxDepth`)."
        )]
        max_depth: i32,
        bucket: Option<String>,
        #[graphql(desc = "A previous page's nextCursor: the page after it.")] cursor: Option<String>,
        #[graphql(default = 50, desc = "Edges per page, 1..200.")] limit: i32,
    ) -> async_graphql::Result<KnowledgeGraph> {
        let rc = request(ctx);
        let types: Vec<String> = types.unwrap_or_default().into_iter().map(|id| id.0).collect();
        let query = GraphQuery {
            type_ids: (!types.is_empty()).then_some(types),
            since: time_param("since", since.as_deref()).gql()?,
            search,
            center: node_id.map(|id| id.0),
            depth: max_depth.into(),
            bucket,
            cursor,
            limit: limit_arg(limit)?,
        };
        let graph = rc.state.graph.knowledge_graph(&rc.caller.tenant, query).await.gql()?;
        Ok(KnowledgeGraph {
            nodes: graph.nodes.into_iter().map(Into::into).collect(),
            edges: graph.edges.into_iter().map(Into::into).collect(),
            next_cursor: graph.next_cursor,
        })
    }

    /// The account's entity types in ID order (`GET /v3/entity-types`), each with its parent
    /// and children.
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn entity_types(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "parentTypeID", desc = "Only the children of this type.")] parent_type_id: Option<
            ID,
        >,
        #[graphql(default = 50, desc = "1..200.")] first: i32,
        #[graphql(desc = "A typeID: the page after it.")] after: Option<String>,
    ) -> async_graphql::Result<Vec<EntityType>> {
        let rc = request(ctx);
        let page =
            PageRequest::parse(Some(i64::from(first)), after, None, Limits { default: 50, max: 200 }, "ety")
                .gql()?;
        let parent = parent_type_id.map(|id| id.0);
        let types =
            rc.state.graph.list_entity_types(&rc.caller.tenant, &page, parent.as_deref()).await.gql()?;
        Ok(types.entity_types.into_iter().map(EntityType).collect())
    }

    /// One entity type by ID.
    async fn entity_type(&self, ctx: &Context<'_>, id: ID) -> async_graphql::Result<EntityType> {
        let rc = request(ctx);
        Ok(EntityType(rc.state.graph.get_entity_type(&rc.caller.tenant, &id).await.gql()?))
    }

    /// The account's buckets in ID order (`GET /v3/buckets`).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn buckets(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 50, desc = "1..200.")] first: i32,
        #[graphql(desc = "A bucketID: the page after it.")] after: Option<String>,
        #[graphql(desc = "Case-insensitive substring of the name.")] name_substring: Option<String>,
    ) -> async_graphql::Result<Vec<Bucket>> {
        let rc = request(ctx);
        let page =
            PageRequest::parse(Some(i64::from(first)), after, None, Limits { default: 50, max: 200 }, "bkt")
                .gql()?;
        let buckets =
            rc.state.graph.list_buckets(&rc.caller.tenant, &page, name_substring.as_deref()).await.gql()?;
        Ok(buckets.buckets.into_iter().map(Bucket::from).collect())
    }

    /// Open merge suggestions, most likely duplicates first (`GET /v3/merge-suggestions`).
    #[graphql(complexity = "list_cost(first, child_complexity)")]
    async fn merge_suggestions(
        &self,
        ctx: &Context<'_>,
        bucket: Option<String>,
        #[graphql(desc = "A suggestionID: the page after it.")] after: Option<String>,
        #[graphql(default = 50, desc = "1..200.")] first: i32,
    ) -> async_graphql::Result<MergeSuggestionPage> {
        let rc = request(ctx);
        let limit = page_size(first, 200)? as usize;
        let page = rc
            .state
            .suggestions
            .list(&rc.caller.tenant, bucket.as_deref(), after.as_deref(), Default::default(), limit)
            .await
            .gql()?;
        Ok(MergeSuggestionPage {
            suggestions: page.suggestions.into_iter().map(Into::into).collect(),
            has_more: page.has_more,
        })
    }

    /// The entity's synonyms with their IDs and sources (`extracted`, `customer_defined`,
    /// `sme_approved`), oldest first, as `GET /v3/entities/{id}/synonyms` lists them (at most
    /// the first 500; canonical names are not synonyms). A merged-away ID lists its survivor's.
    #[graphql(complexity = "list_cost(SYNONYMS_LISTED as i32, child_complexity)")]
    async fn entity_synonyms(&self, ctx: &Context<'_>, id: ID) -> async_graphql::Result<Vec<Synonym>> {
        let rc = request(ctx);
        let synonyms = rc.state.graph.list_synonyms(&rc.caller.tenant, &id).await.gql()?;
        Ok(synonyms.into_iter().map(Synonym::from).collect())
    }

    /// The entity's audit timeline, newest first, as `GET /v3/entities/{id}/timeline` pages it:
    /// status changes, merges and unmerges, synonym and name edits, type changes and
    /// merge-suggestion decisions, each with who and when. A merged-away ID lists its own
    /// history (it does not resolve to its survivor, as `entity` does).
    #[graphql(complexity = "list_cost(limit, child_complexity)")]
    async fn entity_timeline(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(desc = "A previous page's `nextCursor`: the page of older items after it.")] cursor: Option<
            String,
        >,
        #[graphql(default_with = "crate::graph::timeline::TIMELINE_PAGE as i32", desc = "1..200.")]
        limit: i32,
    ) -> async_graphql::Result<TimelinePage> {
        let rc = request(ctx);
        let limit = limit_up_to(limit, crate::graph::timeline::MAX_TIMELINE_PAGE)? as usize;
        let page = rc.state.graph.timeline(&rc.caller.tenant, &id, cursor.as_deref(), limit).await.gql()?;
        Ok(page.into())
    }
}

/// The review queue's `limit`: 1..200, as REST's, with REST's message.
fn limit_arg(limit: i32) -> async_graphql::Result<u32> {
    limit_up_to(limit, 200)
}

/// A `limit` argument within `1..=max`, with REST's message.
fn limit_up_to(limit: i32, max: u32) -> async_graphql::Result<u32> {
    crate::access::params::limit_param(Some(&limit.to_string()), max, max).gql()
}
