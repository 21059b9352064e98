//! The OpenAPI document is the contract the server keeps (schemathesis checks it broadly in
//! scripts/schemathesis.sh; these pin down what it found).

use crate::helpers::{assert_error, assert_error_saying, json, spawn_app};
use serde_json::{json, Value};

const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];

/// The schema of a GET operation's query parameter, as the document states it.
fn query_schema<'a>(doc: &'a Value, path: &str, name: &str) -> &'a Value {
    let parameters = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
    &parameters.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{path} has {name}"))["schema"]
}

#[tokio::test]
async fn every_keyed_operation_documents_the_errors_it_can_answer() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.starts_with("/v3/") {
            continue;
        }
        for method in METHODS.iter().filter(|m| item[**m].is_object()) {
            let operation = &item[*method];
            for status in ["401", "429"] {
                assert!(operation["responses"][status].is_object(), "{method} {path} documents {status}");
            }
            let has_query =
                operation["parameters"].as_array().is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
            if has_query || operation["requestBody"].is_object() {
                assert!(operation["responses"]["400"].is_object(), "{method} {path} documents 400");
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked} operations");
    // A repeated single-valued parameter is one of those documented 400s.
    let repeated = app.get("/v3/buckets?limit=1&limit=2").await;
    assert_eq!(repeated.status(), 400);
}

#[tokio::test]
async fn the_documented_page_sizes_are_the_ones_the_server_takes() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let mut checked = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let parameters = item["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let Some(limit) = parameters.iter().find(|p| p["name"] == "limit") else { continue };
        // Only lists that need nothing else to answer 200.
        if path.contains('{') || parameters.iter().any(|p| p["required"] == true) {
            continue;
        }
        let (min, max) = (&limit["schema"]["minimum"], &limit["schema"]["maximum"]);
        assert_eq!(min, 1, "{path}: limit has a documented minimum");
        let max = max.as_i64().unwrap_or_else(|| panic!("{path}: limit has a documented maximum"));
        assert_eq!(app.get(&format!("{path}?limit={max}")).await.status(), 200, "{path}?limit={max}");
        assert_eq!(
            app.get(&format!("{path}?limit={}", max + 1)).await.status(),
            400,
            "{path}?limit={}",
            max + 1
        );
        assert_eq!(app.get(&format!("{path}?limit=0")).await.status(), 400, "{path}?limit=0");
        checked.push(path.clone());
    }
    assert!(checked.len() >= 8, "{checked:?}");
}

#[tokio::test]
async fn metrics_are_served_as_documented_and_creations_link_to_what_they_created() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let documented: Vec<&String> =
        doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"].as_object().unwrap().keys().collect();
    let served = app.client.get(format!("{}/metrics", app.address)).send().await.unwrap();
    let content_type = served.headers()["content-type"].to_str().unwrap().to_string();
    assert!(
        documented.iter().any(|media| content_type.starts_with(media.as_str())),
        "{content_type} is one of {documented:?}"
    );
    let links = &doc["paths"]["/v3/functions"]["post"]["responses"]["200"]["links"];
    let get_function = links
        .as_object()
        .unwrap()
        .values()
        .find(|link| link["operationRef"] == "#/paths/~1v3~1functions~1{functionName}/get");
    assert_eq!(
        get_function.map(|link| &link["parameters"]["functionName"]),
        Some(&Value::from("$response.body#/function/functionName"))
    );
}

