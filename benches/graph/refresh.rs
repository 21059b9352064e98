//! Merge-suggestion refresh time: a tenant of its own with near-duplicate people, one
//! `POST /v3/merge-suggestions/refresh`, timed end to end.

use crate::common::{self, Bench};
use serde_json::{json, Value};
use std::time::Instant;

/// What one refresh took and found.
pub struct Refresh {
    pub entities: usize,
    pub seconds: f64,
    /// The refresh's counts, or the status and body it failed with.
    pub result: Result<Value, String>,
}

/// Seeds `n` people straight to the engine (every tenth a copy of the one before with two
/// letters swapped), then refreshes through the API and times it.
pub async fn run(bench: &Bench, n: usize) -> anyhow::Result<Refresh> {
    let (tenant, key) = bench.other_tenant(&format!("refresh-{}", canon::ids::new_id("run"))).await?;
    common::raw_seed_named(&bench.app.state.graph, &tenant, 0..n, "Person", &near_duplicate).await?;
    let started = Instant::now();
    let response = bench
        .client
        .post(format!("{}/v3/merge-suggestions/refresh", bench.base))
        .header("x-api-key", &key)
        .json(&json!({}))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let seconds = started.elapsed().as_secs_f64();
    // A refresh that fails is a figure too (with what the API said), not the end of the run.
    let result = if status.is_success() { Ok(body) } else { Err(format!("{status}: {body}")) };
    Ok(Refresh { entities: n, seconds, result })
}

impl Refresh {
    pub fn line(&self, engine: &str) -> String {
        let result = match &self.result {
            Ok(result) => result,
            Err(err) => {
                return format!(
                    "merge-suggestion refresh of {} people on {engine}: FAILED after {:.2} s: {err}",
                    self.entities, self.seconds
                )
            }
        };
        format!(
            "merge-suggestion refresh of {} people on {engine}: {:.2} s ({} pairs scored, {} merged, {} suggested; {} copies planted)",
            self.entities,
            self.seconds,
            result["compared"],
            result["autoMerged"],
            result["suggested"],
            self.entities / 10
        )
    }
}

/// A made-up name of 20 syllables, every tenth a near copy of the one before.
fn near_duplicate(i: usize) -> String {
    common::synthetic_name(i, 20, 10)
}
