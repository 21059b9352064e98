//! Views: versioned definitions, and table and aggregation data over output events checked
//! against numbers computed here from the events read back through `/v3/outputs`.

use crate::helpers::{assert_error, json, spawn_app, strings, TestApp};
use canon::store::records::events::NewEvent;
use canon::store::records::keys::Environment;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const VENDORS: [&str; 7] = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne"];

fn invoice_schema() -> Value {
    json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string"},
        "total": {"type": ["number", "string"]},
        "vendor": {"type": ["string", "null"]},
        "details": {"type": "object", "properties": {"pages": {"type": "integer"}}}
    }})
}

impl TestApp {
    /// An extract function with the invoice schema; returns its ID.
    async fn invoice_function(&self, name: &str) -> String {
        let body = json!({"functionName": name, "type": "extract", "outputSchemaName": "Invoice",
                          "outputSchema": invoice_schema()});
        let response = self.post("/v3/functions", body).await;
        assert_eq!(response.status(), 200, "creating function {name}");
        json(response).await["function"]["functionID"].as_str().unwrap().to_string()
    }

    async fn put_json(&self, path: &str, body: Value) -> reqwest::Response {
        self.request(Method::PUT, path).json(&body).send().await.expect("request sent")
    }

    /// Records an output event of a function straight in the record store, as a call would.
    async fn record_output(&self, function: (&str, &str), n: usize, content: Value, created_at: i64) {
        let id = canon::ids::new_ksuid();
        let body = json!({"eventID": id, "eventType": "extract", "createdAt": canon::ids::millis_rfc3339(created_at),
                          "functionID": function.0, "functionName": function.1, "functionVersionNum": 1,
                          "callID": "wc_views", "referenceID": format!("ref-{n}"), "transformedContent": content});
        let key = format!("views-{}-{n}", function.1);
        let event = NewEvent {
            id: &id,
            event_type: "extract",
            body: &body,
            call_id: "wc_views",
            function_call_id: &key,
            workflow_id: "wf_views",
            workflow_name: "views",
            function_id: function.0,
            function_name: function.1,
            function_version_num: 1,
            reference_id: &format!("ref-{n}"),
            intermediate: false,
            dedupe_key: &key,
            now: created_at,
        };
        let owner = canon::store::records::Owner { account_id: &self.account_id, environment: "sandbox" };
        self.app().state.records.record_pipeline_event(owner, event).await.expect("event recorded");
    }

    /// Every output event of a function, through the API.
    async fn outputs_of(&self, function_name: &str) -> Vec<Value> {
        let mut events = Vec::new();
        let mut cursor = String::new();
        loop {
            let after = if cursor.is_empty() { String::new() } else { format!("&startingAfter={cursor}") };
            let page =
                json(self.get(&format!("/v3/outputs?functionNames={function_name}&limit=100{after}")).await)
                    .await;
            let items = page["outputs"].as_array().expect("outputs").clone();
            let Some(last) = items.last() else { break };
            cursor = last["eventID"].as_str().unwrap().to_string();
            events.extend(items);
        }
        events
    }
}

fn view_body(functions: Value) -> Value {
    json!({
        "name": "Invoices by vendor",
        "description": "what the extractors found",
        "functions": functions,
        "columns": [
            {"name": "number", "valueSchemaPath": ["invoiceNumber"], "displayOrderIndex": 0},
            {"name": "vendor", "valueSchemaPath": ["vendor"], "displayOrderIndex": 2},
            {"name": "total", "valueSchemaPath": ["total"], "displayOrderIndex": 1},
            {"name": "pages", "valueSchemaPath": ["details", "pages"], "displayOrderIndex": 3}
        ],
        "filters": [{"columnName": "vendor", "filterType": "is_not_null"}],
        "aggregations": [{"name": "per vendor", "function": "count", "groupByColumnName": "vendor", "displayType": "bar_chart"}]
    })
}

