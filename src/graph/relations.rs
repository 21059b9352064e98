//! Mentions and relations: how documents feed the graph, and how it is read back, per
//! entity and as a whole.

use super::columns::str_col;
use super::entities::{normalized_name, resolution_key, Mention};
use super::tenant_size::Held;
use super::window::WindowedPage;
use super::{decode, queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::params;
use crate::store::graph::Row;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use utoipa::ToSchema;

/// Longest relation type.
pub const RELATION_TYPE_MAX: usize = 100;
/// Deepest centred knowledge-graph view.
pub const MAX_DEPTH: u32 = 5;
/// Most neighbours returned (and walked from) per entity, nearest and lowest IDs first.
pub const MAX_NEIGHBORS: usize = 200;
/// Most entities a centred knowledge-graph view may walk to (past it: 400, lower maxDepth).
pub const MAX_CENTERED_NODES: usize = 10_000;

pub struct NewMention {
    pub entity_id: String,
    pub reference_id: Option<String>,
    pub transformation_id: Option<String>,
    pub page: Option<i64>,
    pub section_label: Option<String>,
    pub surface: String,
}

/// A directed relation between two entities.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Relation {
    #[serde(rename = "relationID")]
    pub relation_id: String,
    #[serde(rename = "sourceEntityID")]
    pub source_entity_id: String,
    #[serde(rename = "targetEntityID")]
    pub target_entity_id: String,
    pub relation_type: String,
    /// How many times the relation was observed.
    pub mention_count: i64,
    pub first_seen_at: String,
    #[serde(rename = "bucketID")]
    pub bucket_id: String,
}

/// The far end of an edge, compactly.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RelatedEntity {
    pub id: String,
    pub canonical: String,
    /// Hops from the queried entity: 1, or 0 for a self-loop.
    pub depth: u32,
    #[serde(rename = "type")]
    pub type_name: String,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    #[serde(rename = "relationID")]
    pub relation_id: String,
    pub relation_type: String,
    pub mention_count: i64,
    pub first_seen_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_entity: Option<RelatedEntity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_entity: Option<RelatedEntity>,
}

