//! What a parse or linking run keeps of a large input, within its bounds: a run links at most
//! so many mentions, the gazetteer reads a long text only so far, and a document is cut into
//! so many sections; either way the call completes with its output and no text is lost.

use crate::helpers::{json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};

/// A linking extract function with a list of companies, in a workflow named `linked`.
async fn companies_function(app: &TestApp) {
    app.create_function(json!({
        "functionName": "companies", "type": "extract", "linkAcrossDocuments": true,
        "outputSchemaName": "Companies",
        "outputSchema": {"type": "object", "properties": {
            "companies": {"type": "array", "items": {"type": "string"}, "x-entityType": "Company"},
            "vendor": {"type": "string", "x-entityType": "Company"}
        }}
    }))
    .await;
    app.pipeline("linked", &["companies"], &[]).await;
}

/// Names of the review queue's entities (every linked one is `proposed`), sorted.
async fn proposed_names(app: &TestApp) -> Vec<String> {
    crate::helpers::sorted_canonicals(&json(app.get("/v3/review-queue?limit=200").await).await)
}

async fn mention_count(app: &TestApp, id: &str) -> Value {
    json(app.get(&format!("/v3/entities/{id}")).await).await["mentionCount"].clone()
}

#[tokio::test]
async fn a_run_links_its_first_names_up_to_the_bound_and_its_output_stands_whole() {
    let app = spawn_app_with(Handlers::default(), |config| config.max_linked_per_run = 3).await;
    companies_function(&app).await;
    let names = ["Acme", "Globex", "Initech", "Umbrella", "Hooli"];
    let input = serde_json::to_vec(&json!({ "companies": names })).unwrap();
    let call = app.call_file("linked", "json", &input, json!({"callReferenceID": "list-1"})).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["outputs"][0]["transformedContent"]["companies"], json!(names), "the output is whole");
    assert_eq!(proposed_names(&app).await, vec!["Acme", "Globex", "Initech"], "the first three are linked");
}

#[tokio::test]
async fn the_gazetteer_reads_a_long_text_only_so_far_and_the_call_completes() {
    let app = spawn_app().await;
    let early = app.entity("Zebulon Holdings", "Company").await;
    let late = app.entity("Quentin Partners", "Company").await;
    companies_function(&app).await;
    // 60,000 distinct words: 300,000 n-grams, past the 200,000 keys the gazetteer looks up.
    let filler: Vec<String> = (0..60_000).map(|i| format!("w{i}")).collect();
    let text = format!("Zebulon Holdings signed.\n\n{}\n\nQuentin Partners signed.\n", filler.join(" "));
    let call = app.call_file("linked", "text", text.as_bytes(), json!({"callReferenceID": "long-1"})).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(mention_count(&app, &early).await, 1, "named at the start: linked");
    assert_eq!(mention_count(&app, &late).await, 0, "named past the bound: not linked");
}

#[tokio::test]
async fn an_entity_the_text_names_two_ways_is_mentioned_once_where_first_named() {
    let app = spawn_app().await;
    let seeded = app
        .seed(json!([
            { "canonical": "Globex Corporation", "type": "Company", "synonyms": ["Globex Industries"] },
            { "canonical": "Initech", "type": "Company" }
        ]))
        .await;
    let globex = seeded["results"][0]["entityID"].as_str().unwrap().to_string();
    companies_function(&app).await;
    let text = "Globex Industries bought from Initech.\n\nLater Globex wrote again.\n";
    let call = app.call_file("linked", "text", text.as_bytes(), json!({"callReferenceID": "two-ways"})).await;
    assert_eq!(call["status"], "completed", "{call}");
    let entity = json(app.get(&format!("/v3/entities/{globex}")).await).await;
    assert_eq!(entity["mentionCount"], 1, "{entity}");
    assert_eq!(entity["previewMentions"][0]["surface"], "Globex Industries", "{entity}");
}

#[tokio::test]
async fn a_document_of_more_paragraphs_than_sections_keeps_the_rest_of_its_text_in_the_last() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    let paragraphs: Vec<String> = (0..20_010).map(|i| format!("Paragraph number {i} ends here.")).collect();
    app.parse_text("long-1", &paragraphs.join("\n\n")).await;
    let stat = app.fs(json!({"op": "stat", "path": "long-1"})).await;
    assert_eq!(stat["data"]["sectionCount"], 20_000, "{stat}");
    let tail = app.fs(json!({"op": "grep", "pattern": "number 20009 ends", "scope": "sections"})).await;
    assert_eq!(tail["count"], 1, "the last paragraph is still there: {tail}");
    assert_eq!(tail["data"][0]["label"], "page 1 › paragraph 20000", "{tail}");
}