#[tokio::test]
async fn a_view_is_created_updated_into_a_new_version_listed_and_deleted() {
    let app = spawn_app().await;
    let invoices = app.invoice_function("invoices").await;
    app.invoice_function("receipts").await;
    let created = app.post("/v3/views", view_body(json!([{"name": "invoices"}]))).await;
    assert_eq!(created.status(), 200);
    let view = json(created).await;
    let id = view["viewID"].as_str().unwrap().to_string();
    assert!(id.starts_with("vw_"), "{id}");
    assert_eq!(view["currentVersionNum"], 1);
    assert_eq!(view["functions"], json!([{"id": invoices, "name": "invoices"}]));
    assert_eq!(view["columns"][3]["valueSchemaPath"], json!(["details", "pages"]));
    assert_eq!(
        view["filters"][0],
        json!({"columnName": "vendor", "filterType": "is_not_null", "string": null, "number": null})
    );
    assert_eq!(view["aggregations"][0]["displayType"], "bar_chart");
    let first = json(app.get(&format!("/v3/views/{id}")).await).await;
    assert_eq!(first, view, "read back as created");

    let mut changed = view_body(json!([{"name": "receipts"}, {"id": invoices}]));
    changed["name"] = json!("Receipts too");
    changed["filters"] = json!([{"columnName": "total", "filterType": "greater_than_number", "number": 10}]);
    let updated = json(app.put_json(&format!("/v3/views/{id}"), changed).await).await;
    assert_eq!(
        (updated["currentVersionNum"].clone(), updated["name"].clone()),
        (json!(2), json!("Receipts too"))
    );
    assert_eq!(updated["functions"].as_array().unwrap().len(), 2);
    let old = json(app.get(&format!("/v3/views/{id}?versionNum=1")).await).await;
    assert_eq!(old["name"], "Invoices by vendor", "version 1 is unchanged");
    assert_eq!(old["filters"], view["filters"]);
    assert_eq!((old["versionNum"].clone(), old["currentVersionNum"].clone()), (json!(1), json!(2)));
    assert_error(app.get(&format!("/v3/views/{id}?versionNum=3")).await, 404).await;

    let other = json(app.post("/v3/views", view_body(json!([{"name": "invoices"}]))).await).await;
    let other_id = other["viewID"].as_str().unwrap().to_string();
    let all = json(app.get("/v3/views").await).await;
    assert_eq!(strings(&all["views"], "viewID"), vec![id.clone(), other_id.clone()]);
    let by_function = json(app.get("/v3/views?functionNames=receipts").await).await;
    assert_eq!(strings(&by_function["views"], "viewID"), vec![id.clone()]);
    // Names and IDs both hold, in one query of the store.
    let both = json(app.get(&format!("/v3/views?functionNames=receipts&functionIDs={invoices}")).await).await;
    assert_eq!(strings(&both["views"], "viewID"), vec![id.clone()]);
    let named = json(app.get(&format!("/v3/views?functionNames=invoices&viewIDs={other_id}")).await).await;
    assert_eq!(strings(&named["views"], "viewID"), vec![other_id.clone()]);
    let nothing =
        json(app.get(&format!("/v3/views?functionNames=receipts,nosuch&viewIDs={other_id}")).await).await;
    assert_eq!(strings(&nothing["views"], "viewID"), Vec::<String>::new());
    let by_name = json(app.get("/v3/views?viewNameSubstring=RECEIPTS").await).await;
    assert_eq!(strings(&by_name["views"], "viewID"), vec![id.clone()]);
    let desc = json(app.get("/v3/views?sortOrder=desc&limit=1").await).await;
    assert_eq!(strings(&desc["views"], "viewID"), vec![other_id.clone()]);
    let after = json(app.get(&format!("/v3/views?startingAfter={id}")).await).await;
    assert_eq!(strings(&after["views"], "viewID"), vec![other_id.clone()]);
    let picked = json(app.get(&format!("/v3/views?viewIDs={other_id}&functionIDs={invoices}")).await).await;
    assert_eq!(strings(&picked["views"], "viewID"), vec![other_id.clone()]);

    assert_eq!(app.delete(&format!("/v3/views/{id}")).await.status(), 204);
    assert_error(app.get(&format!("/v3/views/{id}")).await, 404).await;
    assert_error(app.get(&format!("/v3/views/{id}?versionNum=1")).await, 404).await;
    assert_error(app.delete(&format!("/v3/views/{id}")).await, 404).await;
}

#[tokio::test]
async fn a_column_no_function_can_produce_is_refused_naming_the_path() {
    let app = spawn_app().await;
    app.invoice_function("invoices").await;
    let mut body = view_body(json!([{"name": "invoices"}]));
    body["columns"][1]["valueSchemaPath"] = json!(["details", "supplier"]);
    let refused = assert_error(app.post("/v3/views", body).await, 422).await;
    assert!(refused["message"].as_str().unwrap().contains("details.supplier"), "{refused}");
    assert_eq!(refused["details"]["path"], json!(["details", "supplier"]));

    let mut body = view_body(json!([{"name": "invoices"}]));
    body["filters"] = json!([{"columnName": "nope", "filterType": "is_null"}]);
    assert_error(app.post("/v3/views", body).await, 422).await;
    let mut body = view_body(json!([{"name": "invoices"}]));
    body["filters"] = json!([{"columnName": "total", "filterType": "less_than_number"}]);
    assert_error(app.post("/v3/views", body).await, 400).await;
    let mut body = view_body(json!([{"name": "invoices"}]));
    body["filters"] = json!([{"columnName": "total", "filterType": "like"}]);
    assert_error(app.post("/v3/views", body).await, 400).await;
    let mut body = view_body(json!([{"name": "invoices"}]));
    body["aggregations"] = json!([{"name": "s", "function": "sum"}]);
    assert_error(app.post("/v3/views", body).await, 400).await;
    assert_error(app.post("/v3/views", view_body(json!([{"name": "missing"}]))).await, 422).await;
    assert_error(app.post("/v3/views", view_body(json!([]))).await, 400).await;
}

