//! A refresh: every live entity of a type (or bucket) read in pages, its pairs scored by the
//! learned model, the sure ones merged and the rest above the suggestion threshold recorded
//! for review, in batches.

use crate::error::{ServiceError, ServiceResult};
use crate::graph::audit::Actor;
use crate::graph::resolution::decide::{self, names_to_embed, Thresholds, MEANING_BUDGET, SCORE_ONLY_BUDGET};
use crate::graph::resolution::model::{Model, Record};
use crate::graph::resolution::pairs::{self, Floor, Label, ScoredPair};
use crate::graph::{queries, Tenant};
use crate::params;
use crate::store::records::name_embeddings::NameSpace;
use crate::store::records::suggestions::NewSuggestion;
use serde_json::{json, Value};
use std::collections::BTreeMap;

use super::{resolution_records, round, with_values, MeaningRun, RefreshResult, SuggestionService};

impl SuggestionService {
    /// Scores the tenant's candidate pairs (optionally one bucket's) with the resolution
    /// model (see [`crate::graph::resolution`]) and records the results, in entity-ID order
    /// so the same data always gives the same merges.
    pub async fn refresh(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        actor: &Actor,
    ) -> ServiceResult<RefreshResult> {
        let _turn = self.refreshes.enter(tenant).await?;
        let started = std::time::Instant::now();
        let (mut records, schemas) = self.read_candidates(tenant, bucket).await?;
        records.sort_by(|a, b| a.candidate.entity_id.cmp(&b.candidate.entity_id));
        let decided =
            self.records.decided_suggestions(&tenant.account_id, tenant.environment.as_str()).await?;
        let read = started.elapsed();
        // Only pairs that could still be suggested are kept, and embedded: at a million
        // entities nearly every neighbouring pair of names scores above any lower cut, and
        // embedding them all took longer than the rest of the run.
        let floor = Floor { probability: self.suggest_threshold, meaning: self.embedder.is_some() };
        // Minutes of CPU at a million entities: off the runtime's threads.
        let (records, run) = tokio::task::spawn_blocking(move || {
            let labels: Vec<Label> = decided
                .iter()
                .filter_map(|s| {
                    Some(Label {
                        type_key: s.signals.get("type")?.as_str()?.to_lowercase(),
                        explanation: s.signals.get("explanation")?,
                        matched: s.status == "accepted",
                    })
                })
                .collect();
            let run = pairs::score(&records, &schemas, &labels, floor);
            (records, run)
        })
        .await
        .map_err(|err| ServiceError::Internal(anyhow::anyhow!("scoring pairs: {err}")))?;
        let scored_at = started.elapsed();
        let run_blocked = run.blocked;
        let mut result = RefreshResult { compared: run.pairs.len(), ..RefreshResult::default() };
        let mut scored = run.pairs;
        let meaning = self.add_embedding_similarity(tenant, &records, &run.models, &mut scored).await?;
        let embedded_at = started.elapsed();
        // Statements the recording sends to the graph (others' too, if any run meanwhile).
        let graph_statements = self.graph.queries_run();
        let mut merged = Merged::new(records.len());
        let mut decisions = Vec::with_capacity(RECORDED_PER_ROUND);
        for pair in scored {
            let (a, b) = (&records[pair.a], &records[pair.b]);
            let Some((explanation, automatic)) =
                decide::decide(&run.models, &records, &pair, self.thresholds())
            else {
                continue;
            };
            let score = explanation.probability;
            // The older entity (smaller, time-ordered ID) survives.
            let (first, second) = if a.candidate.entity_id < b.candidate.entity_id {
                (pair.a, pair.b)
            } else {
                (pair.b, pair.a)
            };
            let signals = &pair.comparison.signals;
            let signals_json = json!({
                "nameSimilarity": round(signals.name_similarity),
                "sharedSurfaceForms": round(signals.shared_surface_forms),
                "embeddingSimilarity": signals.embedding_similarity.map(round),
                "type": a.candidate.type_name,
                "explanation": with_values(&explanation, &records[first], &records[second]),
            });
            decisions.push(Decision { first, second, score: round(score), signals: signals_json, automatic });
            if decisions.len() == RECORDED_PER_ROUND {
                self.record(tenant, &records, &mut decisions, &mut merged, actor, &mut result).await?;
            }
        }
        self.record(tenant, &records, &mut decisions, &mut merged, actor, &mut result).await?;
        tracing::info!(
            entities = records.len(),
            blocked = run_blocked,
            compared = result.compared,
            read_s = read.as_secs_f64(),
            score_s = (scored_at - read).as_secs_f64(),
            embed_s = (embedded_at - scored_at).as_secs_f64(),
            names_embedded = meaning.embedded,
            names_kept = meaning.kept,
            record_s = (started.elapsed() - embedded_at).as_secs_f64(),
            record_graph_statements = self.graph.queries_run() - graph_statements,
            "refresh done"
        );
        Ok(result)
    }

