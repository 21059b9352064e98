//! A Qdrant server over gRPC (`CANON_QDRANT_URL`, optional `CANON_QDRANT_API_KEY`).
//!
//! Thin on purpose: each call converts our request into the client's (functions below,
//! unit-tested), sends it and converts the answer. A space is one Qdrant collection named
//! `canon_<space>` with a `dense` cosine vector, a `bm25` sparse vector with the IDF
//! modifier, and keyword payload indexes; `account` is the tenant index.

use super::{
    fields, Condition, Filter, Hit, Point, Query, Ranking, Space, VectorError, VectorResult, VectorStore,
    DENSE, KEYWORD_INDEXES, RRF_K, SPARSE,
};
use async_trait::async_trait;
use qdrant_client::qdrant::{
    self, r#match::MatchValue, CountPoints, CountPointsBuilder, CreateCollection, CreateCollectionBuilder,
    CreateFieldIndexCollection, CreateFieldIndexCollectionBuilder, DeletePoints, DeletePointsBuilder,
    Distance, FieldType, KeywordIndexParamsBuilder, Modifier, NamedVectors, PrefetchQueryBuilder,
    QueryPoints, QueryPointsBuilder, RrfBuilder, SparseVectorParamsBuilder, SparseVectorsConfigBuilder,
    UpsertPoints, UpsertPointsBuilder, VectorInput, VectorParamsBuilder, VectorsConfigBuilder,
};
use qdrant_client::Qdrant;

/// The Qdrant collection holding a space.
pub fn collection_name(space: &Space) -> String {
    format!("canon_{}", space.name)
}

/// The collection a space needs.
pub fn create_collection_request(space: &Space) -> CreateCollection {
    let mut vectors = VectorsConfigBuilder::default();
    vectors
        .add_named_vector_params(DENSE, VectorParamsBuilder::new(space.dimension as u64, Distance::Cosine));
    let mut sparse = SparseVectorsConfigBuilder::default();
    sparse.add_named_vector_params(SPARSE, SparseVectorParamsBuilder::default().modifier(Modifier::Idf));
    CreateCollectionBuilder::new(collection_name(space))
        .vectors_config(vectors)
        .sparse_vectors_config(sparse)
        .build()
}

/// The payload indexes of a space; the account is the tenant key.
pub fn index_requests(space: &Space) -> Vec<CreateFieldIndexCollection> {
    KEYWORD_INDEXES
        .iter()
        .map(|field| {
            let params = KeywordIndexParamsBuilder::default().is_tenant(*field == fields::ACCOUNT);
            CreateFieldIndexCollectionBuilder::new(collection_name(space), *field, FieldType::Keyword)
                .field_index_params(params)
                .wait(true)
                .build()
        })
        .collect()
}

fn condition(condition: &Condition) -> qdrant::Condition {
    match condition {
        Condition::Keyword { key, value } => {
            qdrant::Condition::matches(key.clone(), MatchValue::Keyword(value.clone()))
        }
        Condition::AnyKeyword { key, values } => qdrant::Condition::matches(
            key.clone(),
            MatchValue::Keywords(qdrant::RepeatedStrings { strings: values.clone() }),
        ),
        Condition::Integer { key, value } => {
            qdrant::Condition::matches(key.clone(), MatchValue::Integer(*value))
        }
        Condition::Bool { key, value } => {
            qdrant::Condition::matches(key.clone(), MatchValue::Boolean(*value))
        }
        Condition::AnyInteger { key, values } => qdrant::Condition::matches(
            key.clone(),
            MatchValue::Integers(qdrant::RepeatedIntegers { integers: values.clone() }),
        ),
    }
}

/// Our filter in the client's types.
pub fn filter(filter: &Filter) -> qdrant::Filter {
    qdrant::Filter {
        must: filter.must.iter().map(condition).collect(),
        must_not: filter.must_not.iter().map(condition).collect(),
        ..Default::default()
    }
}

/// Points to write (waiting until they are applied).
pub fn upsert_request(space: &Space, points: Vec<Point>) -> VectorResult<UpsertPoints> {
    let points = points
        .into_iter()
        .map(|point| {
            let vectors = NamedVectors::default()
                .add_vector(DENSE, point.dense)
                .add_vector(SPARSE, qdrant::Vector::new_sparse(point.sparse.indices, point.sparse.values));
            Ok(qdrant::PointStruct::new(point.id, vectors, qdrant_client::Payload::from(point.payload)))
        })
        .collect::<VectorResult<Vec<_>>>()?;
    Ok(UpsertPointsBuilder::new(collection_name(space), points).wait(true).build())
}

pub fn delete_request(space: &Space, selector: &Filter) -> DeletePoints {
    DeletePointsBuilder::new(collection_name(space)).points(filter(selector)).wait(true).build()
}

pub fn count_request(space: &Space, selector: &Filter) -> CountPoints {
    CountPointsBuilder::new(collection_name(space)).filter(filter(selector)).exact(true).build()
}