#[tokio::test]
async fn another_environments_view_is_not_found() {
    let app = spawn_app().await;
    app.invoice_function("invoices").await;
    let view = json(app.post("/v3/views", view_body(json!([{"name": "invoices"}]))).await).await;
    let id = view["viewID"].as_str().unwrap();
    let production = app.new_key(None, Environment::Production).await;
    let as_production = |method: Method, path: &str| {
        app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &production)
    };
    let read = as_production(Method::GET, &format!("/v3/views/{id}")).send().await.unwrap();
    assert_error(read, 404).await;
    let put = as_production(Method::PUT, &format!("/v3/views/{id}"))
        .json(&view_body(json!([{"name": "invoices"}])));
    assert_error(put.send().await.unwrap(), 404).await;
    assert_error(as_production(Method::DELETE, &format!("/v3/views/{id}")).send().await.unwrap(), 404).await;
    let listed: Value = as_production(Method::GET, "/v3/views").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["views"], json!([]));
    assert_eq!(
        app.get(&format!("/v3/views/{id}")).await.status(),
        200,
        "still there for its own environment"
    );
}

/// The output of invoice `n` of a function: totals repeat, some vendors are missing or
/// null, some totals are text or booleans, every fifth has a page count.
fn content(n: usize, receipts: bool) -> Value {
    let mut fields = serde_json::Map::new();
    fields.insert("invoiceNumber".into(), json!(format!("INV-{}", n % 450)));
    let total = (n % 97) as f64 * if receipts { 2.0 } else { 1.5 };
    // Text and booleans where a number belongs: SQLite compares them too (as text, and as 1
    // or 0), so every number filter must test the type.
    let total = match n {
        n if n.is_multiple_of(31) => json!(format!("{total}")),
        n if n % 37 == 1 => json!(n % 2 == 0),
        _ => json!(total),
    };
    fields.insert("total".into(), total);
    match n % 13 {
        0 => {}
        1 => {
            fields.insert("vendor".into(), Value::Null);
        }
        _ => {
            fields.insert("vendor".into(), json!(VENDORS[(n * 7 + usize::from(receipts)) % VENDORS.len()]));
        }
    }
    if n.is_multiple_of(5) {
        fields.insert("details".into(), json!({"pages": n % 4}));
    }
    Value::Object(fields)
}

/// What a filter keeps, computed from an event's output.
fn keeps(filter: &Value, output: &Value) -> bool {
    let column = filter["columnName"].as_str().unwrap();
    let value = value_of(column, output);
    let number = filter["number"].as_f64();
    match filter["filterType"].as_str().unwrap() {
        "equals_string" => value.as_str() == filter["string"].as_str(),
        "equals_number" => value.is_number() && value.as_f64() == number,
        "less_than_number" => value.is_number() && value.as_f64().unwrap() < number.unwrap(),
        "less_than_equal_number" => value.is_number() && value.as_f64().unwrap() <= number.unwrap(),
        "greater_than_number" => value.is_number() && value.as_f64().unwrap() > number.unwrap(),
        "greater_than_equal_number" => value.is_number() && value.as_f64().unwrap() >= number.unwrap(),
        "is_null" => value.is_null(),
        "is_not_null" => !value.is_null(),
        other => panic!("filter {other}"),
    }
}

/// A column's value in an output, as the view's paths say.
fn value_of<'a>(column: &str, output: &'a Value) -> &'a Value {
    match column {
        "number" => &output["invoiceNumber"],
        "pages" => &output["details"]["pages"],
        other => &output[other],
    }
}

