//! Parsed documents and `POST /v3/fs`, as an agent would walk them: a parse function
//! extracts by its `parseConfig.schema` and keeps the document's structure; the shell verbs
//! list, read and search it; the memory verbs find, open and cross-reference the entities.

use crate::helpers::{assert_error, json, spawn_app, TestApp};
use base64::Engine as _;
use serde_json::{json, Value};

pub const AGREEMENT: &str = "SERVICE AGREEMENT\n\n\
Vendor: Acme Corporation\nBuyer: Initech\n\n\
1. Scope\nAcme Corporation designs the new billing system for Initech.\n\n\
Payment Terms\n- Net 30 days\n- Late fee of 2% per month\n\n\
Item        Qty      Price\nDesign      1        9000.00\nSupport     12       150.00\n";

pub const ORDER: &str = "PURCHASE ORDER\n\nVendor: ACME Corp.\nBuyer: Umbrella Ltd\n\n\
Delivery\nUmbrella Ltd receives invoice INV-0042 from ACME Corp. by mail.\n";

impl TestApp {
    /// A parse function with a schema whose parties are companies, in a one-node workflow.
    pub async fn parse_pipeline(&self) {
        self.create_function(json!({
            "functionName": "contracts", "type": "parse",
            "parseConfig": {"schema": {
                "type": "object",
                "properties": {
                    "vendor": {"type": "string", "x-entityType": "Company"},
                    "buyer": {"type": "string", "x-entityType": "Company"}
                },
                "x-relations": [{"source": "/vendor", "target": "/buyer", "type": "SELLS_TO"}]
            }}
        }))
        .await;
        self.pipeline("contracts", &["contracts"], &[]).await;
    }

    /// Parses a text document under this referenceID; returns the call.
    pub async fn parse_text(&self, reference: &str, text: &str) -> Value {
        let content = base64::engine::general_purpose::STANDARD.encode(text);
        let body = json!({ "callReferenceID": reference,
            "input": { "singleFile": { "inputContent": content, "inputType": "text" } } });
        let response = self.post("/v3/workflows/contracts/call?wait=true", body).await;
        assert_eq!(response.status(), 200);
        let call = json(response).await["call"].clone();
        assert_eq!(call["status"], "completed", "{call}");
        call
    }

    pub(crate) async fn fs(&self, body: Value) -> Value {
        let response = self.post("/v3/fs", body.clone()).await;
        assert_eq!(response.status(), 200, "{body}");
        json(response).await
    }
}

fn labels(list: &Value, field: &str) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| v[field].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn a_parse_function_extracts_by_its_schema_and_keeps_the_document_structure() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    let call = app.parse_text("agreement-1", AGREEMENT).await;
    let output = &call["outputs"][0]["transformedContent"];
    assert_eq!(output, &json!({"vendor": "Acme Corporation", "buyer": "Initech"}), "{call}");

    let cat = app.fs(json!({"op": "cat", "path": "agreement-1"})).await;
    assert_eq!(cat["op"], "cat");
    let doc = &cat["data"];
    assert_eq!(doc["referenceID"], "agreement-1");
    assert_eq!(doc["output"], *output);
    let sections: Vec<(String, String, i64)> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap().into(),
                s["type"].as_str().unwrap().into(),
                s["page"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("SERVICE AGREEMENT", "heading"),
        ("SERVICE AGREEMENT › paragraph 1", "paragraph"),
        ("1. Scope", "heading"),
        ("1. Scope › paragraph 1", "paragraph"),
        ("Payment Terms", "heading"),
        ("Payment Terms › list 1", "list"),
        ("Payment Terms › table 1", "table"),
    ];
    let expected: Vec<(String, String, i64)> =
        expected.iter().map(|(l, t)| (l.to_string(), t.to_string(), 1)).collect();
    assert_eq!(sections, expected);

    // The vendor's mention names the section (and page) that names it.
    let entities = &doc["entities"];
    let acme = entities.as_array().unwrap().iter().find(|e| e["surface"] == "Acme Corporation").unwrap();
    let entity = json(app.get(&format!("/v3/entities/{}", acme["entityID"].as_str().unwrap())).await).await;
    let mention = &entity["previewMentions"][0];
    assert_eq!(
        (mention["sectionLabel"].as_str(), mention["page"].as_i64()),
        (Some("SERVICE AGREEMENT › paragraph 1"), Some(1))
    );
    assert_eq!(doc["relationships"][0]["type"], "SELLS_TO");
}

