//! Entities: resolution by bulk seed, curation, synonyms, seed jobs, concurrency.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with};
use canon::jobs::Handlers;
use serde_json::{json, Value};
use std::collections::HashMap;

fn outcomes(body: &Value) -> Vec<(String, Option<String>)> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["outcome"].as_str().unwrap().to_string(), r["entityID"].as_str().map(String::from)))
        .collect()
}

#[tokio::test]
async fn seeding_creates_proposed_entities_and_merges_names_that_normalise_alike() {
    let app = spawn_app().await;
    let body = app
        .seed(json!([
            { "canonical": "Acme Inc.", "type": "Company", "synonyms": ["ACME Corporation"] },
            { "canonical": "  acme,  LLC ", "type": "Company" },
            { "canonical": "Ａｃｍｅ", "type": "Company" },
            { "canonical": "Globex", "type": "Company" },
        ]))
        .await;
    let rows = outcomes(&body);
    assert_eq!(rows[0].0, "created");
    assert_eq!(rows[1].0, "merged-with");
    assert_eq!(rows[2].0, "merged-with");
    assert_eq!(rows[1].1, rows[0].1);
    assert_eq!(rows[2].1, rows[0].1);
    assert_eq!(rows[3].0, "created");
    assert_eq!(body["summary"], json!({ "created": 2, "merged": 2, "rejected": 0 }));
    let acme = json(app.get(&format!("/v3/entities/{}", rows[0].1.as_ref().unwrap())).await).await;
    assert_eq!(acme["status"], "proposed");
    assert_eq!(acme["type"], "Company");
    assert!(acme["typeID"].as_str().unwrap().starts_with("ety_"), "the type was created and assigned");
    for form in ["Acme Inc.", "ACME Corporation", "acme,  LLC", "Ａｃｍｅ"] {
        assert!(acme["surfaceForms"].as_array().unwrap().iter().any(|f| f == form), "{form} in {acme}");
    }
}

#[tokio::test]
async fn synonyms_past_a_thousand_at_once_are_refused_naming_the_bound() {
    let app = spawn_app().await;
    let synonyms = |n: usize| (0..n).map(|i| format!("Acme alias {i}")).collect::<Vec<_>>();
    let body = app
        .seed(json!([
            { "canonical": "Acme", "type": "Company", "synonyms": synonyms(1_000) },
            { "canonical": "Globex", "type": "Company", "synonyms": synonyms(1_001) },
        ]))
        .await;
    let rows = body["results"].as_array().unwrap();
    assert_eq!((&rows[0]["outcome"], &rows[1]["outcome"]), (&json!("created"), &json!("rejected")), "{body}");
    assert!(
        rows[1]["reason"].as_str().unwrap().contains("synonyms: at most 1000 a row (got 1001)"),
        "{body}"
    );
    let acme = json(app.get(&format!("/v3/entities/{}", rows[0]["entityID"].as_str().unwrap())).await).await;
    let forms = acme["surfaceForms"].as_array().unwrap().len();
    assert_eq!(forms, 1_000, "the name and its 1,000 synonyms, cut to the 1,000 forms a record lists");
    let id = acme["entityID"].as_str().unwrap();
    let response = app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": synonyms(1_001) })).await;
    let error = assert_error(response, 400).await;
    assert_eq!(error["details"]["field"], "addSynonyms", "{error}");
    assert!(error["message"].as_str().unwrap().contains("at most 1000 at once (got 1001)"), "{error}");
}