#[tokio::test]
async fn path_segments_and_free_text_parameters_document_the_control_characters_refused() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let mut patterns = Vec::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for method in METHODS.iter().filter(|m| item[**m].is_object()) {
            for parameter in item[*method]["parameters"].as_array().into_iter().flatten() {
                if parameter["in"] == "path" && parameter["schema"]["type"] == "string" {
                    patterns.push(parameter["schema"]["pattern"].as_str().unwrap_or("none").to_string());
                }
            }
        }
    }
    assert!(patterns.len() > 50, "{} path parameters", patterns.len());
    patterns.dedup();
    assert_eq!(patterns.len(), 1, "every path segment has the one pattern: {patterns:?}");
    // The pattern says what the server does: tab and newline pass, other controls do not.
    let pattern = regex::Regex::new(&patterns[0]).unwrap();
    for (text, taken) in [("ent_01ABC", true), ("a\tb\nc", true), ("a\u{1}b", false), ("a\u{85}", false)] {
        assert_eq!(pattern.is_match(text), taken, "{text:?}");
    }
    assert_error_saying(
        app.get("/v3/entities/ent_a%01b").await,
        400,
        "id: must not contain control characters",
    )
    .await;
    assert_eq!(app.get("/v3/entities/ent_a%09b").await.status(), 404, "a tab is text, the entity unknown");
    // Bodies: a request-only schema's free text says the same; a schema replies share does
    // not (stored text, a parsed document's, may hold a form feed).
    let schemas = &doc["components"]["schemas"];
    let description = &schemas["CreateBucket"]["properties"]["description"];
    assert_eq!(description["pattern"], patterns[0].as_str(), "{description}");
    // Text with a pattern of its own that does not hold the whole text (`\S`) carries it too.
    let relation_type = &schemas["CreateRelation"]["properties"]["relationType"];
    assert_eq!(relation_type["allOf"][0]["pattern"], patterns[0].as_str(), "{relation_type}");
    let escaped = serde_json::to_string(&patterns[0]).unwrap();
    assert!(!schemas["Entity"].to_string().contains(escaped.trim_matches('"')), "{}", schemas["Entity"]);
    let buckets = doc["paths"]["/v3/buckets"]["get"]["parameters"].as_array().unwrap();
    let name = buckets.iter().find(|p| p["name"] == "nameSubstring").unwrap();
    assert_eq!(name["schema"]["pattern"], patterns[0].as_str(), "{name}");
    let refused = assert_error(app.get("/v3/buckets?nameSubstring=a%01").await, 400).await;
    assert!(refused["message"].as_str().unwrap().contains("control characters"), "{refused}");
}

#[tokio::test]
async fn documented_id_patterns_take_the_ids_canon_writes_and_refuse_what_the_server_refuses() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let pattern = |path: &str, name: &str| {
        regex::Regex::new(query_schema(&doc, path, name)["pattern"].as_str().unwrap()).unwrap()
    };
    let seeded = app.seed(json!([{ "canonical": "Acme", "type": "Company" }])).await;
    let entity = seeded["results"][0]["entityID"].as_str().unwrap().to_string();
    assert!(pattern("/v3/review-queue", "cursor").is_match(&entity), "{entity}");
    let bucket =
        json(app.get("/v3/buckets").await).await["buckets"][0]["bucketID"].as_str().unwrap().to_string();
    let before = pattern("/v3/buckets", "endingBefore");
    assert!(before.is_match(&bucket), "{bucket}");
    // A bare prefix is no ID: the document says so, as the server does.
    assert!(!before.is_match("bkt_"));
    assert_error(app.get("/v3/buckets?endingBefore=bkt_").await, 400).await;
    assert!(!pattern("/v3/knowledge-graph", "cursor").is_match("rel_abc"));
    assert_error(app.get("/v3/knowledge-graph?cursor=rel_abc").await, 400).await;
    // An empty cursor is a blank form field: no cursor, documented so, answered as the first page.
    assert!(before.is_match(""));
    assert_eq!(
        json(app.get("/v3/buckets?endingBefore=").await).await["buckets"][0]["bucketID"],
        bucket.as_str()
    );
}