#[tokio::test]
async fn ls_cat_head_and_stat_read_parsed_documents_page_by_page() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    app.parse_text("agreement-1", AGREEMENT).await;
    app.parse_text("order-7", ORDER).await;

    let first = app.fs(json!({"op": "ls", "limit": 1})).await;
    assert_eq!((first["count"].as_i64(), first["hasMore"].as_bool()), (Some(1), Some(true)));
    assert_eq!(first["data"][0]["referenceID"], "agreement-1");
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = app.fs(json!({"op": "ls", "limit": 1, "cursor": cursor})).await;
    assert_eq!(second["data"][0]["referenceID"], "order-7");
    assert_eq!(second["hasMore"], false);
    assert!(second.get("nextCursor").is_none(), "{second}");
    let searched =
        app.fs(json!({"op": "ls", "filter": {"search": "ORDER", "functionName": "contracts"}})).await;
    assert_eq!(labels(&searched["data"], "referenceID"), vec!["order-7"]);
    let none = app.fs(json!({"op": "ls", "filter": {"functionName": "other"}})).await;
    assert_eq!(none["data"], json!([]));

    let tables = app
        .fs(json!({"op": "cat", "path": "agreement-1", "range": {"page": 1, "sectionTypes": ["table"]}}))
        .await;
    assert_eq!(labels(&tables["data"]["sections"], "label"), vec!["Payment Terms › table 1"]);
    // Pages computed in floating point (2.0) are those pages, as every integer of a body.
    let none = app.fs(json!({"op": "cat", "path": "agreement-1", "range": {"pageRange": [2.0, 3]}})).await;
    assert_eq!(none["data"]["sections"], json!([]));
    // The range applies to everything page-scoped: nothing was found on pages 2-3 of a
    // one-page document, while page 1 still lists its entities.
    assert_eq!(
        (&none["data"]["entities"], &none["data"]["relationships"]),
        (&json!([]), &json!([])),
        "{none}"
    );
    let page_one = app.fs(json!({"op": "cat", "path": "agreement-1", "range": {"page": 1}})).await;
    assert!(!page_one["data"]["entities"].as_array().unwrap().is_empty(), "{page_one}");
    assert!(!page_one["data"]["relationships"].as_array().unwrap().is_empty(), "{page_one}");
    let mapped = app
        .fs(json!({"op": "cat", "path": "agreement-1", "select": ["sections.label", "sections.page"]}))
        .await;
    assert_eq!(mapped["data"]["sections"][0], json!({"label": "SERVICE AGREEMENT", "page": 1}));
    assert!(mapped["data"].get("output").is_none());

    let head = app.fs(json!({"op": "head", "path": "agreement-1", "n": 2})).await;
    assert_eq!(labels(&head["data"], "type"), vec!["heading", "paragraph"]);
    assert_eq!(head["hasMore"], true);

    let stat = app.fs(json!({"op": "stat", "path": "agreement-1"})).await;
    let data = &stat["data"];
    assert_eq!(
        (data["kind"].as_str(), data["pageCount"].as_i64(), data["sectionCount"].as_i64()),
        (Some("document"), Some(1), Some(7))
    );
    assert_eq!(data["sectionTypes"], json!({"heading": 3, "paragraph": 2, "list": 1, "table": 1}));
    assert_eq!(data["memoryLinked"], true);
    // By transformationID too.
    let by_id = app.fs(json!({"op": "stat", "path": data["transformationID"]})).await;
    assert_eq!(by_id["data"]["referenceID"], "agreement-1");
    assert_error(app.post("/v3/fs", json!({"op": "cat", "path": "nowhere"})).await, 404).await;
}

