//! FalkorDB's indexes while they are built in the background.
//!
//! The embedded FalkorDB loads its snapshot with `DELAY_INDEXING yes`: it decodes the graph,
//! answers at once, and builds its indexes on a thread of its own (a 1,100,000-entity graph
//! answered in 2–3 s instead of 15–18 s, most of which was index building). While an index is
//! built FalkorDB plans without it, as Neo4j does while it populates one: reads stay correct,
//! by scanning, and get slower with the graph's size (a lookup by ID took 0.25 s at 1.1M
//! entities); uniqueness constraints are still enforced.
//!
//! Writes wait until every index is operational ([`IndexBuild::wait_for_writes`]): a write
//! that MERGEs on a scanned property costs a scan per row, and FalkorDB runs one write at a
//! time, so one seed statement would hold every other write for minutes. The wait is
//! bounded ([`WRITE_WAIT_LIMIT`]): a build that never ends slows writes, it does not stop them.

use falkordb::AsyncGraph;
use futures::TryStreamExt;
use std::time::Duration;
use tokio::sync::watch;

/// Longest time a write waits for the indexes before running anyway (slowly).
const WRITE_WAIT_LIMIT: Duration = Duration::from_secs(120);
/// How often the build's progress is read.
const POLL_EVERY: Duration = Duration::from_millis(100);
/// How often the build's progress is logged.
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// What FalkorDB is still building (`None` once every index is operational).
#[derive(Clone)]
pub struct IndexBuild {
    pending: watch::Receiver<Option<String>>,
}

impl IndexBuild {
    /// Follows the graph's index build until every index is operational.
    pub fn follow(graph: AsyncGraph) -> Self {
        let (tx, pending) = watch::channel(Some("indexes: checking".to_string()));
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let mut next_report = started + REPORT_EVERY;
            loop {
                match building(&graph).await {
                    Ok(building) if building.is_empty() => {
                        if started.elapsed() >= POLL_EVERY {
                            tracing::info!(
                                seconds = started.elapsed().as_secs_f64(),
                                "graph indexes are built"
                            );
                        }
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(building) => {
                        let text = format!("indexes building: {}", building.join("; "));
                        if tokio::time::Instant::now() >= next_report {
                            tracing::info!(progress = %text, "graph indexes are being built; writes wait");
                            next_report += REPORT_EVERY;
                        }
                        let _ = tx.send(Some(text));
                    }
                    Err(err) => tracing::warn!(error = %err, "cannot read the graph's index build"),
                }
                if tx.is_closed() {
                    return;
                }
                tokio::time::sleep(POLL_EVERY).await;
            }
        });
        Self { pending }
    }

    /// What is still being built, if anything (shown by `/readyz`).
    pub fn pending(&self) -> Option<String> {
        self.pending.borrow().clone()
    }

    /// Waits (bounded) until the indexes are operational when `cypher` writes.
    pub async fn wait_for_writes(&self, cypher: &str) {
        if self.pending.borrow().is_none() || !writes(cypher) {
            return;
        }
        let mut pending = self.pending.clone();
        let waited = tokio::time::timeout(WRITE_WAIT_LIMIT, pending.wait_for(Option::is_none)).await;
        if waited.is_err() {
            tracing::warn!("graph indexes still building after {WRITE_WAIT_LIMIT:?}; writing without them");
        }
    }
}

/// `label: done/total` of every index FalkorDB reports as not yet operational.
async fn building(graph: &AsyncGraph) -> Result<Vec<String>, falkordb::FalkorDBError> {
    let mut graph = graph.clone();
    let result = graph.query("CALL db.indexes() YIELD label, status RETURN label, status").execute().await?;
    let rows: Vec<falkordb::Row> = result.data.try_collect().await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let row = row.into_map();
            let text = |key: &str| match row.get(key) {
                Some(falkordb::FalkorValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let status = text("status");
            (status != "OPERATIONAL")
                .then(|| format!("{} {}", text("label"), status.replace("[Indexing] ", "")))
        })
        .collect())
}

/// Whether a statement may write: it holds a writing clause outside its comments. Every
/// statement is canon's own (`cypher/`); a read taken for a write only waits, a write taken
/// for a read only runs slowly. Clauses are matched in capitals, as every statement writes
/// them: a variable or label such as `merge` or `Merge` (the merge history's reads) is none.
/// The graph services also age what they memoise of a tenant on every write
/// (`graph::generations`).
pub fn writes(cypher: &str) -> bool {
    cypher.lines().map(|line| line.split("//").next().unwrap_or_default()).any(|code| {
        code.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|word| ["CREATE", "MERGE", "SET", "DELETE", "REMOVE", "DETACH"].contains(&word))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_write_are_told_from_reads() {
        assert!(writes("MERGE (k:Key {key: $key}) RETURN k"));
        assert!(writes("MATCH (e:Entity {id: $id})\nSET e.status = $status"));
        assert!(writes("MATCH (e) DETACH DELETE e"));
        assert!(writes("CREATE INDEX FOR (e:Entity) ON (e.id)"));
        assert!(!writes("MATCH (e:Entity) WHERE e.settled = true RETURN e.id AS id"));
        assert!(!writes("MATCH (e:Entity {id: $id}) RETURN e.createdAt AS created, e.offset AS o"));
        assert!(!writes("// the set of entities to merge\nMATCH (e:Entity) RETURN e.id AS id"));
        for file in ["entity_seed", "relation_create", "entity_merge"] {
            let text = std::fs::read_to_string(format!("cypher/{file}.cypher")).unwrap();
            assert!(writes(&text), "{file}");
        }
        for file in ["review_queue", "entity_details", "knowledge_graph_edges", "entity_merges", "merge_get"]
        {
            let text = std::fs::read_to_string(format!("cypher/{file}.cypher")).unwrap();
            assert!(!writes(&text), "{file}");
        }
    }
}