    /// Records one round of a refresh's decisions, in their order, and empties it: the
    /// suggestions [`SUGGESTIONS_PER_STATEMENT`] a statement, then the automatic merges of the
    /// pairs that were new, [`MERGES_PER_STATEMENT`] a statement. A crash loses at most the
    /// merges of one round (their pairs stay accepted, as when a crash fell between a pair's
    /// suggestion and its merge).
    ///
    /// [`SUGGESTIONS_PER_STATEMENT`]: crate::store::records::suggestions::SUGGESTIONS_PER_STATEMENT
    /// [`MERGES_PER_STATEMENT`]: crate::graph::merges::MERGES_PER_STATEMENT
    async fn record(
        &self,
        tenant: &Tenant,
        records: &[Record],
        decisions: &mut Vec<Decision>,
        merged: &mut Merged,
        actor: &Actor,
        result: &mut RefreshResult,
    ) -> ServiceResult<()> {
        let new: Vec<NewSuggestion> = decisions
            .iter()
            .map(|d| NewSuggestion {
                account_id: &tenant.account_id,
                environment: tenant.environment.as_str(),
                bucket_id: &records[d.first].candidate.bucket_id,
                entity_a: &records[d.first].candidate.entity_id,
                entity_b: &records[d.second].candidate.entity_id,
                score: d.score,
                signals: &d.signals,
                status: if d.automatic { "accepted" } else { "open" },
            })
            .collect();
        let fresh = self.records.insert_suggestions(&new).await?;
        drop(new);
        let mut to_merge = Vec::new();
        for (decision, fresh) in decisions.iter().zip(fresh) {
            match (fresh, decision.automatic) {
                (false, _) => {}
                (true, false) => result.suggested += 1,
                (true, true) => to_merge.push((decision.first, decision.second)),
            }
        }
        decisions.clear();
        let id = |i: usize| records[i].candidate.entity_id.clone();
        for group in merged.plan(&to_merge) {
            let pairs: Vec<(String, String, String)> = group
                .iter()
                .map(|m| (id(m.survivor), id(m.merged), records[m.survivor].candidate.bucket_id.clone()))
                .collect();
            let done = self.graph.merge_pairs(tenant, &pairs, actor).await?;
            for (planned, done) in group.iter().zip(done) {
                if done {
                    result.auto_merged += 1;
                    continue;
                }
                // Changed since it was read (a person merged or unmerged one of them): the
                // pair as one merge at a time does it, through whatever happened since.
                let (first, second) = to_merge[planned.pair];
                let (survivor, _) = self.graph.resolve_entity(tenant, &id(first), None).await?;
                let (merged, _) = self.graph.resolve_entity(tenant, &id(second), None).await?;
                if survivor != merged {
                    self.graph.merge_into(tenant, &survivor, &[merged], actor).await?;
                    result.auto_merged += 1;
                }
            }
        }
        Ok(())
    }

