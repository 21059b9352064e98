//! Golden datasets: typed columns with roles, rows written column by column (207 when some
//! fail), read back, built from a function's output events, and read as scoring pairs.

use crate::calls::INVOICE;
use crate::helpers::{assert_error, json, spawn_app, strings};
use base64::Engine as _;
use canon::store::records::keys::Environment;
use serde_json::{json, Value};

fn columns() -> Value {
    json!([
        {"name": "document", "role": "input", "type": "file"},
        {"name": "truth", "role": "corrected", "type": "json"},
        {"name": "schema", "role": "schema", "type": "json"}
    ])
}

#[tokio::test]
async fn a_dataset_keeps_typed_rows_and_reports_the_columns_it_could_not_store() {
    let app = spawn_app().await;
    let created = app.post("/v3/datasets", json!({"name": "Invoices", "columns": columns()})).await;
    assert_eq!(created.status(), 200);
    let dataset = json(created).await;
    let id = dataset["datasetID"].as_str().unwrap().to_string();
    assert!(id.starts_with("gds_"), "{id}");
    assert_eq!((dataset["columns"].clone(), dataset["rowCount"].clone()), (columns(), json!(0)));

    let content = base64::engine::general_purpose::STANDARD.encode(INVOICE);
    let row = json!({"columns": [
        {"columnName": "document", "value": {"fileValue": {"inputType": "text", "inputContent": content}}},
        {"columnName": "truth", "value": {"jsonValue": {"invoiceNumber": "INV-42", "total": 1234.5}}},
    ]});
    let written = app.post(&format!("/v3/datasets/{id}/rows/inv-42/columns"), row).await;
    assert_eq!(written.status(), 200);
    let written = json(written).await;
    assert_eq!(written["error"], Value::Null);
    assert_eq!(
        written["columns"][1],
        json!({"columnName": "truth", "type": "json",
        "value": {"jsonValue": {"invoiceNumber": "INV-42", "total": 1234.5}}})
    );

    let partly = json!({"columns": [
        {"columnName": "schema", "value": {"jsonValue": {"type": "object"}}},
        {"columnName": "truth", "value": {"stringValue": "not json"}},
        {"columnName": "nope", "value": {"stringValue": "x"}},
    ]});
    let response = app.post(&format!("/v3/datasets/{id}/rows/inv-42/columns"), partly).await;
    assert_eq!(response.status(), 207);
    let body = json(response).await;
    assert_eq!(strings(&body["columns"], "columnName"), ["schema"]);
    assert_eq!(strings(&body["failedColumns"], "columnName"), ["truth", "nope"]);
    assert!(body["error"].as_str().unwrap().contains("nope"), "{body}");

    let none = json!({"columns": [{"columnName": "document", "value": {"fileValue": {"inputType": "exe", "s3URL": "s3://b/k"}}}]});
    assert_error(app.post(&format!("/v3/datasets/{id}/rows/inv-43/columns"), none).await, 400).await;
    let url = json!({"columns": [{"columnName": "document", "value": {"fileValue": {"inputType": "pdf", "s3URL": "s3://bucket/a.pdf"}}}]});
    assert_eq!(app.post(&format!("/v3/datasets/{id}/rows/inv-43/columns"), url).await.status(), 200);

    let rows = json(app.get(&format!("/v3/datasets/{id}/rows")).await).await;
    assert_eq!(rows["totalCount"], 2);
    assert_eq!(strings(&rows["rows"], "rowKey"), ["inv-42", "inv-43"]);
    let first = &rows["rows"][0];
    assert_eq!(strings(&first["columns"], "columnName"), ["document", "truth", "schema"]);
    assert_eq!(first["columns"][0]["value"]["fileValue"]["inputContent"], content);
    assert_eq!(first["columns"][2]["value"]["jsonValue"], json!({"type": "object"}));
    let page = json(app.get(&format!("/v3/datasets/{id}/rows?limit=1&startingAfter=inv-42")).await).await;
    assert_eq!(strings(&page["rows"], "rowKey"), ["inv-43"]);
    let one = json(app.get(&format!("/v3/datasets/{id}/rows/inv-43")).await).await;
    assert_eq!(one["columns"][0]["value"]["fileValue"]["s3URL"], "s3://bucket/a.pdf");

    // Scoring reads rows with an input and a corrected value.
    let tenant =
        canon::graph::Tenant { account_id: app.account_id.clone(), environment: Environment::Sandbox };
    let pairs = app.app().state.datasets.pairs(&tenant, &id).await.unwrap();
    assert_eq!(
        pairs,
        vec![(
            json!({"inputType": "text", "inputContent": content}),
            json!({"invoiceNumber": "INV-42", "total": 1234.5})
        )]
    );

    let listed = json(app.get("/v3/datasets").await).await;
    assert_eq!(strings(&listed["datasets"], "datasetID"), std::slice::from_ref(&id));
    assert_eq!(listed["datasets"][0]["rowCount"], 2);
    let production = app.new_key(None, Environment::Production).await;
    let foreign =
        app.client.get(format!("{}/v3/datasets/{id}", app.address)).header("x-api-key", &production);
    assert_error(foreign.send().await.unwrap(), 404).await;

    assert_eq!(app.delete(&format!("/v3/datasets/{id}/rows/inv-43")).await.status(), 204);
    assert_error(app.get(&format!("/v3/datasets/{id}/rows/inv-43")).await, 404).await;
    assert_eq!(app.delete(&format!("/v3/datasets/{id}")).await.status(), 204);
    assert_error(app.get(&format!("/v3/datasets/{id}")).await, 404).await;
    assert_error(app.get(&format!("/v3/datasets/{id}/rows")).await, 404).await;
}