/// The aggregation of `values` (one per row) as the test understands the functions.
fn aggregate(function: &str, values: &[&Value]) -> f64 {
    let numbers: Vec<f64> = values.iter().filter_map(|v| v.as_f64()).collect();
    match function {
        "count" => values.len() as f64,
        "count_distinct" => {
            let distinct: std::collections::BTreeSet<String> =
                values.iter().filter(|v| !v.is_null()).map(|v| v.to_string()).collect();
            distinct.len() as f64
        }
        "sum" => numbers.iter().sum(),
        "average" if numbers.is_empty() => 0.0,
        "average" => numbers.iter().sum::<f64>() / numbers.len() as f64,
        "min" => numbers.iter().copied().reduce(f64::min).unwrap_or(0.0),
        "max" => numbers.iter().copied().reduce(f64::max).unwrap_or(0.0),
        other => panic!("function {other}"),
    }
}

#[tokio::test]
async fn table_and_aggregation_data_over_a_thousand_outputs_match_the_events_themselves() {
    let app = spawn_app().await;
    let invoices = app.invoice_function("invoices").await;
    let receipts = app.invoice_function("receipts").await;
    let now = canon::ids::now_millis();
    for n in 0..600 {
        app.record_output((&invoices, "invoices"), n, content(n, false), now - (n as i64 % 50)).await;
    }
    for n in 0..400 {
        app.record_output((&receipts, "receipts"), n, content(n, true), now - (n as i64 % 50)).await;
    }
    // Outside the window: two days old.
    for n in 600..620 {
        app.record_output((&invoices, "invoices"), n, content(n, false), now - 2 * 86_400_000).await;
    }
    let window = json!({"start": canon::ids::millis_rfc3339(now - 3_600_000), "end": canon::ids::millis_rfc3339(now + 3_600_000)});
    let start = now - 3_600_000;

    // The events as a user reads them, and the ones inside the window.
    let mut events: Vec<Value> = app.outputs_of("invoices").await;
    events.extend(app.outputs_of("receipts").await);
    assert_eq!(events.len(), 1_020);
    // Oldest first: by creation time, then by event ID.
    let created = |e: &Value| {
        chrono::DateTime::parse_from_rfc3339(e["createdAt"].as_str().unwrap()).unwrap().timestamp_millis()
    };
    let mut rows: Vec<&Value> = events.iter().filter(|e| created(e) >= start).collect();
    rows.sort_by(|a, b| (created(a), a["eventID"].as_str()).cmp(&(created(b), b["eventID"].as_str())));
    assert_eq!(rows.len(), 1_000);

    let both = json!([{"name": "invoices"}, {"name": "receipts"}]);
    let filters = [
        json!({"columnName": "vendor", "filterType": "equals_string", "string": "Acme"}),
        json!({"columnName": "total", "filterType": "equals_number", "number": 15}),
        json!({"columnName": "total", "filterType": "less_than_number", "number": 30}),
        json!({"columnName": "total", "filterType": "less_than_equal_number", "number": 30}),
        json!({"columnName": "total", "filterType": "greater_than_number", "number": 100.5}),
        json!({"columnName": "total", "filterType": "greater_than_equal_number", "number": 100.5}),
        json!({"columnName": "vendor", "filterType": "is_null"}),
        json!({"columnName": "vendor", "filterType": "is_not_null"}),
        json!({"columnName": "pages", "filterType": "is_not_null"}),
    ];
    for filter in &filters {
        let mut body = view_body(both.clone());
        body["filters"] = json!([filter]);
        body["timeWindow"] = window.clone();
        body["limit"] = json!(200);
        body["offset"] = json!(10);
        let response = app.post("/v3/views/table-data", body).await;
        assert_eq!(response.status(), 200, "{filter}");
        let table = json(response).await;
        let expected: Vec<&&Value> =
            rows.iter().filter(|e| keeps(filter, &e["transformedContent"])).collect();
        assert!(!expected.is_empty(), "the data exercises {filter}");
        assert_eq!(table["totalCount"], expected.len(), "{filter}");
        let page: Vec<&str> =
            expected.iter().skip(10).take(200).map(|e| e["eventID"].as_str().unwrap()).collect();
        assert_eq!(strings(&table["rows"], "eventID"), page, "{filter}");
        for row in table["rows"].as_array().unwrap() {
            let event = rows.iter().find(|e| e["eventID"] == row["eventID"]).unwrap();
            let names: Vec<&str> = row["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["columnName"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["number", "total", "vendor", "pages"], "in display order");
            let output = &event["transformedContent"];
            assert_eq!(row["columns"][0]["value"], output["invoiceNumber"]);
            assert_eq!(row["columns"][1]["value"], output["total"]);
            assert_eq!(row["columns"][2]["value"], output["vendor"]);
            assert_eq!(row["columns"][3]["value"], output["details"]["pages"]);
        }
    }

    // A function named twice (by name and by ID) is read once.
    let mut body = view_body(json!([{"name": "receipts"}, {"id": receipts}]));
    body["filters"] = json!([]);
    body["timeWindow"] = window.clone();
    body["limit"] = json!(200);
    body["offset"] = json!(150);
    let table = json(app.post("/v3/views/table-data", body).await).await;
    let receipts_rows: Vec<&str> = rows
        .iter()
        .filter(|e| e["functionName"] == "receipts")
        .map(|e| e["eventID"].as_str().unwrap())
        .collect();
    assert_eq!(table["totalCount"], 400);
    assert_eq!(strings(&table["rows"], "eventID"), receipts_rows[150..350]);

    // Grouped aggregations of each function, and an ungrouped one over both.
    let functions = ["count", "count_distinct", "sum", "average", "min", "max"];
    let aggregations: Vec<Value> = functions
        .iter()
        .map(|f| json!({"name": f, "function": f, "aggregateColumnName": if *f == "count_distinct" { "number" } else { "total" },
                        "groupByColumnName": "vendor"}))
        .collect();
    for function in ["invoices", "receipts"] {
        let mut body = view_body(json!([{"name": function}]));
        body["filters"] = json!([{"columnName": "total", "filterType": "greater_than_number", "number": 3}]);
        body["aggregations"] = json!(aggregations);
        body["timeWindow"] = window.clone();
        let response = app.post("/v3/views/aggregation-data", body).await;
        assert_eq!(response.status(), 200);
        let result = json(response).await;
        let mine: Vec<&&Value> = rows
            .iter()
            .filter(|e| e["functionName"] == function)
            .filter(|e| e["transformedContent"]["total"].as_f64().is_some_and(|t| t > 3.0))
            .collect();
        for (i, name) in functions.iter().enumerate() {
            let column = if *name == "count_distinct" { "invoiceNumber" } else { "total" };
            let mut groups: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
            for event in &mine {
                let output = &event["transformedContent"];
                let group = output["vendor"].as_str().unwrap_or_default().to_string();
                groups.entry(group).or_default().push(&output[column]);
            }
            let got = &result["aggregations"][i];
            assert_eq!(got["name"], *name);
            let got: BTreeMap<String, f64> = got["groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| (g["groupName"].as_str().unwrap().to_string(), g["value"].as_f64().unwrap()))
                .collect();
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                groups.keys().collect::<Vec<_>>(),
                "{function} {name}"
            );
            for (group, values) in &groups {
                let expected = aggregate(name, values);
                assert!(
                    (got[group] - expected).abs() < 1e-6,
                    "{function} {name} {group}: {} vs {expected}",
                    got[group]
                );
            }
        }
    }
    let mut body = view_body(both.clone());
    body["filters"] = json!([]);
    body["aggregations"] = json!([{"name": "all", "function": "count"}, {"name": "total", "function": "sum", "aggregateColumnName": "total"}]);
    body["timeWindow"] = window.clone();
    let result = json(app.post("/v3/views/aggregation-data", body).await).await;
    let sum: f64 = rows.iter().filter_map(|e| e["transformedContent"]["total"].as_f64()).sum();
    assert_eq!(result["aggregations"][0]["groups"], json!([{"groupName": "", "value": 1000.0}]));
    assert!((result["aggregations"][1]["groups"][0]["value"].as_f64().unwrap() - sum).abs() < 1e-6);

    // Limits: defaults, bounds and the window.
    let mut body = view_body(both.clone());
    body["filters"] = json!([]);
    body["timeWindow"] = window.clone();
    let table = json(app.post("/v3/views/table-data", body.clone()).await).await;
    assert_eq!((table["rows"].as_array().unwrap().len(), table["totalCount"].clone()), (50, json!(1000)));
    body["limit"] = json!(201);
    assert_error(app.post("/v3/views/table-data", body.clone()).await, 400).await;
    body["limit"] = json!(10);
    body["timeWindow"] = json!({"start": canon::ids::millis_rfc3339(now - 3 * 86_400_000), "end": canon::ids::millis_rfc3339(now - 86_400_000)});
    let old = json(app.post("/v3/views/table-data", body.clone()).await).await;
    assert_eq!(old["totalCount"], 20);
    body["timeWindow"] = json!({"start": "yesterday", "end": "today"});
    assert_error(app.post("/v3/views/table-data", body).await, 400).await;
}

#[tokio::test]
async fn a_view_read_that_runs_past_its_time_bound_is_stopped_with_a_422_saying_what_to_narrow() {
    // The bound is 15 s a statement; lowered to nothing here, each statement is stopped at its
    // first look at the clock (SQLite: after a thousand steps; PostgreSQL: after 1 ms, which
    // reading 300 outputs of 64 KB each cannot beat).
    let app = crate::helpers::spawn_app_with(Default::default(), |config| {
        assert_eq!(config.view_scan_time, std::time::Duration::from_secs(15), "the production bound");
        config.view_scan_time = std::time::Duration::ZERO;
    })
    .await;
    let invoices = app.invoice_function("invoices").await;
    let now = canon::ids::now_millis();
    for n in 0..300 {
        let mut output = content(n, false);
        output["notes"] = json!(varied_letters(n as u64, 64_000));
        app.record_output((&invoices, "invoices"), n, output, now - (n as i64 % 50)).await;
    }
    let window = json!({"start": canon::ids::millis_rfc3339(now - 3_600_000), "end": canon::ids::millis_rfc3339(now + 3_600_000)});
    let mut body = view_body(json!([{"name": "invoices"}]));
    body["timeWindow"] = window;
    for _ in 0..3 {
        // Stopped every time, and its connections serve the next one.
        let table = assert_error(app.post("/v3/views/table-data", body.clone()).await, 422).await;
        let message = table["message"].as_str().unwrap();
        assert!(message.contains("took longer than 0 s and was stopped"), "{table}");
        assert!(message.contains("narrow timeWindow, add filters, or read fewer columns"), "{table}");
        assert_eq!(table["details"]["timeLimitMillis"], 0, "{table}");
        let chart = assert_error(app.post("/v3/views/aggregation-data", body.clone()).await, 422).await;
        assert!(
            chart["message"]
                .as_str()
                .unwrap()
                .starts_with("reading the view's aggregation \"per vendor\" took longer"),
            "{chart}"
        );
    }
    // The store answers everything else meanwhile.
    let outputs = app.outputs_of("invoices").await;
    assert_eq!(outputs.len(), 300);
}

#[tokio::test]
async fn a_table_page_shows_a_cell_up_to_256_kib_and_a_page_up_to_16_mib_saying_what_it_left_out() {
    // A column may name a subtree of an output of up to 128 MiB, in a page of 200 rows of 100
    // columns: without bounds one page could be gigabytes.
    let app = spawn_app().await;
    let invoices = app.invoice_function("invoices").await;
    let now = canon::ids::now_millis();
    let numbers: Vec<String> =
        (0..71).map(|n| varied_letters(n as u64, if n == 0 { 300_000 } else { 250_000 })).collect();
    for (n, number) in numbers.iter().enumerate() {
        let output = json!({"invoiceNumber": number, "details": {"pages": n}});
        app.record_output((&invoices, "invoices"), n, output, now - 71 + n as i64).await;
    }
    let mut body = json!({
        "name": "long numbers", "functions": [{"name": "invoices"}],
        "columns": [
            {"name": "number", "valueSchemaPath": ["invoiceNumber"], "displayOrderIndex": 0},
            {"name": "pages", "valueSchemaPath": ["details", "pages"], "displayOrderIndex": 1}
        ],
        "filters": [], "aggregations": [{"name": "per number", "function": "count", "groupByColumnName": "number", "displayType": "bar_chart"}],
        "timeWindow": {"start": canon::ids::millis_rfc3339(now - 3_600_000), "end": canon::ids::millis_rfc3339(now + 3_600_000)},
        "limit": 200
    });
    let page = json(app.post("/v3/views/table-data", body.clone()).await).await;
    assert_eq!(page["totalCount"], 71);
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 71, "every row is on the page, cut or not");
    let (mut shown_bytes, mut past_page) = (0, 0);
    for (n, row) in rows.iter().enumerate() {
        // Still oldest first, and the small cell of every row shown.
        assert_eq!(row["columns"][1], json!({"columnName": "pages", "value": n}), "row {n}");
        let cell = &row["columns"][0];
        let json_text = Value::String(numbers[n].clone()).to_string();
        match cell.get("valueOmitted") {
            None => {
                assert_eq!(cell["value"], numbers[n], "row {n} shown whole");
                shown_bytes += json_text.len();
            }
            Some(omitted) => {
                assert_eq!(cell["value"], Value::Null, "row {n}");
                assert_eq!(omitted["jsonBytes"], json_text.len(), "row {n}");
                let excerpt: String = json_text.chars().take(1_000).collect();
                assert_eq!(omitted["jsonExcerpt"], excerpt, "row {n}");
                let reason = omitted["reason"].as_str().unwrap();
                if n == 0 {
                    assert!(
                        reason.contains("longer than the 262144 bytes of JSON a table cell shows"),
                        "{reason}"
                    );
                } else {
                    assert!(
                        reason.contains("past the 16777216 bytes of JSON a table page shows"),
                        "{reason}"
                    );
                    past_page += 1;
                }
            }
        }
    }
    assert!(rows[0]["columns"][0].get("valueOmitted").is_some(), "300,000 letters are past a cell");
    // 250,002 bytes each: 67 fit in 16 MiB beside the small cells, 3 do not.
    assert_eq!(past_page, 3, "{shown_bytes} bytes shown");
    assert!(shown_bytes <= 16 * 1024 * 1024, "{shown_bytes}");

    // A page of ten holds every cell within the cell bound.
    body["limit"] = json!(10);
    body["offset"] = json!(1);
    let page = json(app.post("/v3/views/table-data", body.clone()).await).await;
    for (n, row) in page["rows"].as_array().unwrap().iter().enumerate() {
        assert_eq!(row["columns"][0], json!({"columnName": "number", "value": numbers[n + 1]}));
    }

    // A group's name is cut the same way.
    let chart = json(app.post("/v3/views/aggregation-data", body).await).await;
    let groups = chart["aggregations"][0]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 71);
    let long = format!("{}…", &numbers[0][..999]);
    let names: Vec<&str> = groups.iter().map(|g| g["groupName"].as_str().unwrap()).collect();
    assert!(names.contains(&long.as_str()), "the 300,000-letter group named by its start");
    for number in &numbers[1..] {
        assert!(names.contains(&number.as_str()), "a 250,000-letter group named whole");
    }
}

