"""The official Python SDK (bem-sdk), unchanged, against a running canon: the `eval`
resource, `events.submit_feedback` and the accuracy methods of `functions`, as one loop:
calls → feedback → metrics → evaluation → review → new version → regression → corrections
copied → compare shows the lift → a score run.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_accuracy` with BEM_BASE_URL and
BEM_API_KEY set; prints one line per check and exits non-zero on the first failure.
"""
import base64
import time

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)


def schema(knows_po_label):
    po = {"type": "string"}
    if knows_po_label:
        po["x-labels"] = ["PO"]
    return {"type": "object", "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}, "poNumber": po}}


def text(n):
    return f"Invoice number: INV-{n}\nTotal: $1,234.50\nPO: PO-{n}\n"


def file(n):
    return {"single_file": {"input_content": base64.b64encode(text(n).encode()).decode(), "input_type": "text"}}


client.functions.create(function_name="sdk-acc", type="extract", output_schema_name="Invoice", output_schema=schema(False))
client.workflows.create(name="sdk-acc", main_node_name="sdk-acc", nodes=[{"name": "sdk-acc", "function": {"name": "sdk-acc"}}])
events = [client.workflows.call("sdk-acc", input=file(n), wait=True).call.outputs[0] for n in (1, 2)]
print("setup: two calls of version 1")

for n, event in zip((1, 2), events):
    answer = client.events.submit_feedback(
        event.event_id, correction={"invoiceNumber": f"INV-{n}", "total": 1234.5, "poNumber": f"PO-{n}"}
    )
    assert answer.event_id == event.event_id and answer.function_type == "extract", answer
print("events.submit_feedback: corrections recorded")

metrics = client.functions.get_metrics(function_names=["sdk-acc"])
assert metrics.total_count == 1, metrics
m = metrics.functions[0]
assert m.total_labeled_results == 2 and (m.metrics.tp, m.metrics.fn) == (4, 2), m
assert abs(m.metrics.recall - 4 / 6) < 1e-9, m
print("functions.get_metrics: the confusion matrix from corrections")

queued = client.eval.trigger_evaluation(transformation_ids=[e.transformation_id for e in events])
assert queued.queued == 2, queued
ids = ",".join(e.event_id for e in events)
for _ in range(100):
    results = client.eval.results.retrieve_results(event_ids=ids)
    if not results.pending:
        break
    time.sleep(0.1)
assert set(results.results) == {e.event_id for e in events}, results
assert results.results[events[0].event_id]["fields"]["/invoiceNumber"]["confidence"] == 1.0, results
print("eval: triggered, results keyed by event ID with per-field confidence")

review = client.functions.estimate_review_requirements(function_name="sdk-acc", confidence_levels=[90, 95], confidence_method="wilson")
assert review.estimate.total_transformations == 2 and review.estimate.labeled_transformations == 2, review
assert review.estimate.threshold_matrix and "95" in review.estimate.threshold_matrix[0].precision, review
print("functions.estimate_review_requirements: buckets and a threshold matrix")

client.functions.update("sdk-acc", type="extract", output_schema=schema(True))
run = client.functions.regression.run(function_name="sdk-acc", sample_size=5)
assert run.result.total_samples == 2, run
for item in run.result.calls:
    for _ in range(100):
        if client.calls.retrieve(item.call_id).call.status in ("completed", "failed"):
            break
        time.sleep(0.1)
applied = client.functions.regression.apply_corrections(function_name="sdk-acc", baseline_version_num=1, comparison_version_num=2)
assert applied.applied == 2 and len(applied.applied_event_ids) == 2, applied
compared = client.functions.compare_metrics(function_name="sdk-acc", is_regression=True)
recall = compared.aggregate_comparison.recall
assert (compared.baseline_version_num, compared.comparison_version_num) == (1, 2), compared
assert recall.comparison_value == 1.0 and recall.lift_percent > 0, compared
assert [c.field_path for c in compared.field_metrics_changes] == ["/poNumber"], compared
print("functions.regression + compare_metrics: version 2 lifts recall on the same inputs")

pair = {"input": {"input_content": base64.b64encode(text(9).encode()).decode(), "input_type": "text"},
        "expected": {"invoiceNumber": "INV-9", "total": 1234.5, "poNumber": "PO-9"}}
created = client.eval.score.create(function_name="sdk-acc", pairs=[pair])
for _ in range(100):
    scored = client.eval.score.retrieve(created.score_run_id)
    if scored.status in ("completed", "error", "cancelled"):
        break
    time.sleep(0.1)
assert scored.status == "completed" and scored.aggregate.matches == 3, scored
late = client.eval.score.cancel(created.score_run_id)
assert late.status == "completed" and late.aggregate.matches == 3, late
print("eval.score: a run over pairs, compared on read; cancelling it once finished keeps it completed")

print("bem-sdk: all checks passed")