/// Every new spelling adds a surface form, so an entity can gather a tenant's thousands: its
/// record (alone or on a review page) lists the first thousand, sorted, and no more.
#[tokio::test]
async fn an_entity_record_lists_at_most_a_thousand_surface_forms_sorted() {
    let app = spawn_app().await;
    let synonyms =
        |from: usize, to: usize| (from..to).map(|i| format!("Initrode alias {i:04}")).collect::<Vec<_>>();
    let seeded = app
        .seed(json!([{ "canonical": "Initrode", "type": "Company", "synonyms": synonyms(0, 1_000) }]))
        .await;
    let id = seeded["results"][0]["entityID"].as_str().unwrap().to_string();
    let added =
        app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": synonyms(1_000, 1_200) })).await;
    assert_eq!(added.status(), 200);
    let record = json(app.get(&format!("/v3/entities/{id}")).await).await;
    let forms: Vec<String> = serde_json::from_value(record["surfaceForms"].clone()).unwrap();
    assert_eq!(forms.len(), 1_000, "1,201 forms, a thousand listed");
    let mut sorted = forms.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, forms, "sorted, each once");
    let page = json(app.get("/v3/review-queue").await).await;
    let listed = &page["entities"][0];
    assert_eq!(listed["entityID"], id.as_str());
    assert_eq!(listed["surfaceForms"].as_array().unwrap().len(), 1_000, "a review page's record too");
}

/// Spellings of one name ("UMBRELLA wobbles", "Umbrella Wobbles"…) are one key's forms; a key
/// keeps the first hundred, however they come (a seed's synonyms, a PATCH, a mention).
#[tokio::test]
async fn a_name_keeps_at_most_a_hundred_spellings_whichever_way_they_come() {
    let app = spawn_app().await;
    let spelling = |i: usize| -> String {
        "umbrella wobbles"
            .chars()
            .enumerate()
            .map(|(at, c)| if i >> (at % 16) & 1 == 1 { c.to_ascii_uppercase() } else { c })
            .collect()
    };
    let spellings = |from: usize, to: usize| (from..to).map(spelling).collect::<Vec<_>>();
    let seeded =
        app.seed(json!([{ "canonical": "Initech", "type": "Company", "synonyms": spellings(0, 150) }])).await;
    let id = seeded["results"][0]["entityID"].as_str().unwrap().to_string();
    let forms = |record: &Value| record["surfaceForms"].as_array().unwrap().len();
    let record = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(forms(&record), 101, "its name and a hundred of the 150 spellings: {record}");

    let patched =
        app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": spellings(150, 160) })).await;
    assert_eq!(patched.status(), 200);
    let mention = json!({ "entityID": id, "surface": spelling(160), "referenceID": "doc-1" });
    assert_eq!(app.post("/v3/mentions", mention).await.status(), 200);
    let record = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(forms(&record), 101, "{record}");
    assert!(!record["surfaceForms"].as_array().unwrap().contains(&json!(spelling(160))));
    assert_eq!(record["mentionCount"], 1, "the mention is kept; only its spelling is not");
}

/// The graph engine holds every tenant's graph: past its bound a tenant's seed rows are
/// rejected, saying so, and other tenants seed on.
#[tokio::test]
async fn the_same_name_under_another_type_is_never_merged() {
    let app = spawn_app().await;
    let body = app
        .seed(json!([{ "canonical": "Jordan", "type": "Person" }, { "canonical": "Jordan", "type": "Country" }]))
        .await;
    let rows = outcomes(&body);
    assert_eq!((rows[0].0.as_str(), rows[1].0.as_str()), ("created", "created"));
    assert_ne!(rows[0].1, rows[1].1);
}

#[tokio::test]
async fn acronyms_match_only_by_exact_key_or_a_declared_synonym() {
    let app = spawn_app().await;
    let ibm = app.entity("International Business Machines", "Company").await;
    let body = app.seed(json!([{ "canonical": "IBM", "type": "Company" }])).await;
    assert_eq!(outcomes(&body)[0].0, "created", "no fuzzy merge of an acronym");
    let other = outcomes(&body)[0].1.clone().unwrap();
    assert_ne!(other, ibm);
    let body = app.seed(json!([{ "canonical": "Big Blue", "type": "Company", "synonyms": ["International Business Machines"] }])).await;
    assert_eq!(
        outcomes(&body)[0],
        ("merged-with".to_string(), Some(ibm.clone())),
        "a declared synonym matches"
    );
    let body = app.seed(json!([{ "canonical": "I.B.M. Corp", "type": "Company" }])).await;
    assert_eq!(
        outcomes(&body)[0],
        ("merged-with".to_string(), Some(other)),
        "the exact key matches the acronym"
    );
}