/// `len` pseudo-random letters: text PostgreSQL cannot compress, so each read of a column
/// of such an output reads all of it.
fn varied_letters(seed: u64, len: usize) -> String {
    let mut x = seed.wrapping_add(1).wrapping_mul(6_364_136_223_846_793_005);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            char::from(b'a' + ((x >> 33) % 26) as u8)
        })
        .collect()
}

/// A new event recorded straight into the record store, as a call would.
fn output_event<'a>(
    id: &'a str,
    body: &'a Value,
    function_id: &'a str,
    key: &'a str,
    now: i64,
) -> NewEvent<'a> {
    NewEvent {
        id,
        event_type: "extract",
        body,
        call_id: "wc_upgrade",
        function_call_id: key,
        workflow_id: "wf_upgrade",
        workflow_name: "upgrade",
        function_id,
        function_name: "invoices",
        function_version_num: 1,
        reference_id: "",
        intermediate: false,
        dedupe_key: key,
        now,
    }
}

#[tokio::test]
async fn outputs_recorded_before_an_upgrade_are_read_by_views_after_it_nul_characters_included() {
    use canon::store::records::views::{Aggregate, Condition, Projection, Scope, Step};
    let dir = tempfile::tempdir().expect("temp dir");
    // The schema of the canon before views read a copy of each output.
    let (records, url) = crate::helpers::records_through(dir.path(), 11).await;
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    let owner = canon::store::records::Owner { account_id: "acc_upgrade", environment: "sandbox" };
    let now = canon::ids::now_millis();
    let older = [
        json!({"vendor": "Acme", "total": 10}),
        json!({"vendor": "Acme", "total": 5}),
        json!({"vendor": "nul \u{0}inside", "total": 1}),
    ];
    for (n, content) in older.iter().enumerate() {
        let body = json!({"eventID": format!("evt_old{n}"), "transformedContent": content});
        sqlx::query(
            "INSERT INTO events (id, account_id, environment, event_type, body, created_at, function_id, intermediate, labelled, dedupe_key) \
             VALUES ($1, $2, $3, 'extract', $4, $5, 'fn_inv', 0, 0, $6)",
        )
        .bind(format!("evt_old{n}"))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(body.to_string())
        .bind(now)
        .bind(format!("old-{n}"))
        .execute(&raw)
        .await
        .expect("older event");
    }
    records.migrate().await.expect("upgrade");
    // And one written by this canon, a NUL in it too.
    let body = json!({"eventID": "evt_new", "transformedContent": {"vendor": "Acme\u{0}", "total": 2}});
    records
        .record_pipeline_event(owner, output_event("evt_new", &body, "fn_inv", "new-0", now))
        .await
        .expect("new event");

    let scope = Scope { function_ids: vec!["fn_inv".into()], start: now - 1, end: now + 1 };
    let projection = Projection {
        paths: vec![vec![Step::Key("vendor".into())], vec![Step::Key("total".into())]],
        conditions: vec![(1, Condition::Compare(">", 1.5))],
    };
    let groups = records
        .view_aggregate(owner, &scope, &projection, Aggregate::Sum(1), Some(0), 200, canon::views::SCAN_TIME)
        .await
        .expect("aggregate");
    let acme: Vec<_> = groups.iter().filter(|(key, _)| key == &Some(json!("Acme"))).collect();
    assert_eq!(acme.len(), 1, "{groups:?}");
    assert_eq!(acme[0].1, Some(15.0), "the two older Acme outputs over 1.5: {groups:?}");
    assert_eq!(groups.len(), 2, "Acme and the newer NUL-bearing vendor: {groups:?}");
    let (rows, total) =
        records.view_table(owner, &scope, &projection, 50, 0, canon::views::SCAN_TIME).await.expect("table");
    assert_eq!(total, 3, "{rows:?}");
    let mut ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["evt_new", "evt_old0", "evt_old1"]);
    raw.close().await;
    records.close().await;
}