    /// The candidates' page statement for this engine: Neo4j's reads the tenant's part of an
    /// index in ID order and stops at the page's end (`entity_candidates_ordered.cypher`).
    fn candidates_query(&self) -> &'static str {
        if self.graph.engine().orders_by_index() {
            queries::ENTITY_CANDIDATES_ORDERED
        } else {
            queries::ENTITY_CANDIDATES
        }
    }

    /// Every live candidate of the tenant (or of one bucket), read a page at a time in ID order.
    async fn read_candidates(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
    ) -> ServiceResult<(Vec<Record>, BTreeMap<String, Value>)> {
        let (mut records, mut schemas) = (Vec::new(), BTreeMap::new());
        let mut after: Option<String> = None;
        loop {
            let params = params! {
                "bucketID" => bucket, "after" => after.clone(),
                "limit" => self.candidates_page as i64,
            };
            let rows = self.graph.run_query(tenant, self.candidates_query(), params).await?;
            let full = rows.len() >= self.candidates_page;
            let (page, page_schemas) = resolution_records(&rows);
            after = page.last().map(|r| r.candidate.entity_id.clone());
            records.extend(page);
            schemas.extend(page_schemas);
            if !full || after.is_none() {
                return Ok((records, schemas));
            }
        }
    }

    fn thresholds(&self) -> Thresholds {
        Thresholds { auto_merge: self.auto_merge_threshold, suggest: self.suggest_threshold }
    }

    /// Fills in the cosine of the two names' embeddings for the scored pairs it could change:
    /// not those already merging on letters (meaning only adds), nor pairs stored before (a
    /// refresh never records a pair twice). Names go to the budget by what meaning can do:
    /// first the pairs it can lift to a suggestion or an automatic merge ([`MEANING_BUDGET`]),
    /// then, while few ([`SCORE_ONLY_BUDGET`]), those whose suggestion it would only rescore.
    /// Vectors kept from earlier refreshes are reused, and new ones kept.
    async fn add_embedding_similarity(
        &self,
        tenant: &Tenant,
        records: &[Record],
        models: &BTreeMap<String, Model>,
        scored: &mut [ScoredPair],
    ) -> ServiceResult<MeaningRun> {
        let Some(embedder) = &self.embedder else { return Ok(MeaningRun::default()) };
        let stored = self.records.suggestion_pairs(&tenant.account_id, tenant.environment.as_str()).await?;
        let id = |i: usize| records[i].candidate.entity_id.clone();
        let was_stored = |p: &ScoredPair| {
            let (a, b) = (id(p.a), id(p.b));
            stored.contains(&if a < b { (a, b) } else { (b, a) })
        };
        let wanted = decide::meaning_wanted(records, models, scored, was_stored, self.thresholds());
        drop(stored);
        let (needed, over_budget) = names_to_embed(scored, &wanted, MEANING_BUDGET, SCORE_ONLY_BUDGET);
        if over_budget > 0 {
            tracing::info!(
                over_budget,
                "refresh: pairs past the embedding budget are compared by letters only"
            );
        }
        let mut texts: Vec<String> = Vec::with_capacity(needed.len());
        for &i in &needed {
            let name = &records[i].candidate.normalized;
            // A name may run to 500 characters, over MiniLM's window: its first window stands
            // for it (a name of up to 200 characters fits any model's window as it is).
            if name.chars().count() <= 200 {
                texts.push(name.clone());
                continue;
            }
            let pieces = embedder
                .chunk(name)
                .await
                .map_err(|err| ServiceError::Internal(anyhow::anyhow!("chunking a name: {err}")))?;
            texts.push(pieces.into_iter().next().unwrap_or_default());
        }
        let model = embedder.space().name;
        let space = NameSpace {
            account_id: &tenant.account_id,
            environment: tenant.environment.as_str(),
            model: &model,
        };
        let mut unique: Vec<String> = texts.clone();
        unique.sort();
        unique.dedup();
        let mut by_text = self.records.name_embeddings(&space, &unique).await?;
        let kept = by_text.len();
        let missing: Vec<String> = unique.into_iter().filter(|t| !by_text.contains_key(t)).collect();
        let mut computed = Vec::with_capacity(missing.len());
        for batch in missing.chunks(256) {
            let embedded = embedder
                .embed(batch)
                .await
                .map_err(|err| ServiceError::Internal(anyhow::anyhow!("embedding names: {err}")))?;
            computed.extend(batch.iter().cloned().zip(embedded));
        }
        self.records.keep_name_embeddings(&space, &computed).await?;
        let embedded = computed.len();
        by_text.extend(computed);
        let vectors: std::collections::HashMap<usize, &Vec<f32>> =
            needed.iter().zip(&texts).filter_map(|(&i, t)| Some((i, by_text.get(t)?))).collect();
        decide::add_cosines(scored, &wanted, &vectors);
        Ok(MeaningRun { embedded, kept })
    }
}