#[tokio::test]
async fn a_row_whose_synonym_names_an_existing_entity_merges_into_it() {
    let app = spawn_app().await;
    let globex = app.entity("Globex", "Company").await;
    let body = app.seed(json!([{ "canonical": "Globex Corporation International", "type": "Company", "synonyms": ["globex"] }])).await;
    assert_eq!(outcomes(&body)[0], ("merged-with".to_string(), Some(globex.clone())));
    let entity = json(app.get(&format!("/v3/entities/{globex}")).await).await;
    assert!(entity["surfaceForms"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "Globex Corporation International"));
}

#[tokio::test]
async fn a_merge_keeps_the_longer_description_adds_new_attribute_keys_and_synonyms() {
    let app = spawn_app().await;
    app.seed(json!([{ "canonical": "Initech", "type": "Company", "description": "software",
        "attributes": { "country": "US" }, "synonyms": ["Initech Corp"] }]))
        .await;
    let body = app
        .seed(json!([{ "canonical": "INITECH", "type": "Company", "description": "enterprise software maker",
            "attributes": { "country": "CA", "founded": 1998 }, "synonyms": ["Initrode"] }]))
        .await;
    let id = outcomes(&body)[0].1.clone().unwrap();
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["description"], "enterprise software maker");
    assert_eq!(entity["attributes"], json!({ "country": "US", "founded": 1998 }), "existing values are kept");
    let forms = entity["surfaceForms"].as_array().unwrap();
    assert!(forms.iter().any(|f| f == "Initrode") && forms.iter().any(|f| f == "Initech Corp"), "{forms:?}");
    let shorter = app.seed(json!([{ "canonical": "Initech", "type": "Company", "description": "sw" }])).await;
    assert_eq!(outcomes(&shorter)[0].0, "merged-with");
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["description"], "enterprise software maker", "a shorter description does not win");
}

#[tokio::test]
async fn invalid_rows_are_rejected_with_a_reason_while_the_others_apply() {
    let app = spawn_app().await;
    let response = app
        .post("/v3/entity-types", json!({ "name": "Drug", "attributeSchema": { "properties": { "dosageMg": { "type": "number" } } } }))
        .await;
    assert_eq!(response.status(), 200);
    let body = app
        .seed(json!([
            { "canonical": "Aspirin", "type": "Drug", "attributes": { "dosageMg": 100 } },
            { "canonical": "Ibuprofen", "type": "Drug", "attributes": { "colour": "white" } },
            { "canonical": "!!!", "type": "Drug" },
            { "canonical": "No type" },
            { "canonical": "Bad attributes", "type": "Drug", "attributes": [1] },
            { "canonical": 42, "type": "Drug" },
            { "canonical": "Paracetamol", "type": "Drug" },
        ]))
        .await;
    let results = body["results"].as_array().unwrap();
    let outcome = |i: usize| results[i]["outcome"].as_str().unwrap();
    assert_eq!((outcome(0), outcome(6)), ("created", "created"));
    for (i, row) in results.iter().enumerate().take(6).skip(1) {
        assert_eq!(outcome(i), "rejected", "row {i}");
        assert!(row["reason"].as_str().is_some_and(|r| !r.is_empty()), "row {i} says why");
        assert!(row.get("entityID").is_none());
    }
    assert!(results[1]["reason"].as_str().unwrap().contains("colour"));
    assert_eq!(body["summary"], json!({ "created": 2, "merged": 0, "rejected": 5 }));
}

#[tokio::test]
async fn a_malformed_request_is_a_400_and_an_unknown_bucket_a_404() {
    let app = spawn_app().await;
    assert_error(app.post("/v3/entities/bulk", json!({ "entities": [] })).await, 400).await;
    assert_error(
        app.post("/v3/entities/bulk", json!({ "entities": [{}], "onConflict": "replace" })).await,
        400,
    )
    .await;
    assert_error(app.post("/v3/entities/bulk", json!({ "entities": "x" })).await, 400).await;
    let unknown = app.post("/v3/entities/bulk", json!({ "entities": [{ "canonical": "X", "type": "T" }], "bucket": "bkt_01NOSUCH0000000000000000000" })).await;
    assert_error(unknown, 404).await;
}