#[tokio::test]
async fn documented_query_enums_and_ranges_are_the_values_the_server_takes() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let schema = |path: &str, name: &str| query_schema(&doc, path, name).clone();
    let seeded = app.seed(json!([{ "canonical": "Acme", "type": "Company" }])).await;
    let entity = seeded["results"][0]["entityID"].as_str().unwrap().to_string();
    // Each documented value answers 200; one outside the list a 400 naming the parameter.
    let relations = format!("/v3/entities/{entity}/relations");
    let cases = [
        (relations.as_str(), "direction", schema("/v3/entities/{id}/relations", "direction")["enum"].clone()),
        ("/v3/merge-suggestions", "order", schema("/v3/merge-suggestions", "order")["enum"].clone()),
        ("/v3/calls", "statuses", schema("/v3/calls", "statuses")["items"]["enum"].clone()),
        ("/v3/functions", "types", schema("/v3/functions", "types")["items"]["enum"].clone()),
    ];
    for (path, name, values) in cases {
        let values = values.as_array().unwrap_or_else(|| panic!("{path} {name} documents an enum"));
        assert!(values.len() >= 3, "{path} {name}: {values:?}");
        for value in values {
            let value = value.as_str().unwrap();
            assert_eq!(
                app.get(&format!("{path}?{name}={value}")).await.status(),
                200,
                "{path}?{name}={value}"
            );
        }
        let refused = assert_error(app.get(&format!("{path}?{name}=sideways")).await, 400).await;
        assert!(refused["message"].as_str().unwrap().contains(name), "{refused}");
    }
    // Version filters: `<name>.<versionNum>` as documented, anything else refused.
    let version_ref = regex::Regex::new(
        schema("/v3/functions", "workflowIDVersionNums")["items"]["pattern"].as_str().unwrap(),
    )
    .unwrap();
    assert!(
        version_ref.is_match("invoice.3")
            && !version_ref.is_match("invoice")
            && !version_ref.is_match("invoice.0")
    );
    assert_eq!(app.get("/v3/functions?workflowIDVersionNums=invoice.3").await.status(), 200);
    assert_error(app.get("/v3/functions?workflowIDVersionNums=invoice").await, 400).await;
    let version_num =
        regex::Regex::new(schema("/v3/outputs", "functionVersionNums")["items"]["pattern"].as_str().unwrap())
            .unwrap();
    assert!(version_num.is_match("2") && !version_num.is_match("invoice.2"));
    assert_eq!(app.get("/v3/outputs?functionVersionNums=2").await.status(), 200);
    assert_error(app.get("/v3/outputs?functionVersionNums=invoice.2").await, 400).await;
    // A page number past the documented int32 is refused, never multiplied into an overflow.
    let page = schema("/v3/collections", "page");
    assert_eq!(page["maximum"], i64::from(i32::MAX), "{page}");
    assert_eq!(app.get(&format!("/v3/collections?page={}", i32::MAX)).await.status(), 200);
    for past in [i64::from(i32::MAX) + 1, i64::MAX] {
        assert_error_saying(app.get(&format!("/v3/collections?page={past}&limit=100")).await, 400, "page:")
            .await;
    }
    // The graph's depth, on both transports, by the one service rule.
    assert_eq!(schema("/v3/knowledge-graph", "maxDepth")["maximum"], 5);
    assert_error_saying(
        app.get(&format!("/v3/knowledge-graph?nodeID={entity}&maxDepth=-1")).await,
        400,
        "maxDepth: must be between 0 and 5",
    )
    .await;
    let query = format!("{{ knowledgeGraph(nodeID: \"{entity}\", maxDepth: 6) {{ nodes {{ id }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    assert!(
        body["errors"][0]["message"].as_str().unwrap().contains("maxDepth: must be between 0 and 5"),
        "{body}"
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_a_documented_413_with_an_error_body() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let documented = &doc["paths"]["/v3/entities/bulk"]["post"]["responses"]["413"];
    assert!(documented.is_object(), "{}", doc["paths"]["/v3/entities/bulk"]["post"]["responses"]);
    // Three megabytes of rows: past the server's body limit.
    let rows: Vec<serde_json::Value> =
        (0..30_000).map(|i| json!({ "canonical": format!("{i:0>90}"), "type": "Company" })).collect();
    let refused = assert_error(app.post("/v3/entities/bulk", json!({ "entities": rows })).await, 413).await;
    assert!(refused["message"].as_str().unwrap().contains("length limit"), "{refused}");
}