/// Decisions a refresh holds before recording them (their explanations are the memory).
const RECORDED_PER_ROUND: usize = 2_000;

/// One pair a refresh suggests or merges: record indices, `first` the older entity.
struct Decision {
    first: usize,
    second: usize,
    score: f64,
    signals: Value,
    automatic: bool,
}

/// One merge of a plan: record indices of the live survivor and the entity merged into it,
/// and the index of the pair it came from.
#[derive(Debug, PartialEq)]
struct PlannedMerge {
    survivor: usize,
    merged: usize,
    pair: usize,
}

/// Which live entity each record has been merged into during a refresh (union–find over
/// record indices; every record starts live: the candidates read are live entities).
struct Merged(Vec<usize>);

impl Merged {
    fn new(records: usize) -> Self {
        Self((0..records).collect())
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }

    /// The merges `(first, second)` pairs make in order (the second's survivor into the
    /// first's, as one merge at a time resolved them), in groups that can each be one
    /// statement: no entity merged in a group is a survivor earlier in it. Pairs already one
    /// entity make none.
    fn plan(&mut self, pairs: &[(usize, usize)]) -> Vec<Vec<PlannedMerge>> {
        let mut groups = Vec::new();
        let mut group: Vec<PlannedMerge> = Vec::new();
        let mut survivors = std::collections::HashSet::new();
        for (pair, &(first, second)) in pairs.iter().enumerate() {
            let (survivor, merged) = (self.find(first), self.find(second));
            if survivor == merged {
                continue;
            }
            self.0[merged] = survivor;
            if survivors.contains(&merged) {
                groups.push(std::mem::take(&mut group));
                survivors.clear();
            }
            survivors.insert(survivor);
            group.push(PlannedMerge { survivor, merged, pair });
        }
        if !group.is_empty() {
            groups.push(group);
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_are_planned_as_one_at_a_time_would_make_them_and_grouped_without_conflicts() {
        let mut merged = Merged::new(6);
        // 1 into 0, 2 into 0 (one group: survivors may repeat), then 0 into 3 (0 survived in
        // this group: a new one), then (1, 2) are one entity already, then 4 into 3's survivor.
        let plan = merged.plan(&[(0, 1), (0, 2), (3, 0), (1, 2), (4, 5), (5, 1)]);
        let flat = |g: &[PlannedMerge]| g.iter().map(|m| (m.survivor, m.merged, m.pair)).collect::<Vec<_>>();
        assert_eq!(plan.len(), 3, "{plan:?}");
        assert_eq!(flat(&plan[0]), vec![(0, 1, 0), (0, 2, 1)]);
        assert_eq!(flat(&plan[1]), vec![(3, 0, 2), (4, 5, 4)]);
        // 5 was merged into 4 and 1 into 0 into 3: the survivors of both, and 4 survived above.
        assert_eq!(flat(&plan[2]), vec![(4, 3, 5)]);
        assert!((0..6).all(|i| merged.find(i) == 4));
    }
}