#[tokio::test]
async fn seeding_into_a_bucket_keeps_its_entities_apart_from_the_default_bucket() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("Clients").await;
    let in_default = app.entity("Umbrella", "Company").await;
    let response = app
        .post(
            "/v3/entities/bulk",
            json!({ "entities": [{ "canonical": "Umbrella", "type": "Company" }], "bucket": bucket }),
        )
        .await;
    let body = json(response).await;
    assert_eq!(body["results"][0]["outcome"], "created", "another bucket, another entity");
    let in_bucket = body["results"][0]["entityID"].as_str().unwrap().to_string();
    assert_ne!(in_default, in_bucket);
    assert_eq!(json(app.get(&format!("/v3/entities/{in_bucket}")).await).await["bucketID"], bucket.as_str());
    assert_error(app.get(&format!("/v3/entities/{in_default}?bucket={bucket}")).await, 404).await;
    // Deleting the bucket needs cascade now, and cascade removes its entity.
    assert_error(app.delete(&format!("/v3/buckets/{bucket}")).await, 409).await;
    assert_eq!(app.delete(&format!("/v3/buckets/{bucket}?cascade=true")).await.status(), 204);
    assert_error(app.get(&format!("/v3/entities/{in_bucket}")).await, 404).await;
}

fn rows(count: usize, prefix: &str) -> Vec<Value> {
    (0..count).map(|i| json!({ "canonical": format!("{prefix} {i}"), "type": "Company" })).collect()
}

#[tokio::test]
async fn a_hundred_rows_or_more_become_a_seed_job_that_reports_progress_and_results() {
    let app = spawn_app().await;
    let mut batch = rows(149, "Supplier");
    batch.push(json!({ "canonical": "Supplier 0 Inc", "type": "Company" }));
    let response = app.post("/v3/entities/bulk", json!({ "entities": batch })).await;
    assert_eq!(response.status(), 202);
    let accepted = json(response).await;
    let id = accepted["seedJobID"].as_str().unwrap().to_string();
    assert!(id.starts_with("esj_"));
    assert_eq!(accepted["statusURL"], format!("/v3/entities/seed/{id}"));
    assert!(["pending", "processing", "completed"].contains(&accepted["status"].as_str().unwrap()));
    let status = app.wait_for_seed(&id).await;
    assert_eq!((status["totalRows"].as_i64(), status["createdCount"].as_i64()), (Some(150), Some(149)));
    assert_eq!((status["mergedCount"].as_i64(), status["rejectedCount"].as_i64()), (Some(1), Some(0)));
    let results = status["results"].as_array().unwrap();
    assert_eq!(results.len(), 150);
    assert_eq!(results[149]["outcome"], "merged-with");
    assert_eq!(results[149]["entityID"], results[0]["entityID"]);
    let other = app.another_tenant().await;
    let response = app
        .client
        .get(format!("{}/v3/entities/seed/{id}", app.address))
        .header("x-api-key", other)
        .send()
        .await
        .unwrap();
    assert_error(response, 404).await;
}