/// Our query in the client's types: hybrid is a dense and a sparse prefetch under the same
/// filter, fused by reciprocal rank.
pub fn query_request(space: &Space, query: &Query) -> QueryPoints {
    let selector = filter(&query.filter);
    let sparse_input = |s: &super::Sparse| VectorInput::new_sparse(s.indices.clone(), s.values.clone());
    let builder =
        QueryPointsBuilder::new(collection_name(space)).limit(query.limit as u64).with_payload(true);
    let builder = match &query.ranking {
        Ranking::Dense(dense) => {
            builder.query(qdrant::Query::new_nearest(dense.clone())).using(DENSE).filter(selector)
        }
        Ranking::Sparse(sparse) => {
            builder.query(qdrant::Query::new_nearest(sparse_input(sparse))).using(SPARSE).filter(selector)
        }
        Ranking::Hybrid { dense, sparse, candidates } => builder
            .add_prefetch(
                PrefetchQueryBuilder::default()
                    .query(qdrant::Query::new_nearest(dense.clone()))
                    .using(DENSE)
                    .filter(selector.clone())
                    .limit(*candidates as u64),
            )
            .add_prefetch(
                PrefetchQueryBuilder::default()
                    .query(qdrant::Query::new_nearest(sparse_input(sparse)))
                    .using(SPARSE)
                    .filter(selector)
                    .limit(*candidates as u64),
            )
            .query(qdrant::Query::new_rrf(RrfBuilder::with_k(RRF_K as u32))),
    };
    let builder = match query.score_threshold {
        Some(threshold) => builder.score_threshold(threshold),
        None => builder,
    };
    builder.build()
}

fn point_id_text(id: Option<qdrant::PointId>) -> String {
    use qdrant::point_id::PointIdOptions;
    match id.and_then(|id| id.point_id_options) {
        Some(PointIdOptions::Uuid(uuid)) => uuid,
        Some(PointIdOptions::Num(n)) => n.to_string(),
        None => String::new(),
    }
}

fn failed(err: qdrant_client::QdrantError) -> VectorError {
    VectorError::Operation(err.to_string())
}

/// The Qdrant server adapter.
pub struct QdrantStore {
    client: Qdrant,
}

impl QdrantStore {
    pub fn connect(url: &str, api_key: Option<&str>) -> VectorResult<Self> {
        let client = Qdrant::from_url(url)
            .api_key(api_key.map(str::to_string))
            .skip_compatibility_check()
            .build()
            .map_err(|err| VectorError::Unavailable(format!("{url}: {err}")))?;
        Ok(Self { client })
    }
}