#[tokio::test]
async fn dataset_columns_are_checked() {
    let app = spawn_app().await;
    let two_inputs = json!([{"name": "a", "role": "input", "type": "file"}, {"name": "b", "role": "input", "type": "string"}]);
    assert_error(app.post("/v3/datasets", json!({"name": "x", "columns": two_inputs})).await, 400).await;
    let string_schema = json!([{"name": "s", "role": "schema", "type": "string"}]);
    assert_error(app.post("/v3/datasets", json!({"name": "x", "columns": string_schema})).await, 400).await;
    let unknown = json!([{"name": "s", "role": "label", "type": "json"}]);
    assert_error(app.post("/v3/datasets", json!({"name": "x", "columns": unknown})).await, 400).await;
    assert_error(app.post("/v3/datasets", json!({"name": " ", "columns": columns()})).await, 400).await;
}

#[tokio::test]
async fn a_dataset_is_built_from_a_functions_output_events_or_only_its_corrected_ones_in_one_call() {
    let app = spawn_app().await;
    let schema = crate::calls::invoice_schema();
    app.extract_function("invoices", schema.clone()).await;
    app.pipeline("invoice-flow", &["invoices"], &[]).await;
    let (status, call) = app.call_text("invoice-flow", INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{call}");
    let event = call["call"]["outputs"][0].clone();
    let event_id = event["eventID"].as_str().unwrap();

    let built = app
        .post("/v3/datasets/from-events", json!({"name": "from events", "functionName": "invoices"}))
        .await;
    assert_eq!(built.status(), 200);
    let dataset = json(built).await;
    assert_eq!(dataset["rowCount"], 1);
    let id = dataset["datasetID"].as_str().unwrap();
    let row = json(app.get(&format!("/v3/datasets/{id}/rows/{event_id}")).await).await;
    let value = |name: &str| {
        row["columns"].as_array().unwrap().iter().find(|c| c["columnName"] == name).unwrap()["value"].clone()
    };
    let content = base64::engine::general_purpose::STANDARD.encode(INVOICE);
    assert_eq!(value("input")["fileValue"]["inputContent"], content);
    assert_eq!(value("corrected")["jsonValue"], event["transformedContent"]);
    assert_eq!(value("schema")["jsonValue"], schema);

    // Corrected by someone: the golden value is the correction, and only corrected events
    // make a dataset that asks for them.
    let (_, second) = app.call_text("invoice-flow", INVOICE, json!({}), true).await;
    let second_id = second["call"]["outputs"][0]["eventID"].as_str().unwrap().to_string();
    let mut truth = event["transformedContent"].clone();
    truth["invoiceNumber"] = json!("INV-CHECKED");
    let feedback = app.post(&format!("/v3/events/{event_id}/feedback"), json!({"correction": truth})).await;
    assert_eq!(feedback.status(), 200);
    let all =
        json(app.post("/v3/datasets/from-events", json!({"name": "all", "functionName": "invoices"})).await)
            .await;
    assert_eq!(all["rowCount"], 2);
    let golden = json!({"name": "golden", "functionName": "invoices", "correctedOnly": true});
    let golden = json(app.post("/v3/datasets/from-events", golden).await).await;
    assert_eq!(golden["rowCount"], 1, "{golden}");
    let golden_id = golden["datasetID"].as_str().unwrap();
    let row = json(app.get(&format!("/v3/datasets/{golden_id}/rows/{event_id}")).await).await;
    let corrected =
        row["columns"].as_array().unwrap().iter().find(|c| c["columnName"] == "corrected").unwrap();
    assert_eq!(corrected["value"]["jsonValue"], truth);
    assert_error(app.get(&format!("/v3/datasets/{golden_id}/rows/{second_id}")).await, 404).await;
    let missing = json!({"name": "x", "functionName": "nope"});
    assert_error(app.post("/v3/datasets/from-events", missing).await, 404).await;
}

/// Characters of each large value below: a request carries at most 2 MB.
const LARGE: usize = 1_900_000;

#[tokio::test]
async fn dataset_reads_stop_at_their_byte_bounds_pages_shorter_and_builds_and_scores_refused_naming_them() {
    // No job workers: a score run that starts only queues its calls.
    let app = crate::helpers::spawn_app_with(Default::default(), |c| c.workers = 0).await;
    let function = app.extract_function("big", crate::calls::invoice_schema()).await;
    let created = json(app.post("/v3/datasets", json!({"name": "Large", "columns": columns()})).await).await;
    let id = created["datasetID"].as_str().unwrap().to_string();
    let content = base64::engine::general_purpose::STANDARD.encode("a short document");
    // 36 rows of ~1.9 MB: 68 MB in all, past the 64 MiB a score run reads.
    for n in 0..36 {
        let row = json!({"columns": [
            {"columnName": "document", "value": {"fileValue": {"inputType": "text", "inputContent": content}}},
            {"columnName": "truth", "value": {"jsonValue": {"note": "x".repeat(LARGE)}}},
        ]});
        let written = app.post(&format!("/v3/datasets/{id}/rows/row-{n:02}/columns"), row).await;
        assert_eq!(written.status(), 200);
    }

    // A page reads at most 16 MiB of values: 8 such rows, whatever its limit; paging on
    // reads every row once, in order.
    let mut keys: Vec<String> = Vec::new();
    loop {
        let after = keys.last().map(|k| format!("&startingAfter={k}")).unwrap_or_default();
        let page = json(app.get(&format!("/v3/datasets/{id}/rows?limit=100{after}")).await).await;
        assert_eq!(page["totalCount"], 36, "{}", page["totalCount"]);
        let rows = strings(&page["rows"], "rowKey");
        if rows.is_empty() {
            break;
        }
        assert!(rows.len() <= 8, "{} rows in one page", rows.len());
        keys.extend(rows);
    }
    let expected: Vec<String> = (0..36).map(|n| format!("row-{n:02}")).collect();
    assert_eq!(keys, expected);

    // A score run from it is refused, saying how many rows fit; one row fewer, it starts.
    let score = json!({"functionName": "big", "datasetID": id});
    let refused = assert_error(app.post("/v3/eval/score", score.clone()).await, 422).await;
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("datasetReadBytes") && message.contains("the first 35 fit"), "{refused}");
    assert_eq!(app.delete(&format!("/v3/datasets/{id}/rows/row-35")).await.status(), 204);
    assert_eq!(app.post("/v3/eval/score", score).await.status(), 202);

    // A build from 36 output events of ~1.9 MB is refused before any is read; 35 are built.
    let owner = canon::store::records::Owner { account_id: &app.account_id, environment: "sandbox" };
    let function_id = function["functionID"].as_str().unwrap();
    for n in 0..36 {
        let event_id = canon::ids::new_ksuid();
        let body = json!({"eventID": event_id, "eventType": "extract", "functionID": function_id,
                          "functionName": "big", "functionVersionNum": 1, "transformedContent": {"note": "y".repeat(LARGE)}});
        let key = format!("large-{n}");
        let event = canon::store::records::events::NewEvent {
            id: &event_id,
            event_type: "extract",
            body: &body,
            call_id: "wc_large",
            function_call_id: &key,
            workflow_id: "wf_large",
            workflow_name: "large",
            function_id,
            function_name: "big",
            function_version_num: 1,
            reference_id: &key,
            intermediate: false,
            dedupe_key: &key,
            now: canon::ids::now_millis(),
        };
        app.app().state.records.record_pipeline_event(owner, event).await.expect("event recorded");
    }
    let build = json!({"name": "all", "functionName": "big", "limit": 100});
    let refused = assert_error(app.post("/v3/datasets/from-events", build).await, 422).await;
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("datasetReadBytes") && message.contains("the first 35 fit"), "{refused}");
    assert_eq!(refused["details"]["fit"], 35, "{refused}");
    let build = json!({"name": "fits", "functionName": "big", "limit": 35});
    let built = json(app.post("/v3/datasets/from-events", build).await).await;
    assert_eq!(built["rowCount"], 35, "{built}");
}