#[tokio::test]
async fn a_seed_job_cut_short_by_a_restart_resumes_with_no_row_lost_or_applied_twice() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    let batch = rows(2_500, "Vendor");
    let response = app.post("/v3/entities/bulk", json!({ "entities": batch })).await;
    assert_eq!(response.status(), 202);
    let id = json(response).await["seedJobID"].as_str().unwrap().to_string();
    // A worker got through two chunks, but died after writing the second to the graph and
    // before saving its progress.
    let state = app.app().state.clone();
    let job = state.records.seed_job_by_id(&id).await.unwrap().unwrap();
    let tenant = canon::graph::Tenant {
        account_id: job.account_id.clone(),
        environment: canon::store::records::keys::Environment::Sandbox,
    };
    let first = state.graph.seed_rows(&tenant, &job.bucket_id, &job.rows[..1000], &job.id, 0).await.unwrap();
    state.graph.seed_rows(&tenant, &job.bucket_id, &job.rows[1000..2000], &job.id, 1000).await.unwrap();
    let saved: Vec<Value> = first.iter().map(|r| serde_json::to_value(r).unwrap()).collect();
    state.records.save_seed_progress(&id, "processing", 0, &saved, None).await.unwrap();
    let running = json(app.get(&format!("/v3/entities/seed/{id}")).await).await;
    assert_eq!(
        (&running["status"], &running["processedRows"], &running["createdCount"], &running["mergedCount"]),
        (&json!("processing"), &json!(1_000), &json!(1_000), &json!(0)),
        "a running job counts what it saved: {running}"
    );
    assert!(running.get("results").is_none(), "results come once the job completes: {running}");
    app.stop().await;
    app.config.workers = 2;
    app.start().await;

    let status = app.wait_for_seed(&id).await;
    assert_eq!(status["createdCount"], 2_500, "replayed rows still report created: {status}");
    assert_eq!((status["mergedCount"].as_i64(), status["rejectedCount"].as_i64()), (Some(0), Some(0)));
    let ids: std::collections::HashSet<&str> =
        status["results"].as_array().unwrap().iter().map(|r| r["entityID"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2_500, "one entity per row");
    let count = app
        .cypher("MATCH (e:Entity {accountID: $a}) RETURN count(e) AS n", json!({ "a": job.account_id }))
        .await;
    assert_eq!(count[0]["n"], 2_500, "no row applied twice");
}

#[tokio::test]
async fn a_seed_job_writing_statements_back_to_back_still_creates_each_name_by_its_first_row() {
    // 500 rows a statement: the second statement repeats the first's names (so it must wait
    // for it), the third and fourth are new names (written while the one before is in flight).
    // This checks the results with statements overlapping; which waves may overlap is
    // checked in `src/graph/seed.rs` (FalkorDB answers in order, so no test here sees it).
    let app = spawn_app().await;
    let batch: Vec<Value> = (0..2_000)
        .map(|i| {
            let canonical = match i / 500 {
                0 => format!("Alpha {i}"),
                1 => format!("ALPHA {} Inc.", i - 500),
                2 => format!("Beta {i}"),
                _ => format!("Gamma {i}"),
            };
            json!({ "canonical": canonical, "type": "Company" })
        })
        .collect();
    let response = app.post("/v3/entities/bulk", json!({ "entities": batch })).await;
    assert_eq!(response.status(), 202);
    let id = json(response).await["seedJobID"].as_str().unwrap().to_string();
    let status = app.wait_for_seed(&id).await;
    assert_eq!((status["createdCount"].as_i64(), status["mergedCount"].as_i64()), (Some(1_500), Some(500)));
    let results = status["results"].as_array().unwrap();
    for (i, result) in results.iter().enumerate() {
        let expected = if (500..1_000).contains(&i) { "merged-with" } else { "created" };
        assert_eq!(result["outcome"], expected, "row {i}: {result}");
    }
    for i in 0..500 {
        assert_eq!(results[i + 500]["entityID"], results[i]["entityID"], "row {} joins row {i}", i + 500);
    }
    let ids: std::collections::HashSet<&str> =
        results.iter().map(|r| r["entityID"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 1_500);
    let count = app
        .cypher("MATCH (e:Entity {accountID: $a}) RETURN count(e) AS n", json!({ "a": app.account_id }))
        .await;
    assert_eq!(count[0]["n"], 1_500, "one entity per name");
}

#[tokio::test]
async fn eight_concurrent_seeds_with_overlapping_names_leave_one_entity_per_key() {
    let created = concurrent_overlapping_seeds(|name, n| {
        let spelling = if n % 2 == 0 { name.to_string() } else { format!("{} Inc.", name.to_uppercase()) };
        json!({ "canonical": spelling, "type": "Company", "synonyms": [format!("{name} Ltd")] })
    })
    .await;
    assert_eq!(created, 40, "each name created once");
}

#[tokio::test]
async fn concurrent_seeds_of_bare_names_resolved_in_the_write_leave_one_entity_per_key() {
    // Rows without synonyms or compared attributes skip the lookup: the write's MERGE alone
    // must keep them to one entity per name, and report each created exactly once.
    let created = concurrent_overlapping_seeds(|name, n| {
        let spelling = if n % 2 == 0 { name.to_string() } else { format!("{} Inc.", name.to_uppercase()) };
        json!({ "canonical": spelling, "type": "Company" })
    })
    .await;
    assert_eq!(created, 40, "each name created once");
}

/// Eight concurrent seeds of 40 rows over 40 names (`row(name, request)`); asserts every
/// name ends as one entity, and returns how many rows reported `created`.
async fn concurrent_overlapping_seeds(row: impl Fn(&str, usize) -> Value) -> usize {
    let app = spawn_app().await;
    let names: Vec<String> = (0..40).map(|i| format!("Company {i}")).collect();
    let requests = (0..8).map(|n| {
        let batch: Vec<Value> = (0..40).map(|i| row(&names[(i * 7 + n * 3) % names.len()], n)).collect();
        app.post("/v3/entities/bulk", json!({ "entities": batch }))
    });
    let mut entity_of: HashMap<String, String> = HashMap::new();
    let mut created = 0;
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), 200);
        let body = json(response).await;
        for result in body["results"].as_array().unwrap() {
            let key = canon::graph::normalize::normalize(result["canonical"].as_str().unwrap());
            let id = result["entityID"].as_str().unwrap().to_string();
            let previous = entity_of.entry(key.clone()).or_insert_with(|| id.clone());
            assert_eq!(previous, &id, "{key} resolved to two entities");
            created += usize::from(result["outcome"] == "created");
        }
    }
    let count = app
        .cypher("MATCH (e:Entity {accountID: $a}) RETURN count(e) AS n", json!({ "a": app.account_id }))
        .await;
    assert_eq!(count[0]["n"].as_u64().unwrap() as usize, entity_of.len());
    assert_eq!(entity_of.len(), names.len());
    created
}