#[async_trait]
impl VectorStore for QdrantStore {
    fn name(&self) -> &'static str {
        "qdrant"
    }

    async fn ensure_space(&self, space: &Space) -> VectorResult<()> {
        let exists = self
            .client
            .collection_exists(collection_name(space))
            .await
            .map_err(|err| VectorError::Unavailable(err.to_string()))?;
        if !exists {
            self.client.create_collection(create_collection_request(space)).await.map_err(failed)?;
        }
        for index in index_requests(space) {
            self.client.create_field_index(index).await.map_err(failed)?;
        }
        Ok(())
    }

    async fn upsert(&self, space: &Space, points: Vec<Point>) -> VectorResult<()> {
        if points.is_empty() {
            return Ok(());
        }
        self.client.upsert_points(upsert_request(space, points)?).await.map_err(failed)?;
        Ok(())
    }

    async fn delete(&self, space: &Space, selector: &Filter) -> VectorResult<()> {
        if selector.must.is_empty() && selector.must_not.is_empty() {
            return Err(VectorError::Operation("refusing to delete with an empty filter".into()));
        }
        self.client.delete_points(delete_request(space, selector)).await.map_err(failed)?;
        Ok(())
    }

    async fn search(&self, space: &Space, query: &Query) -> VectorResult<Vec<Hit>> {
        let response = self.client.query(query_request(space, query)).await.map_err(failed)?;
        Ok(response
            .result
            .into_iter()
            .map(|point| Hit {
                id: point_id_text(point.id),
                score: point.score,
                payload: point.payload.into_iter().map(|(key, value)| (key, value.into_json())).collect(),
            })
            .collect())
    }

    async fn wait_indexed(&self, _space: &Space) -> VectorResult<()> {
        Ok(())
    }

    async fn count(&self, space: &Space, selector: &Filter) -> VectorResult<u64> {
        let response = self.client.count(count_request(space, selector)).await.map_err(failed)?;
        Ok(response.result.map(|r| r.count).unwrap_or(0))
    }

    async fn ping(&self) -> VectorResult<()> {
        self.client.health_check().await.map(|_| ()).map_err(|err| VectorError::Unavailable(err.to_string()))
    }

    async fn close(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::vectors::Sparse;
    use qdrant::r#match::MatchValue;
    use qdrant::{condition::ConditionOneOf, query::Variant};

    fn space() -> Space {
        Space { name: "minilm-384".into(), dimension: 384 }
    }

    fn keyword_of(condition: &qdrant::Condition) -> (String, Option<MatchValue>) {
        match &condition.condition_one_of {
            Some(ConditionOneOf::Field(field)) => {
                (field.key.clone(), field.r#match.clone().and_then(|m| m.match_value))
            }
            other => panic!("not a field condition: {other:?}"),
        }
    }

    #[test]
    fn one_collection_per_space_with_dense_cosine_and_idf_sparse_vectors() {
        let request = create_collection_request(&space());
        assert_eq!(request.collection_name, "canon_minilm-384");
        let vectors = format!("{:?}", request.vectors_config);
        assert!(vectors.contains("\"dense\"") && vectors.contains("size: 384"));
        let sparse = request.sparse_vectors_config.expect("sparse vectors");
        assert_eq!(sparse.map[SPARSE].modifier, Some(Modifier::Idf as i32));
    }

    #[test]
    fn tenancy_and_path_fields_are_keyword_indexes_and_the_account_is_the_tenant() {
        let requests = index_requests(&space());
        let names: Vec<&str> = requests.iter().map(|r| r.field_name.as_str()).collect();
        assert_eq!(names, KEYWORD_INDEXES);
        for request in &requests {
            let params = format!("{:?}", request.field_index_params);
            assert_eq!(
                params.contains("is_tenant: Some(true)"),
                request.field_name == fields::ACCOUNT,
                "{params}"
            );
        }
    }

    #[test]
    fn keywords_with_spaces_stay_exact_matches() {
        let converted = filter(
            &Filter::default()
                .must(Condition::keyword("data.name", "red shoes"))
                .must_not(Condition::any_keyword(fields::REVISION, vec!["a".into(), "b".into()])),
        );
        assert_eq!(
            keyword_of(&converted.must[0]),
            ("data.name".into(), Some(MatchValue::Keyword("red shoes".into())))
        );
        assert!(matches!(
            keyword_of(&converted.must_not[0]).1,
            Some(MatchValue::Keywords(ref k)) if k.strings == ["a", "b"]
        ));
    }

    #[test]
    fn hybrid_search_is_two_filtered_prefetches_fused_by_rrf() {
        let query = Query {
            ranking: Ranking::Hybrid {
                dense: vec![0.5; 384],
                sparse: Sparse { indices: vec![1, 9], values: vec![1.0, 1.0] },
                candidates: 50,
            },
            filter: Filter::default().must(Condition::keyword(fields::ACCOUNT, "acc_1")),
            limit: 7,
            score_threshold: Some(0.02),
        };
        let request = query_request(&space(), &query);
        assert_eq!(request.limit, Some(7));
        assert_eq!(request.score_threshold, Some(0.02));
        assert_eq!(request.prefetch.len(), 2);
        let usings: Vec<_> = request.prefetch.iter().map(|p| p.using.clone().unwrap_or_default()).collect();
        assert_eq!(usings, [DENSE, SPARSE]);
        assert!(request.prefetch.iter().all(|p| p.filter.is_some() && p.limit == Some(50)));
        assert!(matches!(
            request.query.and_then(|q| q.variant),
            Some(Variant::Rrf(rrf)) if rrf.k == Some(RRF_K as u32)
        ));
    }

    #[test]
    fn dense_search_uses_the_dense_vector_under_the_filter() {
        let query = Query {
            ranking: Ranking::Dense(vec![0.1; 384]),
            filter: Filter::default().must(Condition::keyword(fields::SCOPE, "shop")),
            limit: 3,
            score_threshold: None,
        };
        let request = query_request(&space(), &query);
        assert_eq!(request.using.as_deref(), Some(DENSE));
        assert!(request.prefetch.is_empty());
        assert_eq!(keyword_of(&request.filter.unwrap().must[0]).0, fields::SCOPE);
    }

    #[test]
    fn upserts_carry_both_vectors_and_the_payload_and_wait() {
        let mut payload = serde_json::Map::new();
        payload.insert(fields::ITEM.into(), "itm_1".into());
        let point = Point {
            id: crate::store::vectors::point_id("itm_1", 0),
            dense: vec![0.0; 384],
            sparse: Sparse { indices: vec![4], values: vec![0.7] },
            payload,
        };
        let request = upsert_request(&space(), vec![point]).unwrap();
        assert_eq!(request.wait, Some(true));
        let stored = &request.points[0];
        assert!(stored.payload.contains_key(fields::ITEM));
        let vectors = format!("{:?}", stored.vectors);
        assert!(vectors.contains("\"dense\"") && vectors.contains("\"bm25\""));
        let delete =
            delete_request(&space(), &Filter::default().must(Condition::keyword(fields::ITEM, "itm_1")));
        assert_eq!(delete.wait, Some(true));
    }
}