#[tokio::test]
async fn output_schemas_written_before_an_upgrade_are_read_newest_first_from_their_own_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The schema of the canon before each version's output schema had its column.
    let (records, url) = crate::helpers::records_through(dir.path(), 22).await;
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    let owner = canon::store::records::Owner { account_id: "acc_upgrade", environment: "sandbox" };
    sqlx::query(
        "INSERT INTO functions (id, account_id, environment, name, current_version, created_at, updated_at) \
         VALUES ('fn_old', $1, $2, 'invoices', 3, 1, 1)",
    )
    .bind(owner.account_id)
    .bind(owner.environment)
    .execute(&raw)
    .await
    .expect("older function");
    let schemas = [
        json!({"type": "object", "properties": {"first": {"type": "string"}}}),
        Value::Null,
        json!({"type": "object", "properties": {"third": {"type": "string", "description": "d".repeat(1_000)}}}),
    ];
    for (n, schema) in schemas.iter().enumerate() {
        // A NUL's escape in a setting's key, which PostgreSQL's JSON functions refuse to pass over.
        let body = json!({"type": "extract", "outputSchema": schema,
                          "extraConfig": {"notes": "n".repeat(10_000), "a\u{0}b": "a key"}});
        sqlx::query(
            "INSERT INTO function_versions (function_id, version_num, function_type, body, audit, created_at) \
             VALUES ('fn_old', $1, 'extract', $2, '[]', 1)",
        )
        .bind(n as i64 + 1)
        .bind(body.to_string())
        .execute(&raw)
        .await
        .expect("older version");
    }
    records.migrate().await.expect("upgrade");
    let read = records.function_output_schemas(owner, "fn_old", 1024 * 1024).await.expect("schemas");
    assert_eq!(read, vec![schemas[2].clone(), schemas[0].clone()], "newest first, null left out");
    // Past the bytes, the newest still.
    let read = records.function_output_schemas(owner, "fn_old", 10).await.expect("schemas");
    assert_eq!(read, vec![schemas[2].clone()]);
    raw.close().await;
    records.close().await;
}