/// A dataset holds at most its bound of rows (lowered here to 2): a new row past it is a 422
/// naming `rowsPerDataset`, an existing row is still rewritten, and a deleted row makes room.
/// The count shown is the one kept as rows come and go.
#[tokio::test]
async fn a_dataset_holds_at_most_its_bound_of_rows_and_a_deleted_row_makes_room() {
    let app = crate::helpers::spawn_app_with(canon::jobs::Handlers::default(), |config| {
        config.max_dataset_rows = 2;
    })
    .await;
    let dataset = json(app.post("/v3/datasets", json!({"name": "Small", "columns": columns()})).await).await;
    let id = dataset["datasetID"].as_str().unwrap().to_string();
    let (app, id) = (&app, &id);
    let write = |key: &str, total: i64| {
        let body = json!({"columns": [{"columnName": "truth", "value": {"jsonValue": {"total": total}}}]});
        let path = format!("/v3/datasets/{id}/rows/{key}/columns");
        async move { app.post(&path, body).await }
    };
    assert_eq!(write("a", 1).await.status(), 200);
    assert_eq!(write("b", 2).await.status(), 200);
    let refused = assert_error(write("c", 3).await, 422).await;
    assert_eq!(refused["details"], json!({"limit": "rowsPerDataset", "max": 2}), "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("delete rows"), "{refused}");
    assert_eq!(write("a", 10).await.status(), 200, "a row it holds is rewritten");
    let shown = json(app.get(&format!("/v3/datasets/{id}")).await).await;
    assert_eq!(shown["rowCount"], 2);

    assert_eq!(app.delete(&format!("/v3/datasets/{id}/rows/b")).await.status(), 204);
    assert_eq!(json(app.get(&format!("/v3/datasets/{id}")).await).await["rowCount"], 1);
    assert_eq!(write("c", 3).await.status(), 200);
    let rows = json(app.get(&format!("/v3/datasets/{id}/rows")).await).await;
    assert_eq!(strings(&rows["rows"], "rowKey"), ["a", "c"]);
    assert_eq!(rows["rows"][0]["columns"][0]["value"]["jsonValue"], json!({"total": 10}));
    assert_eq!(json(app.get("/v3/datasets").await).await["datasets"][0]["rowCount"], 2);
}

/// Two writers of the same new rows at once count each row once (the count bounds rows).
#[tokio::test]
async fn concurrent_writes_of_the_same_new_rows_count_each_row_once() {
    let app = spawn_app().await;
    let dataset = json(app.post("/v3/datasets", json!({"name": "Raced", "columns": columns()})).await).await;
    let id = dataset["datasetID"].as_str().unwrap().to_string();
    let app = &app;
    let writes = (0..40).map(|i| {
        let body = json!({"columns": [{"columnName": "truth", "value": {"jsonValue": {"n": i}}}]});
        let path = format!("/v3/datasets/{id}/rows/row-{}/columns", i % 10);
        async move { app.post(&path, body).await }
    });
    for response in futures::future::join_all(writes).await {
        assert_eq!(response.status(), 200);
    }
    assert_eq!(json(app.get(&format!("/v3/datasets/{id}")).await).await["rowCount"], 10);
}

/// Datasets written before the kept count (migration 26) show their rows counted.
#[tokio::test]
async fn a_dataset_written_before_the_upgrade_shows_its_rows_counted() {
    use canon::store::records::Owner;
    let dir = tempfile::tempdir().expect("temp dir");
    let (records, url) = crate::helpers::records_through(dir.path(), 25).await;
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    sqlx::query(
        "INSERT INTO datasets (id, account_id, environment, name, description, columns, created_at, updated_at) \
         VALUES ('gds_old', 'acc_old', 'sandbox', 'Old', NULL, '[]', 1, 1)",
    )
    .execute(&raw)
    .await
    .expect("an older dataset");
    for (row, column) in [("r1", "truth"), ("r1", "document"), ("r2", "truth"), ("r3", "truth")] {
        sqlx::query(
            "INSERT INTO dataset_cells (dataset_id, row_key, column_name, value, updated_at) \
             VALUES ('gds_old', $1, $2, '{}', 1)",
        )
        .bind(row)
        .bind(column)
        .execute(&raw)
        .await
        .expect("its cells");
    }
    raw.close().await;
    records.migrate().await.expect("upgrade");
    let owner = Owner { account_id: "acc_old", environment: "sandbox" };
    let found = records.find_dataset(owner, "gds_old").await.expect("read").expect("the dataset");
    assert_eq!(found.row_count, 3);
}
