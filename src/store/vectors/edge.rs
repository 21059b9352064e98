//! Qdrant Edge in process: one shard per space under `<data dir>/vectors/<space>`, kept
//! across restarts (every write goes to the shard's write-ahead log first).
//!
//! Edge calls block, so each runs on the blocking pool. Edge indexes nothing by itself: after
//! writes, a background optimisation (at most one per shard at a time) builds the HNSW index
//! once a segment outgrows the indexing threshold.

use super::{
    Filter, Hit, Point, Query, Ranking, Space, Sparse, VectorError, VectorResult, VectorStore, DENSE,
    KEYWORD_INDEXES, RRF_K, SPARSE,
};
use async_trait::async_trait;
use qdrant_edge::{
    CountRequest, CreateIndex, Distance, EdgeConfig, EdgeShard, EdgeSparseVectorParams, EdgeVectorParams,
    FieldIndexOperations, Fusion, Modifier, NamedQuery, PayloadFieldSchema, PayloadSchemaType, PointId,
    PointInsertOperations, PointOperations, PointStruct, Prefetch, QueryEnum, QueryRequest, ScoringQuery,
    SparseVector, UpdateOperation, VectorInternal, Vectors, WithPayloadInterface, WithVector,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Shard {
    /// `None` only while being dropped.
    edge: Option<EdgeShard>,
    optimizing: AtomicBool,
    /// Set by `close`: only then does dropping flush the shard.
    closed: AtomicBool,
}

impl Shard {
    fn new(edge: EdgeShard) -> Self {
        Self { edge: Some(edge), optimizing: AtomicBool::new(false), closed: AtomicBool::new(false) }
    }

    fn edge(&self) -> &EdgeShard {
        self.edge.as_ref().expect("an open shard has its edge shard")
    }
}

impl Drop for Shard {
    /// Edge flushes when dropped and panics if it cannot (say, its directory is gone). Only a
    /// closed store flushes; otherwise nothing is lost by skipping it, since every write is
    /// already in the write-ahead log, which is replayed on the next load.
    fn drop(&mut self) {
        if let Some(edge) = self.edge.take() {
            if !*self.closed.get_mut() {
                std::mem::forget(edge);
            }
        }
    }
}

/// The embedded vector store.
pub struct EdgeStore {
    root: PathBuf,
    shards: Mutex<HashMap<String, Arc<Shard>>>,
}

impl EdgeStore {
    /// A store keeping its shards under `root` (created when missing).
    pub fn open(root: &Path) -> VectorResult<Self> {
        std::fs::create_dir_all(root)
            .map_err(|err| VectorError::Unavailable(format!("cannot create {}: {err}", root.display())))?;
        Ok(Self { root: root.to_path_buf(), shards: Mutex::new(HashMap::new()) })
    }

    fn shard(&self, space: &Space) -> VectorResult<Arc<Shard>> {
        self.shards
            .lock()
            .map_err(|_| VectorError::Operation("shard map lock poisoned".into()))?
            .get(&space.name)
            .cloned()
            .ok_or_else(|| VectorError::Operation(format!("space {} is not open", space.name)))
    }

    /// Builds the HNSW index in the background when a segment needs it; one run at a time.
    fn optimize_later(shard: Arc<Shard>) {
        if shard.optimizing.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::task::spawn_blocking(move || {
            if let Err(err) = shard.edge().optimize() {
                tracing::warn!(error = %err, "vector index optimisation failed");
            }
            shard.optimizing.store(false, Ordering::Release);
        });
    }

    /// Points stored and points indexed by HNSW.
    pub fn info(&self, space: &Space) -> VectorResult<(usize, usize)> {
        let info = self.shard(space)?.edge().info();
        Ok((info.points_count, info.indexed_vectors_count))
    }
}

fn edge_config(space: &Space) -> EdgeConfig {
    EdgeConfig {
        vectors: HashMap::from([(
            DENSE.to_string(),
            EdgeVectorParams::builder(space.dimension, Distance::Cosine).build(),
        )]),
        sparse_vectors: HashMap::from([(
            SPARSE.to_string(),
            EdgeSparseVectorParams { modifier: Some(Modifier::Idf), ..Default::default() },
        )]),
        ..Default::default()
    }
}

fn operation(err: impl std::fmt::Display) -> VectorError {
    VectorError::Operation(err.to_string())
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> VectorResult<T> + Send + 'static,
) -> VectorResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| VectorError::Operation(format!("vector task panicked: {err}")))?
}

