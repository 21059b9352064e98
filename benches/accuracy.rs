//! Function accuracy: `GET /v3/functions/metrics` for a function with 100,000 labelled events
//! and `POST /v3/functions/review` for one with 10,000 evaluated (and labelled) events, each
//! beside the time to read the same rows alone (the records' plain SELECTs, no HTTP).
//! Goal: ≤ 2× that read.

mod common;

use canon::store::records::accuracy::{EventRow, NewCorrection};
use canon::store::records::accuracy_runs::Queued;
use canon::store::records::events::NewEvent;
use canon::store::records::Owner;
use canon::store::records::Records;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const LABELLED: usize = 100_000;
const EVALUATED: usize = 10_000;
const ROUNDS: usize = 5;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bench = common::start(|_| {}).await?;
    let records = &bench.app.state.records;
    let owner = bench.tenant.owner();
    let seeding = Instant::now();
    let metrics_id = function(&bench, "inv").await?;
    seed(records, owner, &metrics_id, "inv", LABELLED, 0).await?;
    let review_id = function(&bench, "rev").await?;
    seed(records, owner, &review_id, "rev", EVALUATED, EVALUATED).await?;
    println!(
        "accuracy: seeded {LABELLED} labelled events of one function and {EVALUATED} evaluated, labelled ones of another in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );

    let metrics = time(|| async {
        let response = bench.get("/v3/functions/metrics?functionNames=inv").send().await?;
        anyhow::ensure!(response.status() == 200, "metrics answered {}", response.status());
        let body: Value = response.json().await?;
        anyhow::ensure!(body["functions"][0]["totalLabeledResults"] == LABELLED, "{body}");
        Ok(())
    })
    .await?;
    let metrics_read = time(|| async {
        records.read_correction_rows(owner, &metrics_id).await?;
        Ok(())
    })
    .await?;
    let review = time(|| async {
        let response = bench.post("/v3/functions/review", &json!({"functionName": "rev"})).send().await?;
        anyhow::ensure!(response.status() == 200, "review answered {}", response.status());
        let body: Value = response.json().await?;
        anyhow::ensure!(body["estimate"]["confidenceDistribution"]["low"] == EVALUATED / 2, "{body}");
        Ok(())
    })
    .await?;
    // Review reads the evaluations and the version's corrections (for its metrics).
    let review_read = time(|| async {
        records.read_evaluation_rows(owner, &review_id).await?;
        records.read_correction_rows(owner, &review_id).await?;
        Ok(())
    })
    .await?;
    println!(
        "  metrics, {LABELLED} labelled events x 3 fields: {} ms per request (median of {ROUNDS})",
        common::ms(metrics)
    );
    println!(
        "    plain read of the same rows: {} ms; ratio {:.2} (goal <= 2)",
        common::ms(metrics_read),
        metrics.as_secs_f64() / metrics_read.as_secs_f64()
    );
    println!(
        "  review, {EVALUATED} evaluated, labelled events: {} ms per request (median of {ROUNDS})",
        common::ms(review)
    );
    println!(
        "    plain read of the same rows: {} ms; ratio {:.2} (goal <= 2)",
        common::ms(review_read),
        review.as_secs_f64() / review_read.as_secs_f64()
    );
    bench.stop().await;
    Ok(())
}

/// Creates an extract function with a three-field schema; returns its ID.
async fn function(bench: &common::Bench, name: &str) -> anyhow::Result<String> {
    let schema = json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string"}, "total": {"type": "number"}, "dueDate": {"type": "string"}}});
    let created: Value = bench
        .post("/v3/functions", &json!({"functionName": name, "type": "extract", "outputSchema": schema}))
        .send()
        .await?
        .json()
        .await?;
    Ok(created["function"]["functionID"].as_str().unwrap_or_default().to_string())
}

/// `count` labelled events of one function (every third total wrong, every fifth due date
/// missed); the first `evaluated` also evaluated, with confidence (n % 100) / 100.
async fn seed(
    records: &Records,
    owner: Owner<'_>,
    function_id: &str,
    name: &str,
    count: usize,
    evaluated: usize,
) -> anyhow::Result<()> {
    for n in 0..count {
        let id = canon::ids::new_ksuid();
        let key = format!("{name}-{n}");
        let output = json!({"invoiceNumber": format!("INV-{n}"), "total": n % 7, "dueDate": "2026-01-31"});
        let body = json!({"eventID": id, "eventType": "extract", "transformationID": format!("tr_{key}"),
            "transformedContent": output});
        let new = NewEvent {
            id: &id,
            event_type: "extract",
            body: &body,
            call_id: "wc_bench",
            function_call_id: &key,
            workflow_id: "wf_bench",
            workflow_name: "flow",
            function_id,
            function_name: name,
            function_version_num: 1,
            reference_id: "",
            intermediate: false,
            dedupe_key: &key,
            now: canon::ids::now_millis(),
        };
        records.record_pipeline_event(owner, new).await?;
        let event = EventRow {
            id: id.clone(),
            event_type: "extract".into(),
            body: body.clone(),
            call_id: Some("wc_bench".into()),
            function_call_id: Some(key.clone()),
            function_id: Some(function_id.to_string()),
            function_version_num: Some(1),
            reference_id: None,
        };
        let fields = vec![
            ("/invoiceNumber".to_string(), "tp"),
            ("/total".to_string(), if n % 3 == 0 { "fp" } else { "tp" }),
            ("/dueDate".to_string(), if n % 5 == 0 { "fn" } else { "tp" }),
        ];
        let correction = json!({"invoiceNumber": format!("INV-{n}")});
        let new = NewCorrection {
            event: &event,
            function_type: "extract",
            correction: &correction,
            order_matching: true,
            fields: &fields,
            body: &body,
            now: canon::ids::now_millis(),
        };
        records.save_correction(owner, new).await?;
        if n < evaluated {
            // A job kind no worker runs: the benchmark writes the result itself.
            let queued = records
                .queue_evaluation(owner, &event, &format!("tr_{key}"), "0.1.0-gemini", "bench", 0)
                .await?;
            anyhow::ensure!(queued == Queued::Queued, "evaluation queued");
            let confidence = (n % 100) as f64 / 100.0;
            records.finish_evaluation(&id, Ok((&json!({"confidence": confidence}), confidence)), 0).await?;
        }
    }
    Ok(())
}

/// The median time of `ROUNDS` runs of `work`.
async fn time<F, Fut>(work: F) -> anyhow::Result<Duration>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut samples = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        work().await?;
        samples.push(started.elapsed());
    }
    Ok(common::percentile(&mut samples, 0.5))
}