#[tokio::test]
async fn an_integer_sent_as_a_whole_float_is_that_integer_and_a_fraction_is_refused() {
    let app = spawn_app().await;
    let entity = app.entity("Wayne Enterprises", "Company").await;
    let body =
        |page: f64| json!({ "entityID": entity, "surface": "Wayne", "referenceID": "doc-1", "page": page });
    // JSON Schema's integer takes 2.0; clients computing a page in floating point send it so.
    let taken = json(app.post("/v3/mentions", body(2.0)).await).await;
    assert_eq!(taken["page"], 2, "{taken}");
    assert_error_saying(app.post("/v3/mentions", body(2.5)).await, 400, "page: invalid type: floating point")
        .await;
    // A view sent whole for its table is read as any body is: its column's position takes a
    // whole float, and a refusal names the field.
    let function = json!({"functionName": "reader", "type": "extract", "outputSchemaName": "Doc",
                          "outputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
    assert_eq!(app.post("/v3/functions", function).await.status(), 200);
    let table = |index: f64| {
        json!({"name": "v", "columns": [{"name": "a", "valueSchemaPath": ["a"], "displayOrderIndex": index}],
               "filters": [], "aggregations": [], "functions": [{"name": "reader"}],
               "timeWindow": {"start": "2025-01-01T00:00:00Z", "end": "2025-02-01T00:00:00Z"}})
    };
    let page = json(app.post("/v3/views/table-data", table(1.0)).await).await;
    assert_eq!(page["totalCount"], 0, "{page}");
    let refused = "columns[0].displayOrderIndex: invalid type: floating point `1.5`, expected i64";
    assert_error_saying(app.post("/v3/views/table-data", table(1.5)).await, 400, refused).await;
    // A column is an object there too, not an array read field by field.
    let mut listed = table(1.0);
    listed["columns"][0] = json!(["a", ["a"], 1]);
    assert_error_saying(app.post("/v3/views/table-data", listed).await, 400, "columns[0]: invalid type")
        .await;
    let mut undated = table(1.0);
    undated.as_object_mut().unwrap().remove("timeWindow");
    assert_error_saying(
        app.post("/v3/views/aggregation-data", undated).await,
        400,
        "invalid body: missing field `timeWindow`",
    )
    .await;
}

#[tokio::test]
async fn a_call_s_multipart_form_is_documented_part_by_part_and_another_part_is_refused() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let content = &doc["paths"]["/v3/workflows/{workflowName}/call"]["post"]["requestBody"]["content"];
    let form = content["multipart/form-data"]["schema"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
    let form = &doc["components"]["schemas"][form];
    assert_eq!(form["additionalProperties"], false, "{form}");
    assert_eq!(form["properties"]["file"]["items"]["format"], "binary", "{form}");
    for part in ["files", "inputType", "wait", "bucket", "callReferenceID", "metadata"] {
        assert!(form["properties"][part].is_object(), "{part} is documented: {form}");
    }
    // A part the form does not name is refused by name, before anything runs.
    let parts = reqwest::multipart::Form::new().text("note", "x");
    let response =
        app.request(reqwest::Method::POST, "/v3/workflows/any/call").multipart(parts).send().await.unwrap();
    assert_error_saying(response, 400, "unknown form field \"note\"").await;
    // inputType: any of its documented names in any case; empty is none given (the file's
    // name says it), another name is refused.
    let pattern = regex::Regex::new(form["properties"]["inputType"]["pattern"].as_str().unwrap()).unwrap();
    assert!(
        ["JPG", "Tif", "eml", "text", ""].iter().all(|t| pattern.is_match(t)) && !pattern.is_match("docx")
    );
    app.extract_function("reader", json!({"type": "object", "properties": {"a": {"type": "string"}}})).await;
    app.pipeline("reads", &["reader"], &[]).await;
    let call = |input_type: &'static str| {
        let file = reqwest::multipart::Part::bytes(b"a: b".to_vec()).file_name("note.txt");
        let form = reqwest::multipart::Form::new().part("file", file).text("inputType", input_type);
        app.request(reqwest::Method::POST, "/v3/workflows/reads/call").multipart(form).send()
    };
    for taken in ["", "TXT"] {
        assert_eq!(call(taken).await.unwrap().status(), 202, "inputType {taken:?}");
    }
    assert_error_saying(call("docx").await.unwrap(), 400, "unsupported inputType").await;
}

#[tokio::test]
async fn a_view_s_function_is_documented_as_an_id_or_a_name_and_the_server_takes_exactly_one() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let schemas = &doc["components"]["schemas"];
    let items = schemas["ViewInput"]["properties"]["functions"]["items"]["$ref"].as_str().unwrap();
    let choice = &schemas[items.rsplit('/').next().unwrap()];
    let required: Vec<&Value> =
        choice["oneOf"].as_array().unwrap().iter().map(|b| &b["required"][0]).collect();
    assert_eq!(required, [&json!("id"), &json!("name")], "{choice}");
    // A reply names both, so the reply's schema does not carry the rule.
    let reply = schemas["View"]["properties"]["functions"]["items"]["$ref"].as_str().unwrap();
    assert!(schemas[reply.rsplit('/').next().unwrap()]["oneOf"].is_null());
    let view = |function: Value| {
        let mut view = json!({ "name": "v", "columns": [], "filters": [], "aggregations": [] });
        view["functions"] = json!([function]);
        view
    };
    let both =
        assert_error(app.post("/v3/views", view(json!({ "id": "fn_x", "name": "x" }))).await, 400).await;
    assert!(both["message"].as_str().unwrap().ends_with("give either id or name, not both"), "{both}");
    let blank =
        assert_error(app.post("/v3/views", view(json!({ "id": " ", "name": null }))).await, 400).await;
    assert!(blank["message"].as_str().unwrap().ends_with("give the function's id or its name"), "{blank}");
    // A workflow node's function takes at least one of the two (the ID first when both).
    let reference = &schemas["FunctionRef"];
    let given: Vec<&Value> =
        reference["anyOf"].as_array().unwrap().iter().map(|b| &b["required"][0]).collect();
    assert_eq!(given, [&json!("id"), &json!("name")], "{reference}");
    assert_eq!(reference["properties"]["versionNum"]["minimum"], 1, "{reference}");
    let workflow = |function: Value| json!({"name": "w", "mainNodeName": "n", "nodes": [{"name": "n", "function": function}]});
    assert_error_saying(app.post("/v3/workflows", workflow(json!({}))).await, 400, "nodes[0].function").await;
    let pinned = workflow(json!({"name": "x", "versionNum": 0}));
    assert_error_saying(app.post("/v3/workflows", pinned).await, 400, "nodes[0].function.versionNum").await;
}