/// Our filter in Edge's types (Edge reads Qdrant's JSON filter language).
pub(crate) fn edge_filter(filter: &Filter) -> VectorResult<Option<qdrant_edge::Filter>> {
    if filter.must.is_empty() && filter.must_not.is_empty() {
        return Ok(None);
    }
    serde_json::from_value(filter.to_json())
        .map(Some)
        .map_err(|err| VectorError::Operation(format!("cannot build filter: {err}")))
}

fn sparse_vector(sparse: &Sparse) -> VectorResult<SparseVector> {
    SparseVector::new(sparse.indices.clone(), sparse.values.clone()).map_err(operation)
}

fn nearest(vector: VectorInternal, using: &str) -> ScoringQuery {
    ScoringQuery::Vector(QueryEnum::Nearest(NamedQuery { query: vector, using: Some(using.to_string()) }))
}

/// Our query as an Edge query request.
pub(crate) fn edge_query(query: &Query) -> VectorResult<QueryRequest> {
    let filter = edge_filter(&query.filter)?;
    let (prefetches, scoring, request_filter) = match &query.ranking {
        Ranking::Dense(dense) => (vec![], nearest(VectorInternal::from(dense.clone()), DENSE), filter),
        Ranking::Sparse(sparse) => {
            (vec![], nearest(VectorInternal::from(sparse_vector(sparse)?), SPARSE), filter)
        }
        Ranking::Hybrid { dense, sparse, candidates } => {
            let prefetch = |scoring| Prefetch {
                prefetches: vec![],
                query: Some(scoring),
                limit: *candidates,
                params: None,
                filter: filter.clone(),
                score_threshold: None,
            };
            (
                vec![
                    prefetch(nearest(VectorInternal::from(dense.clone()), DENSE)),
                    prefetch(nearest(VectorInternal::from(sparse_vector(sparse)?), SPARSE)),
                ],
                ScoringQuery::Fusion(Fusion::Rrf { k: RRF_K, weights: None }),
                None,
            )
        }
    };
    Ok(QueryRequest {
        prefetches,
        query: Some(scoring),
        filter: request_filter,
        score_threshold: query.score_threshold.map(qdrant_edge::external::ordered_float::OrderedFloat),
        limit: query.limit,
        offset: 0,
        params: None,
        with_vector: WithVector::Bool(false),
        with_payload: WithPayloadInterface::Bool(true),
    })
}

fn point_id(id: &str) -> VectorResult<PointId> {
    uuid::Uuid::parse_str(id)
        .map(PointId::Uuid)
        .map_err(|err| VectorError::Operation(format!("point id {id} is not a UUID: {err}")))
}

fn point_id_text(id: &PointId) -> String {
    match id {
        PointId::NumId(n) => n.to_string(),
        PointId::Uuid(uuid) => uuid.hyphenated().to_string(),
    }
}