/// The type `Restaurant`, comparing its `city` exactly and its `phone` as an identifier.
async fn create_restaurant_type(app: &crate::helpers::TestApp) {
    let schema = json!({ "properties": {
        "city": { "type": "string", "x-compare": "exact" },
        "phone": { "type": "string", "x-compare": "identifier" },
    }});
    let response =
        app.post("/v3/entity-types", json!({ "name": "Restaurant", "attributeSchema": schema })).await;
    assert_eq!(response.status(), 200);
}

/// How many entities are named Palm.
async fn palms(app: &crate::helpers::TestApp) -> u64 {
    let query = "MATCH (e:Entity {accountID: $a}) WHERE e.canonical = 'Palm' RETURN count(e) AS n";
    app.cypher(query, json!({ "a": app.account_id })).await[0]["n"].as_u64().unwrap()
}

#[tokio::test]
async fn a_name_whose_compared_attributes_disagree_becomes_a_homonym_that_later_rows_find() {
    let app = spawn_app().await;
    create_restaurant_type(&app).await;
    let palm = |city: &str, phone: &str| json!({ "canonical": "Palm", "type": "Restaurant", "attributes": { "city": city, "phone": phone } });
    let first = outcomes(
        &app.seed(json!([palm("new york", "212-687-2953"), palm("los angeles", "310-550-8811")])).await,
    );
    assert_eq!((first[0].0.as_str(), first[1].0.as_str()), ("created", "created"));
    assert_ne!(first[0].1, first[1].1, "one name, another city and phone: two restaurants");

    let again = outcomes(
        &app.seed(json!([
            palm("New York", "(212) 687 2953"),
            palm("los angeles", "3105508811"),
            { "canonical": "Palm", "type": "Restaurant" },
            palm("chicago", "312-555-0100"),
        ]))
        .await,
    );
    let merged = |i: usize| ("merged-with".to_string(), first[i].1.clone());
    assert_eq!(again[0], merged(0), "agreeing attributes join the entity the name names");
    assert_eq!(again[1], merged(1), "and a homonym is found by its attributes");
    assert_eq!(again[2], merged(0), "nothing compared joins the name's entity");
    assert_eq!(again[3].0, "created");
    assert!(![&first[0].1, &first[1].1].contains(&&again[3].1), "a third Palm");
    let la = json(app.get(&format!("/v3/entities/{}", first[1].1.as_ref().unwrap())).await).await;
    assert_eq!(
        (la["canonical"].as_str(), la["attributes"]["city"].as_str()),
        (Some("Palm"), Some("los angeles"))
    );

    // A replayed row (a seed job resumed after a crash) finds the homonym it created.
    let state = app.app().state.clone();
    let tenant = canon::graph::Tenant {
        account_id: app.account_id.clone(),
        environment: canon::store::records::keys::Environment::Sandbox,
    };
    let bucket = state.graph.write_bucket(&tenant, None).await.unwrap();
    let rows = [palm("boston", "617-555-0199")];
    let run = || state.graph.seed_rows(&tenant, &bucket, &rows, "replayed", 0);
    let (once, twice) = (run().await.unwrap(), run().await.unwrap());
    assert_eq!(once[0].outcome, "created");
    assert_eq!(twice, once, "the replay reports the same row created, not a fourth Palm");
}

