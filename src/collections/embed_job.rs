//! The job that embeds one write (add or update) of items, and records its event.
//!
//! Idempotent, since the queue runs a job at least once: point IDs are derived from item and
//! chunk, every point carries the write (`revision`) whose data it embeds, and the job only
//! touches items still at its own write. A newer write of an item always wins: its points
//! replace older ones, and this job's late points for a superseded or deleted item are
//! removed again.

use super::{CollectionsService, EMBED_ATTEMPTS, MAX_TOKENS_PER_TEXT, PROCESSING_EVENT};
use crate::embeddings::{item_text_too_long, text_of};
use crate::graph::Tenant;
use crate::ids;
use crate::jobs::JobHandler;
use crate::store::records::collections::PendingItem;
use crate::store::records::keys::Environment;
use crate::store::vectors::{fields, point_id, Condition, Filter, Point};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    #[serde(rename = "eventID")]
    event_id: String,
    #[serde(rename = "accountID")]
    account_id: String,
    environment: String,
    #[serde(rename = "collectionID")]
    collection_id: String,
    collection_name: String,
    operation: String,
    #[serde(rename = "itemIDs")]
    item_ids: Vec<String>,
}

/// Runs `collections.embed` jobs.
pub struct EmbedJob {
    pub service: Arc<CollectionsService>,
}

struct Outcome {
    processed: usize,
    failures: Vec<(String, String)>,
}

impl EmbedJob {
    async fn embed(
        &self,
        job: &Payload,
        tenant: &Tenant,
        items: Vec<PendingItem>,
    ) -> anyhow::Result<Outcome> {
        let service = &self.service;
        let embedder = service.embedder();
        let mut failures = Vec::new();
        // Items stored before their text was bounded at write fail here, as they would there.
        let (mut embedded, mut texts): (Vec<&PendingItem>, Vec<String>) = (Vec::new(), Vec::new());
        for item in &items {
            match text_of(&serde_json::from_str(&item.data).unwrap_or(Value::Null)) {
                Some(text) => {
                    embedded.push(item);
                    texts.push(text);
                }
                None => {
                    failures.push((item.id.clone(), format!("the item's data: {}", item_text_too_long())))
                }
            }
        }
        let counts = embedder.count_tokens(&texts).await?;
        // (item, chunk texts)
        let mut work: Vec<(&PendingItem, Vec<String>)> = Vec::new();
        for ((item, text), count) in embedded.into_iter().zip(&texts).zip(counts) {
            if count > MAX_TOKENS_PER_TEXT {
                failures.push((
                    item.id.clone(),
                    format!(
                        "the item's text has {count} tokens, over the limit of {MAX_TOKENS_PER_TEXT}; \
                         split it into several items (POST /v3/collections/token-count checks texts)"
                    ),
                ));
                continue;
            }
            work.push((item, embedder.chunk(text).await?));
        }
        let chunks: Vec<String> = work.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
        let vectors = embedder.embed(&chunks).await?;
        anyhow::ensure!(
            vectors.len() == chunks.len(),
            "the embedder returned {} vectors for {} texts",
            vectors.len(),
            chunks.len()
        );
        let scopes = super::names::scopes(&job.collection_name);
        let mut points = Vec::with_capacity(chunks.len());
        let mut vectors = vectors.into_iter();
        for (item, item_chunks) in &work {
            let data: Value = serde_json::from_str(&item.data).unwrap_or(Value::Null);
            for (i, chunk) in item_chunks.iter().enumerate() {
                let mut payload = Map::new();
                payload.insert(fields::ACCOUNT.into(), json!(tenant.account_id));
                payload.insert(fields::ENVIRONMENT.into(), json!(tenant.environment.as_str()));
                payload.insert(fields::COLLECTION.into(), json!(job.collection_name));
                payload.insert(fields::SCOPE.into(), json!(scopes));
                payload.insert(fields::ITEM.into(), json!(item.id));
                payload.insert(fields::REVISION.into(), json!(job.event_id));
                payload.insert(fields::DATA.into(), data.clone());
                points.push(Point {
                    id: point_id(&item.id, i),
                    dense: vectors.next().unwrap_or_default(),
                    sparse: service.sparse_document(chunk),
                    payload,
                });
            }
        }
        let space = service.space().clone();
        let store = service.vectors();
        store.upsert(&space, points).await?;
        let ok_ids: Vec<String> = work.iter().map(|(item, _)| item.id.clone()).collect();
        if !ok_ids.is_empty() {
            // Points of earlier writes of these items (an update may have fewer chunks).
            let stale = Filter::default()
                .must(Condition::any_keyword(fields::ITEM, ok_ids.clone()))
                .must_not(Condition::keyword(fields::REVISION, &job.event_id));
            store.delete(&space, &stale).await?;
        }
        let records = &service.records;
        let now = ids::now_millis();
        let marked = records
            .mark_embedded(
                &work.iter().map(|(item, c)| (item.id.clone(), c.len() as i64)).collect::<Vec<_>>(),
                &job.event_id,
                now,
            )
            .await?;
        let superseded: Vec<String> = ok_ids.into_iter().filter(|id| !marked.contains(id)).collect();
        if !superseded.is_empty() {
            // Rewritten or deleted while this job ran: its points must not outlive it.
            let late = Filter::default()
                .must(Condition::any_keyword(fields::ITEM, superseded))
                .must(Condition::keyword(fields::REVISION, &job.event_id));
            store.delete(&space, &late).await?;
        }
        records.mark_failed(&failures, &job.event_id, now).await?;
        Ok(Outcome { processed: marked.len(), failures })
    }