#[tokio::test]
async fn a_views_columns_share_one_bound_on_walking_their_functions_schemas() {
    // Each column walks the first function's schema (a reference to itself, walked until a
    // walk's own 2,000 steps) before finding its field in the second's: 100 columns spend the
    // 200,000 steps a request may take, 50 do not.
    let app = spawn_app().await;
    let endless =
        json!({"functionName": "endless", "type": "extract", "outputSchema": {"anyOf": [{"$ref": "#"}]}});
    assert_eq!(app.post("/v3/functions", endless).await.status(), 200);
    let fields: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("c{i}"), json!({"type": "string"}))).collect();
    let wide = json!({"functionName": "wide", "type": "extract",
                      "outputSchema": {"type": "object", "properties": fields}});
    assert_eq!(app.post("/v3/functions", wide).await.status(), 200);
    let view = |columns: usize| {
        let columns: Vec<Value> = (0..columns)
            .map(|i| json!({"name": format!("c{i}"), "valueSchemaPath": [format!("c{i}")], "displayOrderIndex": i}))
            .collect();
        json!({"name": format!("v{}", columns.len()), "functions": [{"name": "endless"}, {"name": "wide"}],
               "columns": columns, "filters": [], "aggregations": []})
    };
    let made = app.post("/v3/views", view(50)).await;
    assert_eq!(made.status(), 200, "{}", made.text().await.unwrap_or_default());
    let refused = assert_error(app.post("/v3/views", view(100)).await, 422).await;
    assert_eq!(refused["details"]["limit"], "schemaSteps", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("200000 steps"), "{refused}");
}