#[tokio::test]
async fn a_name_with_all_the_homonyms_it_may_have_rejects_a_row_agreeing_with_none_and_joins_one_that_agrees()
{
    let app = spawn_app_with(Handlers::default(), |config| config.homonyms_per_name = 2).await;
    create_restaurant_type(&app).await;
    let palm = |city: &str, phone: &str| json!({ "canonical": "Palm", "type": "Restaurant", "attributes": { "city": city, "phone": phone } });
    let (new_york, los_angeles, chicago) = (
        palm("new york", "212-687-2953"),
        palm("los angeles", "310-550-8811"),
        palm("chicago", "312-555-0100"),
    );
    let first = outcomes(&app.seed(json!([new_york, los_angeles, chicago])).await);
    assert!(first.iter().all(|(outcome, _)| outcome == "created"), "{first:?}");

    let again = app.seed(json!([palm("boston", "617-555-0199"), chicago, los_angeles])).await;
    let result = &again["results"][0];
    assert_eq!(result["outcome"], "rejected", "a fourth Palm would be a third homonym: {result}");
    let reason = result["reason"].as_str().unwrap();
    assert!(reason.contains("already names 3 entities") && reason.contains("more specific name"), "{reason}");
    let again = outcomes(&again);
    assert_eq!(again[1], ("merged-with".to_string(), first[2].1.clone()), "a homonym still takes its rows");
    assert_eq!(again[2], ("merged-with".to_string(), first[1].1.clone()));
    assert_eq!(palms(&app).await, 3, "the name and its two homonyms, no more");
}

#[tokio::test]
async fn eight_concurrent_seeds_of_one_name_in_five_cities_leave_one_entity_a_city() {
    // Each row of the name is checked against the name's homonyms as its lookup saw them; a
    // homonym created meanwhile by another seed must send it back to look again.
    let app = spawn_app().await;
    create_restaurant_type(&app).await;
    let cities = ["new york", "los angeles", "chicago", "boston", "denver"];
    let palm = |i: usize| {
        json!({ "canonical": "Palm", "type": "Restaurant",
            "attributes": { "city": cities[i], "phone": format!("{i}00-555-01{i}{i}") } })
    };
    let requests = (0..8).map(|n| {
        let rows: Vec<Value> = (0..5).map(|i| palm((i + n) % 5)).collect();
        app.post("/v3/entities/bulk", json!({ "entities": rows }))
    });
    let mut entity_of: HashMap<String, String> = HashMap::new();
    for (n, response) in futures::future::join_all(requests).await.into_iter().enumerate() {
        assert_eq!(response.status(), 200);
        let body = json(response).await;
        for (i, result) in body["results"].as_array().unwrap().iter().enumerate() {
            assert_ne!(result["outcome"], "rejected", "{result}");
            let city = cities[(i + n) % 5].to_string();
            let id = result["entityID"].as_str().unwrap().to_string();
            let previous = entity_of.entry(city.clone()).or_insert_with(|| id.clone());
            assert_eq!(previous, &id, "{city} resolved to two entities");
        }
    }
    let ids: std::collections::HashSet<&String> = entity_of.values().collect();
    assert_eq!(ids.len(), 5, "one Palm a city");
    assert_eq!(palms(&app).await, 5);
}