    async fn record(&self, job: &Payload, tenant: &Tenant, outcome: &Outcome) -> anyhow::Result<()> {
        let error_message = outcome.failures.first().map(|(id, reason)| {
            format!(
                "{} of {} item(s) failed; first: {id}: {reason}",
                outcome.failures.len(),
                job.item_ids.len()
            )
        });
        let body = json!({
            "eventID": job.event_id,
            "eventType": PROCESSING_EVENT,
            "referenceID": job.event_id,
            "collectionID": job.collection_id,
            "collectionName": job.collection_name,
            "operation": job.operation,
            "status": if outcome.failures.is_empty() { "success" } else { "failed" },
            "processedCount": outcome.processed,
            "collectionItemIDs": job.item_ids,
            "errorMessage": error_message,
            "createdAt": ids::now_rfc3339(),
        });
        self.service
            .records
            .record_event(tenant.owner(), &job.event_id, PROCESSING_EVENT, &body, ids::now_millis())
            .await?;
        Ok(())
    }
}

impl EmbedJob {
    /// Fails the write's items still pending with `message` and records its event saying so,
    /// unless none was pending (embedded, failed or rewritten since: their own run reports
    /// them). The others count as processed.
    async fn fail_write(&self, payload: Value, message: &str) {
        let Ok(job) = serde_json::from_value::<Payload>(payload) else { return };
        let Some(environment) = Environment::parse(&job.environment) else { return };
        let tenant = Tenant { account_id: job.account_id.clone(), environment };
        let failed =
            self.service.records.fail_pending(&job.item_ids, message, &job.event_id, ids::now_millis()).await;
        let recorded = match failed {
            Ok(failed) if failed.is_empty() => Ok(()),
            Ok(failed) => {
                let processed = job.item_ids.len() - failed.len();
                let failures = failed.into_iter().map(|id| (id, message.to_string())).collect();
                self.record(&job, &tenant, &Outcome { processed, failures }).await
            }
            Err(err) => Err(err.into()),
        };
        if let Err(err) = recorded {
            tracing::error!(error = format!("{err:#}"), event_id = %job.event_id, "cannot fail a write's items");
        }
    }
}

#[async_trait]
impl JobHandler for EmbedJob {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        let job: Payload = serde_json::from_value(payload)?;
        let environment = Environment::parse(&job.environment)
            .ok_or_else(|| anyhow::anyhow!("bad environment {}", job.environment))?;
        let tenant = Tenant { account_id: job.account_id.clone(), environment };
        let items = self.service.records.claim_items_for_embedding(&job.item_ids, &job.event_id).await?;
        let last_attempt = items.iter().any(|item| item.attempts >= EMBED_ATTEMPTS);
        let ids: Vec<String> = items.iter().map(|item| item.id.clone()).collect();
        let outcome = match self.embed(&job, &tenant, items).await {
            Ok(outcome) => outcome,
            Err(err) if last_attempt => {
                // Out of retries: the items say why, and the event reports the failure.
                let reason = format!("embedding failed after {EMBED_ATTEMPTS} attempts: {err:#}");
                let failures: Vec<(String, String)> =
                    ids.into_iter().map(|id| (id, reason.clone())).collect();
                self.service.records.mark_failed(&failures, &job.event_id, ids::now_millis()).await?;
                Outcome { processed: 0, failures }
            }
            Err(err) => return Err(err),
        };
        self.record(&job, &tenant, &outcome).await
    }

    /// A write stopped at its time limit: its items still pending fail with `message` and its
    /// event reports them (left pending, they were queued again at every start).
    async fn stopped(&self, payload: Value, message: &str) {
        self.fail_write(payload, message).await
    }

    /// A write whose worker kept stopping while running it, likewise.
    async fn abandoned(&self, payload: Value, message: &str) {
        self.fail_write(payload, message).await
    }

    /// A write whose last attempt failed outside the embedding (recording it), likewise.
    async fn gave_up(&self, payload: Value, error: &str) {
        self.fail_write(payload, &format!("the write failed at every attempt: {error}")).await
    }
}