#[tokio::test]
async fn a_call_s_file_and_a_score_pair_s_file_are_documented_apart_with_their_base64() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let schemas = &doc["components"]["schemas"];
    // Two request types once shared the name FileInput, and the call's lost a field there.
    assert!(schemas["FileInput"]["properties"]["itemReferenceID"].is_object(), "{}", schemas["FileInput"]);
    let pair_file = schemas["Pair"]["properties"]["input"]["$ref"].as_str().unwrap();
    assert_eq!(pair_file, "#/components/schemas/ScoreFile");
    let content = &schemas["ScoreFile"]["properties"]["inputContent"];
    assert_eq!(content["pattern"], schemas["FileInput"]["properties"]["inputContent"]["pattern"]);
    let base64 = regex::Regex::new(content["pattern"].as_str().unwrap()).unwrap();
    // "hello" is aGVsbG8=; aGVsbG9= carries stray low bits, which the server's decoder refuses.
    assert!(base64.is_match("aGVsbG8=") && !base64.is_match("aGVsbG9=") && !base64.is_match("aGVsbG8"));
    let pair = |content: &str| json!({"functionName": "any", "pairs": [{"input": {"inputContent": content, "inputType": "pdf"}, "expected": {}}]});
    // The function scored is named as functions are: an empty name is refused by both.
    let name =
        regex::Regex::new(schemas["ScoreRequest"]["properties"]["functionName"]["pattern"].as_str().unwrap());
    assert!(!name.unwrap().is_match(""));
    let mut unnamed = pair("aGVsbG8=");
    unnamed["functionName"] = json!("");
    assert_error_saying(app.post("/v3/eval/score", unnamed).await, 400, "functionName").await;
    for refused in ["aGVsbG9=", "aGVsbG8"] {
        assert_error_saying(
            app.post("/v3/eval/score", pair(refused)).await,
            400,
            "pairs[0].input.inputContent",
        )
        .await;
    }
}