#[tokio::test]
async fn grep_finds_substrings_and_regular_expressions_by_scope_and_pages_its_hits() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    app.parse_text("agreement-1", AGREEMENT).await;
    app.parse_text("order-7", ORDER).await;

    let acme = app.fs(json!({"op": "grep", "pattern": "acme corp", "scope": "sections"})).await;
    let hits: Vec<(String, String)> = acme["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["referenceID"].as_str().unwrap().into(), h["label"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        hits,
        vec![
            ("agreement-1".to_string(), "SERVICE AGREEMENT › paragraph 1".to_string()),
            ("agreement-1".to_string(), "1. Scope › paragraph 1".to_string()),
            ("order-7".to_string(), "PURCHASE ORDER › paragraph 1".to_string()),
            ("order-7".to_string(), "Delivery › paragraph 1".to_string()),
        ]
    );
    assert_eq!(acme["data"][0]["match"], "Acme Corp");
    assert!(acme["data"][0]["snippet"].as_str().unwrap().contains("Vendor: Acme Corporation"));

    let exact =
        app.fs(json!({"op": "grep", "pattern": "ACME", "ignoreCase": false, "scope": "sections"})).await;
    assert_eq!(exact["count"], 2, "{exact}");
    let counted = app.fs(json!({"op": "grep", "pattern": "acme", "countOnly": true})).await;
    // 4 sections and 2 entity surfaces (relationship texts name the vendor too: 2 more).
    assert_eq!(counted["count"], 8, "{counted}");
    assert_eq!(counted["data"], json!([]));
    let entities = app.fs(json!({"op": "grep", "pattern": "umbrella", "scope": "entities"})).await;
    assert_eq!(labels(&entities["data"], "scope"), vec!["entities"]);
    assert!(entities["data"][0]["entityID"].as_str().unwrap().starts_with("ent_"));
    let related = app.fs(json!({"op": "grep", "pattern": "sells_to", "scope": "relationships"})).await;
    assert_eq!(related["count"], 2);

    let invoices = app.fs(json!({"op": "grep", "pattern": r"INV-\d{4}", "regex": true})).await;
    assert_eq!(labels(&invoices["data"], "match"), vec!["INV-0042"]);
    let in_one = app.fs(json!({"op": "grep", "pattern": "net", "path": "order-7"})).await;
    assert_eq!(in_one["data"], json!([]));

    let page = app.fs(json!({"op": "grep", "pattern": "acme", "scope": "sections", "limit": 3})).await;
    assert_eq!((page["count"].as_i64(), page["hasMore"].as_bool()), (Some(3), Some(true)));
    let rest = app
        .fs(json!({"op": "grep", "pattern": "acme", "scope": "sections", "limit": 3, "cursor": page["nextCursor"]}))
        .await;
    assert_eq!((rest["count"].as_i64(), rest["hasMore"].as_bool()), (Some(1), Some(false)));

    let bad =
        assert_error(app.post("/v3/fs", json!({"op": "grep", "pattern": "(", "regex": true})).await, 400)
            .await;
    assert_eq!(bad["details"]["field"], "pattern");
}