#[async_trait]
impl VectorStore for EdgeStore {
    fn name(&self) -> &'static str {
        "qdrant-edge"
    }

    async fn ensure_space(&self, space: &Space) -> VectorResult<()> {
        if self.shard(space).is_ok() {
            return Ok(());
        }
        let path = self.root.join(&space.name);
        let name = space.name.clone();
        let space = space.clone();
        let shard = blocking(move || {
            let config = edge_config(&space);
            let edge = if path.join("edge_config.json").is_file() {
                let edge = EdgeShard::load(&path, None).map_err(operation)?;
                let stored = edge.config().vectors.get(DENSE).map(|v| v.size);
                if stored != Some(space.dimension) {
                    return Err(VectorError::Unavailable(format!(
                        "{} holds vectors of dimension {stored:?}, the embedder makes {}",
                        path.display(),
                        space.dimension
                    )));
                }
                edge
            } else {
                std::fs::create_dir_all(&path).map_err(operation)?;
                EdgeShard::new(&path, config).map_err(operation)?
            };
            for field in KEYWORD_INDEXES {
                edge.update(UpdateOperation::FieldIndexOperation(FieldIndexOperations::CreateIndex(
                    CreateIndex {
                        field_name: field
                            .try_into()
                            .map_err(|_| VectorError::Operation(format!("bad field name {field}")))?,
                        field_schema: Some(PayloadFieldSchema::FieldType(PayloadSchemaType::Keyword)),
                    },
                )))
                .map_err(operation)?;
            }
            Ok(edge)
        })
        .await?;
        let shard = Arc::new(Shard::new(shard));
        self.shards
            .lock()
            .map_err(|_| VectorError::Operation("shard map lock poisoned".into()))?
            .entry(name)
            .or_insert(shard);
        Ok(())
    }

    async fn upsert(&self, space: &Space, points: Vec<Point>) -> VectorResult<()> {
        if points.is_empty() {
            return Ok(());
        }
        let shard = self.shard(space)?;
        let converted = points
            .into_iter()
            .map(|point| {
                let vectors = Vectors::new_named([
                    (DENSE, qdrant_edge::Vector::from(point.dense)),
                    (SPARSE, qdrant_edge::Vector::from(sparse_vector(&point.sparse)?)),
                ]);
                Ok(PointStruct::new(point_id(&point.id)?, vectors, serde_json::Value::Object(point.payload))
                    .into())
            })
            .collect::<VectorResult<Vec<_>>>()?;
        let writer = shard.clone();
        blocking(move || {
            writer
                .edge()
                .update(UpdateOperation::PointOperation(PointOperations::UpsertPoints(
                    PointInsertOperations::PointsList(converted),
                )))
                .map_err(operation)
        })
        .await?;
        Self::optimize_later(shard);
        Ok(())
    }

    async fn delete(&self, space: &Space, filter: &Filter) -> VectorResult<()> {
        let shard = self.shard(space)?;
        let Some(filter) = edge_filter(filter)? else {
            return Err(VectorError::Operation("refusing to delete with an empty filter".into()));
        };
        blocking(move || {
            shard
                .edge()
                .update(UpdateOperation::PointOperation(PointOperations::DeletePointsByFilter(filter)))
                .map_err(operation)
        })
        .await
    }

    async fn search(&self, space: &Space, query: &Query) -> VectorResult<Vec<Hit>> {
        let shard = self.shard(space)?;
        let request = edge_query(query)?;
        let points = blocking(move || shard.edge().query(request).map_err(operation)).await?;
        Ok(points
            .into_iter()
            .map(|point| Hit {
                id: point_id_text(&point.id),
                score: point.score,
                payload: point.payload.map(|p| p.0).unwrap_or_default(),
            })
            .collect())
    }

    async fn wait_indexed(&self, space: &Space) -> VectorResult<()> {
        let shard = self.shard(space)?;
        while shard.optimizing.load(Ordering::Acquire) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        blocking(move || shard.edge().optimize().map(|_| ()).map_err(operation)).await
    }

    async fn count(&self, space: &Space, filter: &Filter) -> VectorResult<u64> {
        let shard = self.shard(space)?;
        let filter = edge_filter(filter)?;
        blocking(move || {
            shard.edge().count(CountRequest { filter, exact: true }).map(|n| n as u64).map_err(operation)
        })
        .await
    }

    async fn ping(&self) -> VectorResult<()> {
        Ok(())
    }

    async fn close(&self) {
        let shards: Vec<Arc<Shard>> = match self.shards.lock() {
            Ok(mut shards) => shards.drain().map(|(_, shard)| shard).collect(),
            Err(_) => return,
        };
        for shard in shards {
            shard.closed.store(true, Ordering::Release);
            while shard.optimizing.load(Ordering::Acquire) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Dropping the last handle flushes the WAL and the segments.
            let _ = tokio::task::spawn_blocking(move || drop(shard)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::vectors::{fields, Condition};

    #[test]
    fn hybrid_queries_fuse_a_dense_and_a_sparse_prefetch_under_the_same_filter() {
        let query = Query {
            ranking: Ranking::Hybrid {
                dense: vec![0.1, 0.2],
                sparse: Sparse { indices: vec![3, 7], values: vec![1.0, 1.0] },
                candidates: 40,
            },
            filter: Filter::default().must(Condition::keyword(fields::ACCOUNT, "acc_1")),
            limit: 5,
            score_threshold: Some(0.01),
        };
        let request = edge_query(&query).unwrap();
        assert_eq!(request.prefetches.len(), 2);
        assert!(request.prefetches.iter().all(|p| p.filter.is_some() && p.limit == 40));
        assert!(matches!(request.query, Some(ScoringQuery::Fusion(_))));
        assert_eq!(request.limit, 5);
    }
}