/// An entity's edges split by direction.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityRelations {
    pub inbound: Vec<Edge>,
    pub outbound: Vec<Edge>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphNode {
    pub id: String,
    pub canonical: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub mention_count: i64,
    /// Hops from the centre (0 without one).
    pub depth: u32,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphEdge {
    #[serde(rename = "relationID")]
    pub relation_id: String,
    pub relation_type: String,
    pub mention_count: i64,
    pub source_id: String,
    pub target_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeGraph {
    pub nodes: Vec<GraphNode>,
    /// At most `limit` edges; fewer, none even, when the page's scan bound ended it short.
    pub edges: Vec<GraphEdge>,
    /// Where the next page goes on when more may follow: the last edge's ID, or where a short
    /// page's scan stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Inbound,
    Outbound,
    Both,
}

impl Direction {
    /// The names a query gives, in the order error messages list them.
    pub const NAMES: [&'static str; 3] = ["inbound", "outbound", "both"];

    pub fn parse(text: &str) -> ServiceResult<Self> {
        match text {
            "inbound" => Ok(Self::Inbound),
            "outbound" => Ok(Self::Outbound),
            "both" => Ok(Self::Both),
            other => Err(ServiceError::invalid_field(
                "direction",
                format!("must be inbound, outbound or both (got {other:?})"),
            )),
        }
    }
}

/// Relations per page: by default, and at most (REST and the MCP tool alike).
pub const RELATIONS_PAGE: u32 = 50;
pub const MAX_RELATIONS_PAGE: u32 = 200;

pub struct RelationsQuery {
    pub direction: Direction,
    pub relation_type: Option<String>,
    pub cursor: Option<String>,
    pub bucket: Option<String>,
    pub limit: u32,
}

#[derive(Default)]
pub struct GraphQuery {
    pub type_ids: Option<Vec<String>>,
    pub since: Option<String>,
    pub search: Option<String>,
    pub center: Option<String>,
    /// Hops from `center`, 0..=[`MAX_DEPTH`] (checked here for both transports; signed so a
    /// negative value is refused by name rather than wrapped).
    pub depth: i64,
    pub bucket: Option<String>,
    pub cursor: Option<String>,
    pub limit: u32,
}

impl GraphService {
    /// Records a mention; its surface becomes an `extracted` surface form of the entity.
    pub async fn create_mention(&self, tenant: &Tenant, new: NewMention) -> ServiceResult<Mention> {
        let surface = new.surface.trim().to_string();
        let normalized = normalized_name("surface", &surface)?;
        crate::text::check_opt("referenceID", new.reference_id.as_deref())?;
        crate::text::check_opt("transformationID", new.transformation_id.as_deref())?;
        crate::text::check_opt("sectionLabel", new.section_label.as_deref())?;
        // Not the entity's record: its forms and mentions grow with every mention.
        let entity = self.resolved_entity(tenant, &new.entity_id, None).await?;
        self.check_room(tenant, Held::Mentions).await?;
        let rows = self
            .run(
                tenant,
                queries::MENTION_CREATE,
                params! {
                    "entityID" => entity.entity_id, "id" => ids::new_id("men"),
                    "referenceID" => new.reference_id, "transformationID" => new.transformation_id,
                    "page" => new.page, "sectionLabel" => new.section_label, "surface" => surface,
                    "key" => resolution_key(tenant, &entity.bucket_id, &entity.type_name, &normalized),
                    "keyID" => ids::new_id("esn"), "normalized" => normalized, "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        let mention = decode(
            rows.into_iter().next().ok_or_else(|| ServiceError::not_found("entity", &new.entity_id))?,
        )?;
        self.created(tenant, Held::Mentions, 1);
        Ok(mention)
    }

    /// Records one observation of `source -[relation_type]-> target` (IDs resolve through merges).
    pub async fn create_relation(
        &self,
        tenant: &Tenant,
        source: &str,
        target: &str,
        relation_type: &str,
    ) -> ServiceResult<Relation> {
        crate::text::check_len("relationType", relation_type.trim(), RELATION_TYPE_MAX, true)?;
        let relation_type = relation_type.trim();
        let (source_id, source_bucket) = self.resolve_entity(tenant, source, None).await?;
        let (target_id, target_bucket) = self.resolve_entity(tenant, target, None).await?;
        if source_bucket != target_bucket {
            return Err(ServiceError::Unprocessable {
                message: format!(
                    "{source} and {target} are in different buckets; relations stay inside one bucket"
                ),
                details: None,
            });
        }
        self.check_room(tenant, Held::Relations).await?;
        let id = ids::new_id("rel");
        let rows = self
            .run(
                tenant,
                queries::RELATION_CREATE,
                params! {
                    "sourceID" => source_id, "targetID" => target_id, "relationType" => relation_type,
                    "idKey" => super::id_keys::id_key(&id), "id" => id, "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        let relation: Relation =
            decode(rows.into_iter().next().ok_or_else(|| ServiceError::not_found("entity", source))?)?;
        if relation.mention_count == 1 {
            self.created(tenant, Held::Relations, 1);
        }
        Ok(relation)
    }

    /// A page of an entity's edges (ordered by relation ID), split by direction.
    pub async fn entity_relations(
        &self,
        tenant: &Tenant,
        id: &str,
        query: RelationsQuery,
    ) -> ServiceResult<EntityRelations> {
        crate::text::check_opt("relationType", query.relation_type.as_deref())?;
        let (entity_id, _) = self.resolve_entity(tenant, id, None).await?;
        let params = params! {
            "id" => entity_id, "relationType" => query.relation_type, "cursor" => query.cursor,
            "bucketID" => query.bucket, "limit" => query.limit + 1,
        };
        let mut edges: Vec<(bool, Row)> = Vec::new();
        if query.direction != Direction::Inbound {
            let rows = self.run(tenant, queries::RELATIONS_OUTBOUND, params.clone()).await?;
            edges.extend(rows.into_iter().map(|row| (true, row)));
        }
        if query.direction != Direction::Outbound {
            let rows = self.run(tenant, queries::RELATIONS_INBOUND, params).await?;
            // A self-loop is listed once, as outbound.
            let seen: HashSet<String> = edges.iter().map(|(_, row)| str_col(row, "relationID")).collect();
            edges.extend(
                rows.into_iter()
                    .filter(|row| !seen.contains(&str_col(row, "relationID")))
                    .map(|row| (false, row)),
            );
        }
        Ok(shape_relations(&entity_id, edges, query.limit))
    }

    /// A page of the graph's edges and their endpoints.
    pub async fn knowledge_graph(&self, tenant: &Tenant, query: GraphQuery) -> ServiceResult<KnowledgeGraph> {
        crate::text::check_opt("search", query.search.as_deref())?;
        let depth = u32::try_from(query.depth).ok().filter(|depth| *depth <= MAX_DEPTH).ok_or_else(|| {
            ServiceError::invalid_field(
                "maxDepth",
                format!("must be between 0 and {MAX_DEPTH} (got {})", query.depth),
            )
        })?;
        let mut depths: Option<BTreeMap<String, u32>> = None;
        if let Some(center) = &query.center {
            let (center_id, _) = self.resolve_entity(tenant, center, None).await?;
            depths = Some(self.within_hops(tenant, &center_id, depth, query.bucket.as_deref()).await?);
        }
        let mut node_ids: Option<HashSet<String>> = depths.as_ref().map(|d| d.keys().cloned().collect());
        if let Some(search) = query.search.as_deref().filter(|s| !s.is_empty()) {
            // The matching entities are sent with each page's statement: as many as a centred
            // view may hold, at most.
            let max = self.max_centered_nodes;
            let matching = self.entities_named_like(tenant, search, query.bucket.as_deref(), max + 1).await?;
            if matching.len() > max {
                return Err(ServiceError::invalid_field(
                    "search",
                    format!(
                        "more than {max} entities have a name containing {search:?}; search for more \
                         of the name, add a bucket or types, or page the whole graph without search"
                    ),
                ));
            }
            let matching: HashSet<String> = matching.into_iter().collect();
            node_ids = Some(match node_ids {
                Some(ids) => ids.intersection(&matching).cloned().collect(),
                None => matching,
            });
        }
        let type_names = match &query.type_ids {
            Some(ids) => Some(self.type_names(tenant, ids).await?),
            None => None,
        };
        super::id_keys::check_cursor(query.cursor.as_deref(), "rel", "a relation ID")?;
        let node_ids = node_ids.map(|ids| ids.into_iter().collect::<Vec<_>>());
        let limit = query.limit as usize;
        let every_edge = params! {
            "bucketID" => None::<String>, "since" => None::<String>, "nodeIDs" => None::<Vec<String>>,
            "typeIDs" => None::<Vec<String>>, "typeNames" => None::<Vec<String>>,
        };
        let (rows, next_cursor) = self
            .windowed_rows(
                tenant,
                WindowedPage {
                    prefix: "rel",
                    query: queries::KNOWLEDGE_GRAPH_EDGES,
                    // Neo4j: the edges with their endpoints' records, one statement a page.
                    ordered: queries::KNOWLEDGE_GRAPH_PAGE_ORDERED,
                    id_column: "relationID",
                    unfiltered: every_edge,
                    filters: params! {
                        "bucketID" => query.bucket, "since" => query.since, "nodeIDs" => node_ids,
                        "typeIDs" => query.type_ids, "typeNames" => type_names,
                    },
                    cursor: query.cursor.as_deref(),
                    since_ms: query.since.as_deref().and_then(super::columns::rfc3339_ms).unwrap_or(0),
                    limit,
                },
            )
            .await?
            .into_page(limit, "relationID");
        let nodes = if self.engine.orders_by_index() {
            // The page's rows carry their endpoints' records (knowledge_graph_page_ordered.cypher).
            endpoint_rows(&rows)
        } else {
            let mut endpoints: Vec<String> =
                rows.iter().flat_map(|row| [str_col(row, "sourceId"), str_col(row, "targetId")]).collect();
            endpoints.sort();
            endpoints.dedup();
            self.run(tenant, queries::ENTITY_NODES, params! { "ids" => endpoints }).await?
        };
        let edges = rows.into_iter().map(decode).collect::<Result<Vec<GraphEdge>, _>>()?;
        let nodes = nodes
            .iter()
            .map(|row| {
                let id = str_col(row, "id");
                GraphNode {
                    depth: depths.as_ref().and_then(|d| d.get(&id).copied()).unwrap_or(0),
                    canonical: str_col(row, "canonical"),
                    type_name: str_col(row, "type"),
                    mention_count: row.get("mentionCount").and_then(Value::as_i64).unwrap_or(0),
                    id,
                }
            })
            .collect();
        Ok(KnowledgeGraph { nodes, edges, next_cursor })
    }

    /// One page of relations for each of many live entity IDs in two statements (one per
    /// direction), each page shaped exactly as [`GraphService::entity_relations`] shapes it.
    /// IDs must be live (as the entity records of a page are); unknown IDs get empty pages.
    pub async fn relations_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        query: RelationsQuery,
    ) -> ServiceResult<HashMap<String, EntityRelations>> {
        crate::text::check_opt("relationType", query.relation_type.as_deref())?;
        let mut edges: HashMap<String, Vec<(bool, Row)>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let params = params! {
            "ids" => ids, "relationType" => query.relation_type, "cursor" => query.cursor,
            "bucketID" => query.bucket, "limit" => query.limit + 1,
        };
        let mut take = |rows: Vec<Row>, outbound: bool| {
            for row in rows {
                let entity_id = str_col(&row, "entityID");
                let Some(list) = edges.get_mut(&entity_id) else { continue };
                let seen: HashSet<String> = list.iter().map(|(_, r)| str_col(r, "relationID")).collect();
                let page = row.get("edges").and_then(Value::as_array).cloned().unwrap_or_default();
                for edge in page {
                    if let Value::Object(edge) = edge {
                        // A self-loop is listed once, as outbound.
                        if !seen.contains(&str_col(&edge, "relationID")) {
                            list.push((outbound, edge));
                        }
                    }
                }
            }
        };
        if query.direction != Direction::Inbound {
            take(self.run(tenant, queries::RELATIONS_OUTBOUND_BATCH, params.clone()).await?, true);
        }
        if query.direction != Direction::Outbound {
            take(self.run(tenant, queries::RELATIONS_INBOUND_BATCH, params).await?, false);
        }
        Ok(edges
            .into_iter()
            .map(|(id, list)| {
                let page = shape_relations(&id, list, query.limit);
                (id, page)
            })
            .collect())
    }

    /// The first `limit` mentions (by mention ID) of each of many entity IDs, in one statement.
    pub async fn mentions_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        limit: u32,
    ) -> ServiceResult<HashMap<String, Vec<Mention>>> {
        let mut found: HashMap<String, Vec<Mention>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if ids.is_empty() {
            return Ok(found);
        }
        let rows =
            self.run(tenant, queries::ENTITY_MENTIONS, params! { "ids" => ids, "limit" => limit }).await?;
        for row in rows {
            let entity_id = str_col(&row, "entityID");
            let mentions: Vec<Mention> = match row.get("mentions") {
                Some(list) => serde_json::from_value(list.clone()).map_err(|err| {
                    ServiceError::Internal(anyhow::anyhow!("cannot decode mentions: {err}"))
                })?,
                None => Vec::new(),
            };
            found.insert(entity_id, mentions);
        }
        Ok(found)
    }

    /// The entities within `depth` hops (1..=[`MAX_DEPTH`]) of an entity (through merges),
    /// optionally over one relation type only, nearest first, without the entity itself; at
    /// most [`MAX_NEIGHBORS`].
    pub async fn neighbors(
        &self,
        tenant: &Tenant,
        id: &str,
        depth: u32,
        relation_type: Option<&str>,
    ) -> ServiceResult<Vec<GraphNode>> {
        let (center, _) = self.resolve_entity(tenant, id, None).await?;
        let mut found = self
            .neighbors_of_many(tenant, std::slice::from_ref(&center), depth, relation_type, MAX_NEIGHBORS)
            .await?;
        Ok(found.remove(&center).unwrap_or_default())
    }

    /// [`GraphService::neighbors`] of many live entity IDs at once: `depth` + 1 statements
    /// however many entities (one per hop for all of them, then their node records). Each
    /// entity gets at most `limit` (≤ [`MAX_NEIGHBORS`]) neighbours, nearest first: the walk
    /// stops widening once it has them, so a hub costs no more than a leaf.
    pub async fn neighbors_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        depth: u32,
        relation_type: Option<&str>,
        limit: usize,
    ) -> ServiceResult<HashMap<String, Vec<GraphNode>>> {
        if depth == 0 || depth > MAX_DEPTH {
            return Err(ServiceError::invalid_field("depth", format!("must be between 1 and {MAX_DEPTH}")));
        }
        if !(1..=MAX_NEIGHBORS).contains(&limit) {
            return Err(ServiceError::invalid_field(
                "first",
                format!("must be between 1 and {MAX_NEIGHBORS} (got {limit})"),
            ));
        }
        crate::text::check_opt("relationType", relation_type)?;
        let mut depths: HashMap<String, BTreeMap<String, u32>> =
            ids.iter().map(|id| (id.clone(), BTreeMap::from([(id.clone(), 0)]))).collect();
        let mut frontiers: HashMap<String, Vec<String>> =
            ids.iter().map(|id| (id.clone(), vec![id.clone()])).collect();
        for hop in 1..=depth {
            let step: BTreeSet<String> = frontiers.values().flatten().cloned().collect();
            if step.is_empty() {
                break;
            }
            let rows = self
                .run(
                    tenant,
                    queries::ENTITY_NEIGHBOR_PAIRS,
                    params! { "ids" => step, "relationType" => relation_type, "perEntity" => limit as i64 },
                )
                .await?;
            let mut adjacent: HashMap<String, Vec<String>> = HashMap::new();
            for row in &rows {
                adjacent.entry(str_col(row, "fromID")).or_default().push(str_col(row, "entityID"));
            }
            for (center, frontier) in frontiers.iter_mut() {
                let seen = depths.entry(center.clone()).or_default();
                let mut next = Vec::new();
                for from in frontier.iter() {
                    for to in adjacent.get(from).into_iter().flatten() {
                        // The centre itself is in `seen`: `limit` neighbours make `limit + 1`.
                        if seen.len() > limit {
                            break;
                        }
                        if !seen.contains_key(to) {
                            seen.insert(to.clone(), hop);
                            next.push(to.clone());
                        }
                    }
                }
                *frontier = next;
            }
        }
        let all: BTreeSet<String> = depths
            .iter()
            .flat_map(|(center, found)| found.keys().filter(move |id| *id != center).cloned())
            .collect();
        let rows = if all.is_empty() {
            Vec::new()
        } else {
            self.run(tenant, queries::ENTITY_NODES, params! { "ids" => all }).await?
        };
        let records: HashMap<String, &Row> = rows.iter().map(|row| (str_col(row, "id"), row)).collect();
        let mut out = HashMap::new();
        for (center, found) in depths {
            let mut nodes: Vec<GraphNode> = found
                .iter()
                .filter(|(id, _)| **id != center)
                .filter_map(|(id, depth)| {
                    records.get(id).map(|row| GraphNode {
                        id: id.clone(),
                        canonical: str_col(row, "canonical"),
                        type_name: str_col(row, "type"),
                        mention_count: row.get("mentionCount").and_then(Value::as_i64).unwrap_or(0),
                        depth: *depth,
                    })
                })
                .collect();
            nodes.sort_by(|a, b| (a.depth, &a.id).cmp(&(b.depth, &b.id)));
            out.insert(center, nodes);
        }
        Ok(out)
    }

    /// Every entity within `depth` hops of `center`, with its distance.
    async fn within_hops(
        &self,
        tenant: &Tenant,
        center: &str,
        depth: u32,
        bucket: Option<&str>,
    ) -> ServiceResult<BTreeMap<String, u32>> {
        let mut depths = BTreeMap::from([(center.to_string(), 0)]);
        let mut frontier = vec![center.to_string()];
        for hop in 1..=depth {
            if frontier.is_empty() {
                break;
            }
            let max = self.max_centered_nodes;
            let limit = max + 1;
            let rows = self
                .run(
                    tenant,
                    queries::ENTITY_NEIGHBORS,
                    params! { "ids" => frontier, "bucketID" => bucket, "limit" => limit as i64 },
                )
                .await?;
            frontier = Vec::new();
            for id in rows.iter().map(|row| str_col(row, "entityID")) {
                if !depths.contains_key(&id) {
                    depths.insert(id.clone(), hop);
                    frontier.push(id);
                }
            }
            if rows.len() >= limit || depths.len() > max {
                return Err(ServiceError::invalid_field(
                    "maxDepth",
                    format!(
                        "the graph within {hop} hops of {center} reaches more than {max} \
                         entities; ask for fewer hops (maxDepth) or page the whole graph without nodeID"
                    ),
                ));
            }
        }
        Ok(depths)
    }
}

/// One page of an entity's edges from its (outbound?, row) pairs: ordered by relation ID,
/// cut to `limit`, split by direction. REST and the batched GraphQL loader share it.
fn shape_relations(entity_id: &str, mut edges: Vec<(bool, Row)>, limit: u32) -> EntityRelations {
    edges.sort_by_key(|(_, row)| str_col(row, "relationID"));
    let has_more = edges.len() > limit as usize;
    edges.truncate(limit as usize);
    let next_cursor = if has_more { edges.last().map(|(_, row)| str_col(row, "relationID")) } else { None };
    let (mut inbound, mut outbound) = (Vec::new(), Vec::new());
    for (is_outbound, row) in edges {
        let other_id = str_col(&row, "otherID");
        let far = RelatedEntity {
            depth: if other_id == entity_id { 0 } else { 1 },
            id: other_id,
            canonical: str_col(&row, "otherCanonical"),
            type_name: str_col(&row, "otherType"),
        };
        let mut edge = Edge {
            relation_id: str_col(&row, "relationID"),
            relation_type: str_col(&row, "relationType"),
            mention_count: row.get("mentionCount").and_then(Value::as_i64).unwrap_or(0),
            first_seen_at: str_col(&row, "firstSeenAt"),
            source_entity: None,
            target_entity: None,
        };
        if is_outbound {
            edge.target_entity = Some(far);
            outbound.push(edge);
        } else {
            edge.source_entity = Some(far);
            inbound.push(edge);
        }
    }
    EntityRelations { inbound, outbound, next_cursor }
}

/// The distinct endpoints of a page's edge rows as `entity_nodes.cypher` rows (`id`,
/// `canonical`, `type`, `mentionCount`) in ID order, read from the `source…` and `target…`
/// columns of `knowledge_graph_page_ordered.cypher`.
fn endpoint_rows(rows: &[Row]) -> Vec<Row> {
    let mut nodes: BTreeMap<String, Row> = BTreeMap::new();
    for row in rows {
        for side in ["source", "target"] {
            let id = str_col(row, &format!("{side}Id"));
            nodes.entry(id.clone()).or_insert_with(|| {
                let column = |name: &str| row.get(&format!("{side}{name}")).cloned().unwrap_or(Value::Null);
                let mut node = Row::new();
                node.insert("id".into(), Value::String(id));
                node.insert("canonical".into(), column("Canonical"));
                node.insert("type".into(), column("Type"));
                node.insert("mentionCount".into(), column("MentionCount"));
                node
            });
        }
    }
    nodes.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(value: Value) -> Row {
        let Value::Object(row) = value else { unreachable!() };
        row
    }

    #[test]
    fn a_pages_endpoints_are_each_node_once_in_id_order_with_its_own_record() {
        let edge = |id: &str, source: (&str, &str, i64), target: (&str, &str, i64)| {
            row(json!({
                "relationID": id, "sourceId": source.0, "targetId": target.0,
                "sourceCanonical": source.1, "sourceType": "Company", "sourceMentionCount": source.2,
                "targetCanonical": target.1, "targetType": "Person", "targetMentionCount": target.2,
            }))
        };
        let rows = [
            edge("rel_1", ("ent_b", "Beta", 2), ("ent_a", "Alpha", 0)),
            edge("rel_2", ("ent_b", "Beta", 2), ("ent_c", "Gamma", 5)),
        ];
        let nodes = endpoint_rows(&rows);
        let ids: Vec<String> = nodes.iter().map(|n| str_col(n, "id")).collect();
        assert_eq!(ids, ["ent_a", "ent_b", "ent_c"]);
        assert_eq!(
            Value::Object(nodes[0].clone()),
            json!({"id": "ent_a", "canonical": "Alpha", "type": "Person", "mentionCount": 0})
        );
        assert_eq!(
            Value::Object(nodes[2].clone()),
            json!({"id": "ent_c", "canonical": "Gamma", "type": "Person", "mentionCount": 5})
        );
        assert_eq!(nodes[1]["canonical"], "Beta");
        assert_eq!(nodes[1]["mentionCount"], 2);
    }
}