#[tokio::test]
async fn find_open_and_xref_walk_the_entity_memory_and_see_through_merges() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    let empty = app.fs(json!({"op": "find"})).await;
    assert_eq!(empty["data"], json!([]));
    assert!(empty["hint"].as_str().unwrap().contains("linkAcrossDocuments"), "{empty}");

    app.parse_text("agreement-1", AGREEMENT).await;
    app.parse_text("order-7", ORDER).await;
    let companies = app.fs(json!({"op": "find", "filter": {"type": "Company"}})).await;
    let names = labels(&companies["data"], "canonical");
    assert!(
        names.contains(&"Initech".to_string()) && names.contains(&"Umbrella Ltd".to_string()),
        "{names:?}"
    );
    let acme = app.fs(json!({"op": "find", "filter": {"search": "acme"}})).await;
    assert_eq!(acme["count"], 1, "one entity for both surface forms: {acme}");
    let acme_id = acme["data"][0]["entityID"].as_str().unwrap().to_string();
    let paged = app.fs(json!({"op": "find", "limit": 1})).await;
    assert_eq!(paged["hasMore"], true);
    let next = app.fs(json!({"op": "find", "limit": 1, "cursor": paged["nextCursor"]})).await;
    assert_ne!(next["data"][0]["entityID"], paged["data"][0]["entityID"]);

    let opened = app.fs(json!({"op": "open", "path": acme_id})).await;
    assert_eq!(opened["data"]["mentions"].as_array().unwrap().len(), 2, "{opened}");
    let xref = app.fs(json!({"op": "xref", "path": acme_id})).await;
    let refs: Vec<(String, String)> = xref["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["referenceID"].as_str().unwrap().into(), h["section"]["label"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        refs,
        vec![
            ("agreement-1".to_string(), "SERVICE AGREEMENT › paragraph 1".to_string()),
            ("order-7".to_string(), "PURCHASE ORDER › paragraph 1".to_string())
        ]
    );
    assert!(xref["data"][0]["section"]["text"].as_str().unwrap().contains("Vendor: Acme Corporation"));

    // Merge Initech into Umbrella: Initech's ID opens Umbrella.
    let id_of = |name: &str| {
        companies["data"].as_array().unwrap().iter().find(|e| e["canonical"] == name).unwrap()["entityID"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (initech, umbrella) = (id_of("Initech"), id_of("Umbrella Ltd"));
    let merged = app.post(&format!("/v3/entities/{umbrella}/merge"), json!({"entityIDs": [initech]})).await;
    assert_eq!(merged.status(), 200);
    let survivor = app.fs(json!({"op": "open", "path": initech})).await;
    assert_eq!(survivor["data"]["entityID"], umbrella.as_str());
    assert_eq!(survivor["data"]["requestedID"], initech.as_str());
    let stat = app.fs(json!({"op": "stat", "path": umbrella})).await;
    assert_eq!(
        (stat["data"]["kind"].as_str(), stat["data"]["mentionCount"].as_i64()),
        (Some("entity"), Some(2))
    );

    // context.bucket: another bucket sees none of them.
    let other = app.create_bucket("elsewhere").await;
    let scoped = app.fs(json!({"op": "find", "context": {"bucket": other}})).await;
    assert_eq!(scoped["data"], json!([]));
    assert_error(
        app.post("/v3/fs", json!({"op": "open", "path": acme_id, "context": {"bucket": other}})).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn find_pages_walk_every_live_entity_once_in_creation_order_across_quiet_times() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    app.parse_text("agreement-1", AGREEMENT).await;
    // Seeded in three requests with quiet times between: pages walk creation-time windows.
    for batch in 0..3 {
        let rows: Vec<Value> = (0..30)
            .map(|i| json!({"canonical": format!("Vendor {batch}-{i}"), "type": "Supplier"}))
            .collect();
        app.seed(json!(rows)).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    let walk = |filter: Value, limit: u32| {
        let app = &app;
        async move {
            let (mut ids, mut cursor) = (Vec::new(), Value::Null);
            loop {
                let page =
                    app.fs(json!({"op": "find", "filter": filter, "limit": limit, "cursor": cursor})).await;
                ids.extend(labels(&page["data"], "entityID"));
                if page["hasMore"] != true {
                    return ids;
                }
                cursor = page["nextCursor"].clone();
                assert!(ids.len() < 1_000, "the cursor leads on forever");
            }
        }
    };
    let vendors = walk(json!({"search": "vendor"}), 7).await;
    let suppliers = walk(json!({"type": "Supplier"}), 11).await;
    let mut sorted = vendors.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!((vendors.len(), &sorted), (90, &vendors), "each once, in ID (creation) order");
    assert_eq!(suppliers, vendors);
    let everything = walk(json!({}), 13).await;
    let live = app
        .cypher(
            "MATCH (e:Entity {accountID: $a}) WHERE e.status <> 'merged' RETURN e.id AS id ORDER BY id",
            json!({ "a": app.account_id }),
        )
        .await;
    let live: Vec<&str> = live.iter().map(|row| row["id"].as_str().unwrap()).collect();
    assert!(live.len() > 90, "the agreement's entities too");
    assert_eq!(everything, live);

    let foreign = assert_error(app.post("/v3/fs", json!({"op": "find", "cursor": "doc_1"})).await, 400).await;
    assert_eq!(foreign["details"]["field"], "cursor", "{foreign}");
}

#[tokio::test]
async fn a_find_first_does_not_hide_from_the_review_queue_the_merged_entities_before_its_first_live_one() {
    // Both walks keep where the tenant's entities begin: a find's live walk must not keep a
    // start after an older merged entity that a review page of merged ones lists.
    let app = spawn_app().await;
    let older = app.entity("Hooli Old", "Company").await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let newer = app.entity("Hooli", "Company").await;
    let merged = app.post(&format!("/v3/entities/{newer}/merge"), json!({"entityIDs": [older]})).await;
    assert_eq!(merged.status(), 200);
    app.parse_pipeline().await;
    app.parse_text("agreement-1", AGREEMENT).await;
    let found = app.fs(json!({"op": "find", "limit": 1})).await;
    assert_eq!(found["data"][0]["entityID"], newer.as_str(), "{found}");
    let queue = json(app.get("/v3/review-queue?status=merged").await).await;
    let listed = labels(&queue["entities"], "entityID");
    assert_eq!(listed, [older], "{queue}");
}

#[tokio::test]
async fn an_op_given_another_ops_fields_is_refused_naming_the_field() {
    let app = spawn_app().await;
    for (body, field) in [
        (json!({"op": "ls", "pattern": "x"}), "pattern"),
        (json!({"op": "cat"}), "path"),
        (json!({"op": "head", "path": "d", "range": {"page": 1}}), "range"),
        (json!({"op": "grep"}), "pattern"),
        (json!({"op": "grep", "pattern": "a", "scope": "everything"}), "scope"),
        (json!({"op": "find", "limit": 0}), "limit"),
        (json!({"op": "head", "path": "d", "n": "three"}), "n"),
        (json!({"op": "chmod"}), "op"),
    ] {
        let error = assert_error(app.post("/v3/fs", body.clone()).await, 400).await;
        assert_eq!(error["details"]["field"], field, "{body}: {error}");
    }
}