#[tokio::test]
async fn a_create_documents_the_fields_its_patch_may_leave_out_and_refuses_a_body_without_them() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let body_of = |path: &str, method: &str| {
        let schema = &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"];
        schema["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string()
    };
    for (path, patch, field, body) in [
        ("/v3/functions", "/v3/functions/{functionName}", "type", json!({"functionName": "f", "type": null})),
        ("/v3/workflows", "/v3/workflows/{workflowName}", "mainNodeName", json!({"name": "w", "nodes": []})),
        (
            "/v3/subscriptions",
            "/v3/subscriptions/{subscriptionID}",
            "name",
            json!({"type": "transform", "webhookURL": "https://h.example.com"}),
        ),
    ] {
        let create = &doc["components"]["schemas"][body_of(path, "post")];
        let required = create["allOf"][1]["required"].as_array().unwrap();
        assert!(required.contains(&json!(field)), "{path}: {create}");
        // The PATCH keeps the shared schema, where every field may be left out.
        assert_eq!(create["allOf"][0]["$ref"], format!("#/components/schemas/{}", body_of(patch, "patch")));
        assert_error_saying(app.post(path, body).await, 400, &format!("{field}: is required")).await;
    }
    // The types a subscription and a workflow's connector take are the ones the server takes.
    let types = &doc["components"]["schemas"]["SubscriptionInput"]["properties"]["type"]["enum"];
    assert_eq!(types.as_array().unwrap().len(), canon::delivery::subscriptions::TYPES.len() + 1, "{types}");
    let connector = &doc["components"]["schemas"]["WorkflowConnectorInput"]["properties"]["type"]["enum"];
    assert_eq!(connector, &json!(canon::functions::workflows::CONNECTOR_TYPES), "{connector}");
    let subscription = json!({"name": "s", "type": "transformed", "webhookURL": "https://h.example.com"});
    assert_error_saying(app.post("/v3/subscriptions", subscription).await, 400, "type: must be one of").await;
}

#[tokio::test]
async fn an_fs_request_is_documented_op_by_op_with_the_fields_each_op_takes() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    let branches = doc["components"]["schemas"]["FsRequest"]["oneOf"].as_array().unwrap().clone();
    let ls = branches.iter().find(|b| b["properties"]["op"]["const"] == "ls").unwrap();
    // ls takes filter, limit and cursor: another op's field may only be absent or null.
    assert_eq!(ls["properties"]["path"], json!({"type": "null"}), "{ls}");
    assert!(ls["properties"]["filter"].is_null() && ls["properties"]["limit"].is_null(), "{ls}");
    assert_eq!(branches.len(), canon::fs::request::Op::ALL.len());
    // head reads one document: its path is required, and not blank.
    let head = branches.iter().find(|b| b["properties"]["op"]["const"] == "head").unwrap();
    assert_eq!(head["required"], json!(["op", "path"]), "{head}");
    assert_error_saying(app.post("/v3/fs", json!({"op": "head", "path": " "})).await, 400, "path: required")
        .await;
    assert_error_saying(
        app.post("/v3/fs", json!({"op": "ls", "path": "x"})).await,
        400,
        "path: op ls does not take",
    )
    .await;
    let listed = app.post("/v3/fs", json!({"op": "ls", "path": null, "limit": 5})).await;
    assert_eq!(listed.status(), 200);
}