#[tokio::test]
async fn a_running_seed_job_counts_chunks_saved_before_counts_were_kept_and_after() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The schema of the canon that saved each chunk's results without their counts.
    let (records, url) = crate::helpers::records_through(dir.path(), 15).await;
    let rows: Vec<Value> = (0..4).map(|i| json!({"canonical": format!("N{i}"), "type": "T"})).collect();
    records.create_seed_job("esj_mid", "acc_mid", "sandbox", "bkt_mid", &rows).await.expect("job");
    let result = |outcome: &str| json!({"canonical": "N", "outcome": outcome, "entityID": "ent_n"});
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    sqlx::query("INSERT INTO seed_job_results (job_id, first_row, results_json) VALUES ('esj_mid', 0, $1)")
        .bind(json!([result("created"), result("rejected")]).to_string())
        .execute(&raw)
        .await
        .expect("an older chunk");
    sqlx::query("UPDATE seed_jobs SET status = 'processing', processed_rows = 2 WHERE id = 'esj_mid'")
        .execute(&raw)
        .await
        .expect("its progress");
    raw.close().await;
    records.migrate().await.expect("upgrade");

    records
        .save_seed_progress("esj_mid", "processing", 2, &[result("merged-with"), result("created")], None)
        .await
        .expect("save");
    let progress =
        records.seed_job_progress("esj_mid", "acc_mid", "sandbox").await.expect("read").expect("the job");
    assert_eq!(
        (progress.status.as_str(), progress.processed_rows, progress.total_rows),
        ("processing", 4, 4)
    );
    let counts = canon::store::records::seed_jobs::OutcomeCounts { created: 2, merged: 1, rejected: 1 };
    assert_eq!(progress.counts, counts);
    assert!(records.seed_job_progress("esj_mid", "acc_other", "sandbox").await.expect("read").is_none());
    records.close().await;
}

#[tokio::test]
async fn a_seed_job_saved_before_the_upgrade_keeps_its_results_and_adds_the_rest_after_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The schema of the canon that kept every result so far in the job's own row.
    let (records, url) = crate::helpers::records_through(dir.path(), 13).await;
    let rows = vec![json!({"canonical": "A", "type": "T"}), json!({"canonical": "B", "type": "T"})];
    records.create_seed_job("esj_old", "acc_old", "sandbox", "bkt_old", &rows).await.expect("job");
    let first = json!({"canonical": "A", "outcome": "created", "entityID": "ent_a"});
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    sqlx::query("UPDATE seed_jobs SET status = 'processing', processed_rows = 1, results_json = $1 WHERE id = 'esj_old'")
        .bind(json!([first]).to_string())
        .execute(&raw)
        .await
        .expect("an older save");
    raw.close().await;
    records.migrate().await.expect("upgrade");

    let job = records.seed_job_by_id("esj_old").await.expect("read").expect("the job");
    assert_eq!((job.processed_rows, job.results.clone()), (1, vec![first.clone()]));
    let second = json!({"canonical": "B", "outcome": "created", "entityID": "ent_b"});
    records
        .save_seed_progress("esj_old", "completed", 1, std::slice::from_ref(&second), None)
        .await
        .expect("save");
    let job = records.seed_job("esj_old", "acc_old", "sandbox").await.expect("read").expect("the job");
    assert_eq!((job.status.as_str(), job.processed_rows), ("completed", 2));
    assert_eq!(job.results, vec![first, second], "the older result first, then the new chunk's");
    assert!(job.rows.is_empty(), "a status read leaves the rows alone");
    records.close().await;
}
