//! Collections over HTTP with the real model (all-MiniLM-L6-v2) and Qdrant Edge: names,
//! hierarchy, items through the job queue, search in three modes, tenancy, persistence.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use canon::store::vectors::{fields, Condition, Filter};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;

impl TestApp {
    async fn create_collection(&self, name: &str) -> Value {
        let response = self.post("/v3/collections", json!({ "collectionName": name })).await;
        assert_eq!(response.status(), 200, "creating collection {name}");
        json(response).await
    }

    /// Adds items and returns the acknowledgement.
    async fn add_items(&self, collection: &str, data: Vec<Value>) -> Value {
        let items: Vec<Value> = data.into_iter().map(|d| json!({ "data": d })).collect();
        let response =
            self.post("/v3/collections/items", json!({ "collectionName": collection, "items": items })).await;
        assert_eq!(response.status(), 202, "adding items to {collection}");
        json(response).await
    }

    async fn items(&self, collection: &str, query: &str) -> Value {
        let response = self.get(&format!("/v3/collections/items?collectionName={collection}{query}")).await;
        assert_eq!(response.status(), 200, "listing items of {collection}");
        json(response).await
    }

    /// Waits until no item of the collection's subtree is pending; returns the items.
    async fn settled_items(&self, collection: &str) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let page = self.items(collection, "&includeSubcollections=true&limit=100").await;
            let items = page["items"].as_array().cloned().unwrap_or_default();
            if items.iter().all(|item| item["status"] != "pending") {
                return items;
            }
            assert!(tokio::time::Instant::now() < deadline, "items of {collection} still pending: {page}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The event recorded for a write, once its job has finished (it records the event
    /// after marking the items).
    async fn event(&self, event_id: &str) -> Value {
        let tenant =
            canon::graph::Tenant { account_id: self.account_id.clone(), environment: Environment::Sandbox };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let event = self.app().state.collections.event(&tenant, event_id).await.expect("read event");
            if let Some(event) = event {
                return event;
            }
            assert!(tokio::time::Instant::now() < deadline, "event {event_id} never recorded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn search(&self, body: Value) -> Value {
        let response = self.post("/v3/collections/search", body.clone()).await;
        assert_eq!(response.status(), 200, "search {body}");
        json(response).await
    }

    async fn put(&self, path: &str, body: Value) -> reqwest::Response {
        self.request(Method::PUT, path).json(&body).send().await.expect("request sent")
    }

    /// Points stored for this app's tenant matching `extra`.
    async fn points(&self, extra: Vec<Condition>) -> u64 {
        let collections = &self.app().state.collections;
        let mut filter = Filter::default()
            .must(Condition::keyword(fields::ACCOUNT, &self.account_id))
            .must(Condition::keyword(fields::ENVIRONMENT, "sandbox"));
        filter.must.extend(extra);
        collections.vectors().count(collections.space(), &filter).await.expect("count points")
    }
}

fn texts(results: &Value) -> Vec<String> {
    results["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|hit| match &hit["data"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_bad_collection_name_is_refused_with_the_reason() {
    let app = spawn_app().await;
    for (name, reason) in [
        ("product-catalog", "'-' is not allowed"),
        ("123items", "starts with a digit"),
        ("items..data", "consecutive dots"),
        ("order#123", "'#' is not allowed"),
        ("orders.9lives", "starts with a digit"),
        ("trailing.", "start or end with a dot"),
        (&vec!["a"; 33].join("."), "has 33 segments; at most 32"),
        (&vec!["a".repeat(250); 5].join("."), "characters long; at most 1024"),
    ] {
        let body =
            assert_error(app.post("/v3/collections", json!({ "collectionName": name })).await, 400).await;
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(reason), "{name}: {message}");
        assert_eq!(body["details"]["field"], "collectionName");
    }
    for name in ["product_catalog", "orders.line_items.sku", "_x", "price_v2"] {
        app.create_collection(name).await;
    }
}

#[tokio::test]
async fn a_collection_is_created_once_and_listed_with_its_item_count() {
    let app = spawn_app().await;
    let created = app.create_collection("catalog").await;
    assert!(created["collectionID"].as_str().unwrap().starts_with("col_"));
    assert_eq!(created["collectionName"], "catalog");
    assert_eq!(created["itemCount"], 0);
    assert!(created["createdAt"].as_str().is_some());
    assert_error(app.post("/v3/collections", json!({ "collectionName": "catalog" })).await, 409).await;
    app.add_items("catalog", vec![json!("one"), json!({"name": "two"})]).await;
    let list = json(app.get("/v3/collections").await).await;
    assert_eq!(list["collections"][0]["collectionName"], "catalog");
    assert_eq!(list["collections"][0]["itemCount"], 2);
    assert_eq!(list["totalCount"], 1);
    assert_eq!(list["page"], 1);
    assert_eq!(list["totalPages"], 1);
}

#[tokio::test]
async fn listing_under_a_parent_covers_its_subtree_only_and_search_ignores_case() {
    let app = spawn_app().await;
    for name in [
        "customers",
        "customers.premium",
        "customers.premium.vip",
        "customers_archive",
        "customersx.premium",
        "products.premium",
    ] {
        app.create_collection(name).await;
    }
    let names = |body: Value| -> Vec<String> {
        body["collections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["collectionName"].as_str().unwrap().to_string())
            .collect()
    };
    let under = json(app.get("/v3/collections?parentCollectionName=customers").await).await;
    assert_eq!(names(under), ["customers", "customers.premium", "customers.premium.vip"]);
    let premium = json(app.get("/v3/collections?collectionNameSearch=PREM").await).await;
    assert_eq!(
        names(premium),
        ["customers.premium", "customers.premium.vip", "customersx.premium", "products.premium"]
    );
    let underscore = json(app.get("/v3/collections?collectionNameSearch=s_a").await).await;
    assert_eq!(names(underscore), ["customers_archive"], "_ is literal");
    let page2 = json(app.get("/v3/collections?limit=4&page=2").await).await;
    assert_eq!(page2["totalPages"], 2);
    assert_eq!(page2["totalCount"], 6);
    assert_eq!(names(page2), ["customersx.premium", "products.premium"]);
    let blank = json(app.get("/v3/collections?parentCollectionName=&limit=4&page=2").await).await;
    assert_eq!(blank["totalCount"], 6, "an empty parent is no filter, as the document says");
    assert_error(app.get("/v3/collections?limit=101").await, 400).await;
    assert_error(app.get("/v3/collections?page=0").await, 400).await;
    assert_error(app.get("/v3/collections?parentCollectionName=bad-name").await, 400).await;
}

#[tokio::test]
async fn items_are_acknowledged_pending_at_once_then_embedded_and_their_event_recorded() {
    // No workers at first: what a client sees before the job has run.
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.create_collection("notes").await;
    let ack = app
        .add_items(
            "notes",
            vec![json!("The meeting moved to Thursday."), json!({"title": "Budget", "amount": 1200})],
        )
        .await;
    assert_eq!(ack["status"], "pending");
    assert!(ack["message"].as_str().is_some_and(|m| !m.is_empty()));
    let event_id = ack["eventID"].as_str().unwrap().to_string();
    assert_eq!(event_id.len(), 27, "a KSUID");
    let page = app.items("notes", "").await;
    assert_eq!(page["itemCount"], 2);
    let items = page["items"].as_array().unwrap();
    assert!(items.iter().all(|item| item["status"] == "pending"));
    assert_eq!(items[1]["data"], json!({"title": "Budget", "amount": 1200}));
    let ids: Vec<Value> = items.iter().map(|i| i["collectionItemID"].clone()).collect();

    app.stop().await;
    app.config.workers = 2;
    app.start().await;
    let items = app.settled_items("notes").await;
    assert!(items.iter().all(|item| item["status"] == "embedded"), "{items:?}");
    let event = app.event(&event_id).await;
    assert_eq!(event["eventID"], event_id.as_str());
    assert_eq!(event["eventType"], "collection_processing");
    assert_eq!(event["operation"], "add");
    assert_eq!(event["status"], "success");
    assert_eq!(event["processedCount"], 2);
    assert_eq!(event["collectionName"], "notes");
    assert_eq!(event["collectionItemIDs"], Value::Array(ids));
    assert_eq!(app.points(vec![]).await, 2);
}

#[tokio::test]
async fn item_requests_are_validated_field_by_field() {
    let app = spawn_app().await;
    app.create_collection("c").await;
    let too_many: Vec<Value> = (0..101).map(|i| json!({ "data": format!("item {i}") })).collect();
    let body = assert_error(
        app.post("/v3/collections/items", json!({ "collectionName": "c", "items": too_many })).await,
        400,
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("at most 100"));
    let body = assert_error(
        app.post(
            "/v3/collections/items",
            json!({ "collectionName": "c", "items": [{ "data": "ok" }, { "data": 42 }] }),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "items[1].data");
    let large = "x".repeat(300 * 1024);
    let body = assert_error(
        app.post("/v3/collections/items", json!({ "collectionName": "c", "items": [{ "data": large }] }))
            .await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "items[0].data");
    assert!(body["message"].as_str().unwrap().contains("at most 262144"), "{body}");
    // Within 256 KiB, but a long key repeated on each field's line would be 1.3 GB of text.
    let fields: serde_json::Map<String, Value> = (0..10_000).map(|i| (format!("f{i}"), json!(0))).collect();
    let deep = json!({ "k".repeat(128 * 1024): fields });
    let body = assert_error(
        app.post(
            "/v3/collections/items",
            json!({ "collectionName": "c", "items": [{ "data": "ok" }, { "data": deep }] }),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "items[1].data");
    assert!(body["message"].as_str().unwrap().contains("would pass 1048576 bytes"), "{body}");
    assert_error(
        app.post("/v3/collections/items", json!({ "collectionName": "c", "items": [{ "nodata": 1 }] })).await,
        400,
    )
    .await;
    assert_error(
        app.post("/v3/collections/items", json!({ "collectionName": "missing", "items": [{ "data": "x" }] }))
            .await,
        404,
    )
    .await;
    assert_error(app.get("/v3/collections/items").await, 400).await;
    assert_error(
        app.put(
            "/v3/collections/items",
            json!({ "collectionName": "c", "items": [{ "collectionItemID": "itm_nope", "data": "x" }] }),
        )
        .await,
        404,
    )
    .await;
}

#[tokio::test]
async fn a_paraphrase_ranks_above_unrelated_text() {
    let app = spawn_app().await;
    app.create_collection("faq").await;
    app.add_items(
        "faq",
        vec![
            json!("How do I reset my password?"),
            json!("Our office is closed on public holidays."),
            json!("The quarterly report shows revenue growth in Europe."),
            json!("Shipping to Canada takes five business days."),
        ],
    )
    .await;
    app.settled_items("faq").await;
    let results = app
        .search(json!({ "collectionName": "faq", "query": "I forgot my login credentials, how can I change them?", "mode": "semantic", "limit": 4 }))
        .await;
    let found = texts(&results);
    assert_eq!(found[0], "How do I reset my password?", "{results}");
    let scores: Vec<f64> =
        results["results"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first");
    assert!(scores[0] > scores[1] + 0.1, "{scores:?}");
    let hit = &results["results"][0];
    assert!(hit["collectionItemID"].as_str().unwrap().starts_with("itm_"));
    assert_eq!(hit["collectionName"], "faq");
    assert_eq!(hit["status"], "embedded");

    let thresholded = app
        .search(json!({ "collectionName": "faq", "query": "I forgot my login credentials, how can I change them?", "scoreThreshold": scores[0] - 0.01 }))
        .await;
    assert_eq!(texts(&thresholded), ["How do I reset my password?"]);
}

#[tokio::test]
async fn hybrid_finds_an_exact_product_code_that_dense_search_misses() {
    let app = spawn_app().await;
    app.create_collection("parts").await;
    // Codes that look alike to the model but share no word with the query.
    let mut items: Vec<Value> = ["ZX-0047", "ZR-0049", "SK-0040", "ZJ-0046", "ZC-0045", "ZV-0048"]
        .iter()
        .map(|code| json!(format!("Order code {code}")))
        .collect();
    items.push(json!(
        "Spare parts catalogue entry: stainless steel hinge, order code ZK-0042, ships in boxes of twelve."
    ));
    app.add_items("parts", items).await;
    app.settled_items("parts").await;
    let query = "ZK-0042";
    let dense = app
        .search(json!({ "collectionName": "parts", "query": query, "mode": "semantic", "limit": 1 }))
        .await;
    let hybrid =
        app.search(json!({ "collectionName": "parts", "query": query, "mode": "hybrid", "limit": 1 })).await;
    let exact =
        app.search(json!({ "collectionName": "parts", "query": query, "mode": "exact", "limit": 3 })).await;
    let wanted =
        "Spare parts catalogue entry: stainless steel hinge, order code ZK-0042, ships in boxes of twelve.";
    assert_ne!(texts(&dense)[0], wanted, "dense alone misses it: {dense}");
    assert_eq!(texts(&hybrid)[0], wanted, "{hybrid}");
    assert_eq!(texts(&exact), [wanted], "only the item with the code: {exact}");
    assert_eq!(hybrid["mode"], "hybrid");
}

#[tokio::test]
async fn another_tenant_sees_nothing_of_a_collection_with_the_same_name() {
    let app = spawn_app().await;
    app.create_collection("shared_name").await;
    app.add_items("shared_name", vec![json!("Secret plans for the new product launch")]).await;
    app.settled_items("shared_name").await;
    for key in [
        app.new_key(Some(&crate::helpers::unique("rival")), Environment::Sandbox).await,
        app.new_key(None, Environment::Production).await,
    ] {
        let as_other = |method: Method, path: &str| {
            app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &key)
        };
        let list: Value =
            as_other(Method::GET, "/v3/collections").send().await.unwrap().json().await.unwrap();
        assert_eq!(list["totalCount"], 0);
        let items =
            as_other(Method::GET, "/v3/collections/items?collectionName=shared_name").send().await.unwrap();
        assert_eq!(items.status(), 404);
        let created = as_other(Method::POST, "/v3/collections")
            .json(&json!({ "collectionName": "shared_name" }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 200, "the name is free for them");
        let results: Value = as_other(Method::POST, "/v3/collections/search")
            .json(&json!({ "collectionName": "shared_name", "query": "product launch plans", "mode": "hybrid" }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(results["results"], json!([]), "{results}");
    }
    let mine = app.search(json!({ "collectionName": "shared_name", "query": "product launch plans" })).await;
    assert_eq!(texts(&mine).len(), 1);
}

#[tokio::test]
async fn subcollections_are_folded_in_only_when_asked_for_listing_and_search() {
    let app = spawn_app().await;
    for name in ["shop", "shop.shoes", "shop.shoes.running", "shop_old"] {
        app.create_collection(name).await;
    }
    app.add_items("shop", vec![json!("Gift cards for every occasion")]).await;
    app.add_items("shop.shoes", vec![json!("Leather boots for winter hiking")]).await;
    app.add_items("shop.shoes.running", vec![json!("Lightweight running shoes for marathon training")]).await;
    app.add_items("shop_old", vec![json!("Running shoes from last season")]).await;
    app.settled_items("shop").await;
    app.settled_items("shop_old").await;
    let own = app.items("shop", "").await;
    assert_eq!(own["itemCount"], 1);
    let all = app.items("shop", "&includeSubcollections=true").await;
    assert_eq!(all["itemCount"], 3);
    let in_collections: Vec<&str> =
        all["items"].as_array().unwrap().iter().map(|i| i["collectionName"].as_str().unwrap()).collect();
    assert_eq!(in_collections, ["shop", "shop.shoes", "shop.shoes.running"]);
    let paged = app.items("shop", "&includeSubcollections=true&limit=2&page=2").await;
    assert_eq!(paged["totalPages"], 2);
    assert_eq!(paged["items"].as_array().unwrap().len(), 1);

    let query = "shoes for running a marathon";
    let shallow = app.search(json!({ "collectionName": "shop", "query": query })).await;
    assert_eq!(texts(&shallow), ["Gift cards for every occasion"]);
    let deep =
        app.search(json!({ "collectionName": "shop", "query": query, "includeSubcollections": true })).await;
    let found = texts(&deep);
    assert_eq!(found.len(), 3, "not shop_old: {deep}");
    assert_eq!(found[0], "Lightweight running shoes for marathon training");
    let branch = app
        .search(json!({ "collectionName": "shop.shoes", "query": query, "includeSubcollections": true, "mode": "exact" }))
        .await;
    assert_eq!(texts(&branch)[0], "Lightweight running shoes for marathon training");
    app.create_collection("outlet.shoes").await;
    let implicit_parent = app
        .search(json!({ "collectionName": "outlet", "query": query, "includeSubcollections": true }))
        .await;
    assert_eq!(implicit_parent["results"], json!([]), "a parent path needs no collection of its own");
    assert_error(
        app.post("/v3/collections/search", json!({ "collectionName": "outlet", "query": query })).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn payload_filters_narrow_a_search_to_matching_object_items() {
    let app = spawn_app().await;
    app.create_collection("products").await;
    app.add_items(
        "products",
        vec![
            json!({"name": "Trail running shoe", "brand": "acme", "size": 42, "tags": ["outdoor"]}),
            json!({"name": "Road running shoe", "brand": "zenith", "size": 42, "tags": ["city"]}),
            json!({"name": "Running sock", "brand": "acme", "size": 40, "tags": ["outdoor", "city"]}),
        ],
    )
    .await;
    app.settled_items("products").await;
    let names = |body: &Value| -> Vec<String> {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["data"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let acme = app
        .search(json!({ "collectionName": "products", "query": "running shoe", "filter": {"brand": "acme"} }))
        .await;
    assert_eq!(names(&acme), ["Trail running shoe", "Running sock"]);
    let sized = app
        .search(json!({ "collectionName": "products", "query": "running shoe", "filter": {"brand": ["acme", "zenith"], "size": 42} }))
        .await;
    assert_eq!(names(&sized).len(), 2);
    // A size computed in floating point (42.0) filters as the integer it is.
    let floated = app
        .search(json!({ "collectionName": "products", "query": "running shoe", "filter": {"brand": ["acme", "zenith"], "size": [42.0]} }))
        .await;
    assert_eq!(names(&floated), names(&sized));
    let city = app
        .search(json!({ "collectionName": "products", "query": "shoe", "mode": "hybrid", "filter": {"tags": "city"} }))
        .await;
    let mut city = names(&city);
    city.sort();
    assert_eq!(city, ["Road running shoe", "Running sock"]);
    let body = assert_error(
        app.post(
            "/v3/collections/search",
            json!({ "collectionName": "products", "query": "shoe", "filter": {"price": 1.5} }),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "filter.price");
    assert_error(
        app.post(
            "/v3/collections/search",
            json!({ "collectionName": "products", "query": "shoe", "mode": "fuzzy" }),
        )
        .await,
        400,
    )
    .await;
    assert_error(
        app.post(
            "/v3/collections/search",
            json!({ "collectionName": "products", "query": "shoe", "limit": 0 }),
        )
        .await,
        400,
    )
    .await;
    assert_error(
        app.post("/v3/collections/search", json!({ "collectionName": "nowhere", "query": "shoe" })).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn an_updated_item_is_found_by_its_new_meaning_and_a_deleted_one_not_at_all() {
    let app = spawn_app().await;
    app.create_collection("kb").await;
    app.add_items(
        "kb",
        vec![json!("Bananas are rich in potassium."), json!("Paris is the capital of France.")],
    )
    .await;
    let items = app.settled_items("kb").await;
    let banana = items[0]["collectionItemID"].as_str().unwrap().to_string();
    let paris = items[1]["collectionItemID"].as_str().unwrap().to_string();
    let response = app
        .put(
            "/v3/collections/items",
            json!({ "collectionName": "kb", "items": [{ "collectionItemID": banana, "data": "Volcanoes erupt molten rock called lava." }] }),
        )
        .await;
    assert_eq!(response.status(), 202);
    let ack = json(response).await;
    assert_eq!(ack["status"], "pending");
    app.settled_items("kb").await;
    let results =
        app.search(json!({ "collectionName": "kb", "query": "lava from a volcano", "limit": 1 })).await;
    assert_eq!(results["results"][0]["collectionItemID"], banana.as_str());
    assert_eq!(results["results"][0]["data"], "Volcanoes erupt molten rock called lava.");
    assert_eq!(
        app.points(vec![Condition::keyword(fields::ITEM, &banana)]).await,
        1,
        "the old vector is replaced"
    );

    let deleted =
        app.delete(&format!("/v3/collections/items?collectionName=kb&collectionItemID={paris}")).await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(app.points(vec![Condition::keyword(fields::ITEM, &paris)]).await, 0);
    let results = app.search(json!({ "collectionName": "kb", "query": "capital city of France" })).await;
    assert!(!texts(&results).contains(&"Paris is the capital of France.".to_string()));
    assert_error(
        app.delete(&format!("/v3/collections/items?collectionName=kb&collectionItemID={paris}")).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn deleting_a_collection_deletes_its_subtree_items_and_vectors_and_nothing_else() {
    let app = spawn_app().await;
    for name in ["a", "a.b", "a.b.c", "ab"] {
        app.create_collection(name).await;
        app.add_items(name, vec![json!(format!("an item of {name}"))]).await;
    }
    app.settled_items("a").await;
    app.settled_items("ab").await;
    assert_eq!(app.points(vec![]).await, 4);
    let response = app.delete("/v3/collections?collectionName=a.b").await;
    assert_eq!(response.status(), 204);
    let list = json(app.get("/v3/collections").await).await;
    let names: Vec<&str> = list["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["collectionName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "ab"]);
    assert_eq!(app.points(vec![]).await, 2);
    assert_eq!(app.points(vec![Condition::keyword(fields::SCOPE, "a.b")]).await, 0);
    assert_error(app.delete("/v3/collections?collectionName=a.b").await, 404).await;
    assert_error(app.delete("/v3/collections").await, 400).await;
    // The name can be used again, empty.
    let again = app.create_collection("a.b.c").await;
    assert_eq!(again["itemCount"], 0);
}

#[tokio::test]
async fn token_counts_say_which_texts_fit_and_an_over_long_item_fails_saying_why() {
    let app = spawn_app().await;
    let long = "token ".repeat(9_000);
    let response = app.post("/v3/collections/token-count", json!({ "texts": ["Hello world", long] })).await;
    assert_eq!(response.status(), 200);
    let counts = json(response).await;
    assert_eq!(counts["max_token_limit"], 8192);
    assert_eq!(counts["token_counts"][0]["index"], 0);
    assert_eq!(counts["token_counts"][0]["token_count"], 2);
    assert_eq!(counts["token_counts"][0]["char_count"], 11);
    assert_eq!(counts["token_counts"][0]["exceeds_limit"], false);
    assert_eq!(counts["token_counts"][1]["token_count"], 9_000);
    assert_eq!(counts["token_counts"][1]["exceeds_limit"], true);
    assert_eq!(counts["texts_exceeding_limit"], 1);
    assert_eq!(counts["total_tokens"], 9_002);
    assert_error(app.post("/v3/collections/token-count", json!({ "texts": [] })).await, 400).await;

    app.create_collection("docs").await;
    let ack = app.add_items("docs", vec![json!(long), json!("a short note")]).await;
    let items = app.settled_items("docs").await;
    assert_eq!(items[0]["status"], "failed");
    let reason = items[0]["errorMessage"].as_str().unwrap();
    assert!(reason.contains("9000 tokens") && reason.contains("8192"), "{reason}");
    assert_eq!(items[1]["status"], "embedded");
    let event = app.event(ack["eventID"].as_str().unwrap()).await;
    assert_eq!(event["status"], "failed");
    assert_eq!(event["processedCount"], 1);
    assert!(event["errorMessage"].as_str().unwrap().contains("8192"));
}

#[tokio::test]
async fn a_text_longer_than_the_model_window_is_chunked_and_its_end_still_found() {
    let app = spawn_app().await;
    app.create_collection("long").await;
    let mut text = "The committee discussed the annual budget and staffing. ".repeat(80);
    text.push_str("Finally, the zeppelin hangar renovation was approved.");
    app.add_items("long", vec![json!(text), json!("A short unrelated note about lunch.")]).await;
    let items = app.settled_items("long").await;
    assert_eq!(items[0]["status"], "embedded");
    let id = items[0]["collectionItemID"].as_str().unwrap();
    let chunks = app.points(vec![Condition::keyword(fields::ITEM, id)]).await;
    assert!(chunks > 1, "{chunks} points for a text of ~800 tokens");
    for (mode, found) in [("exact", 1), ("semantic", 2)] {
        let results = app
            .search(json!({ "collectionName": "long", "query": "zeppelin hangar renovation", "mode": mode, "limit": 2 }))
            .await;
        assert_eq!(results["results"][0]["collectionItemID"], id, "{mode}: {results}");
        assert_eq!(
            results["results"].as_array().unwrap().len(),
            found,
            "{mode}: each item once, whatever its chunks"
        );
    }
}

#[tokio::test]
async fn items_and_their_vectors_survive_a_restart() {
    let mut app = spawn_app().await;
    app.create_collection("kept").await;
    app.add_items(
        "kept",
        vec![
            json!("The lighthouse keeper lit the lamp at dusk."),
            json!("Stock markets fell sharply on Monday."),
        ],
    )
    .await;
    let before = app.settled_items("kept").await;
    app.restart().await;
    assert_eq!(app.settled_items("kept").await, before);
    assert_eq!(app.points(vec![]).await, 2);
    let results = app
        .search(json!({ "collectionName": "kept", "query": "a coastal beacon at night", "limit": 1 }))
        .await;
    assert_eq!(texts(&results), ["The lighthouse keeper lit the lamp at dusk."]);
    app.add_items("kept", vec![json!("New after the restart.")]).await;
    assert_eq!(app.settled_items("kept").await.len(), 3);
}

#[tokio::test]
async fn items_a_crash_left_mid_embedding_are_embedded_after_restart() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.create_collection("crash").await;
    app.add_items(
        "crash",
        vec![json!("First item caught in the crash."), json!("Second item caught in the crash.")],
    )
    .await;
    // A worker claims the embedding job and dies mid-way: its lease is all that is left.
    let records = app.app().state.records.clone();
    let claimed = records.claim_job("worker-that-died", 500).await.unwrap().expect("the embedding job");
    assert_eq!(claimed.kind, "collections.embed");
    app.stop().await;
    app.config.workers = 2;
    app.start().await;
    let items = app.settled_items("crash").await;
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|item| item["status"] == "embedded"), "{items:?}");
    assert_eq!(app.points(vec![]).await, 2);
}

#[tokio::test]
async fn pending_items_whose_job_gave_up_are_queued_again_at_start() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.create_collection("stranded").await;
    let ack = app.add_items("stranded", vec![json!("Left pending when its job gave up.")]).await;
    let records = app.app().state.records.clone();
    let job = records.claim_job("worker-that-gave-up", 30_000).await.unwrap().expect("the embedding job");
    records.fail_job(&job.id, "worker-that-gave-up", "the vector store was down", None).await.unwrap();
    assert_eq!(records.job_state(&job.id).await.unwrap().unwrap().status, "failed");
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let items = app.settled_items("stranded").await;
    assert_eq!(items[0]["status"], "embedded");
    let event = app.event(ack["eventID"].as_str().unwrap()).await;
    assert_eq!(event["operation"], "add");
    assert_eq!(event["status"], "success");
}

#[tokio::test]
async fn the_collection_endpoints_are_in_the_openapi_document() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    for path in
        ["/v3/collections", "/v3/collections/items", "/v3/collections/token-count", "/v3/collections/search"]
    {
        assert!(doc["paths"][path].is_object(), "{path}");
    }
    let delete =
        doc["paths"]["/v3/collections"]["delete"]["description"].as_str().unwrap_or_default().to_string()
            + doc["paths"]["/v3/collections"]["delete"]["summary"].as_str().unwrap_or_default();
    assert!(delete.contains("subtree"), "{delete}");
    let ready = json(app.get("/readyz").await).await;
    assert_eq!(ready["backends"]["vectors"]["engine"], "qdrant-edge");
    assert_eq!(ready["backends"]["vectors"]["status"], "up");
}

/// A stand-in for a paid OpenAI-compatible endpoint: 64-dimensional bag-of-words vectors
/// (each word hashed to a dimension), so texts sharing words are close.
async fn stub_embeddings_endpoint() -> String {
    use axum::routing::post;
    async fn embeddings(axum::Json(body): axum::Json<Value>) -> axum::Json<Value> {
        let data: Vec<Value> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let mut vector = vec![0.0f32; 64];
                for word in text.as_str().unwrap().to_lowercase().split_whitespace() {
                    let hash = word.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                    vector[(hash % 64) as usize] += 1.0;
                }
                json!({ "object": "embedding", "index": index, "embedding": vector })
            })
            .collect();
        axum::Json(json!({ "object": "list", "data": data, "model": body["model"] }))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = axum::Router::new().route("/v1/embeddings", post(embeddings));
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

#[tokio::test]
async fn an_openai_compatible_endpoint_can_do_the_embedding() {
    let url = stub_embeddings_endpoint().await;
    let app = spawn_app_with(Handlers::default(), |config| {
        config.embeddings_url = Some(url);
        config.embeddings_model = "stub-model".into();
    })
    .await;
    assert_eq!(app.app().state.collections.space().name, "openai-stub-model-64");
    app.create_collection("remote").await;
    app.add_items("remote", vec![json!("green apples and pears"), json!("diesel engine repair manual")])
        .await;
    let items = app.settled_items("remote").await;
    assert!(items.iter().all(|i| i["status"] == "embedded"), "{items:?}");
    let results =
        app.search(json!({ "collectionName": "remote", "query": "engine repair", "limit": 1 })).await;
    assert_eq!(texts(&results), ["diesel engine repair manual"]);
    let counts = json(app.post("/v3/collections/token-count", json!({ "texts": ["abcdefgh"] })).await).await;
    assert_eq!(
        counts["token_counts"][0]["token_count"], 2,
        "estimated at four bytes per token without a tokenizer file"
    );
}

#[tokio::test]
async fn only_the_writes_whose_job_gave_up_are_found_stranded_among_many_queued() {
    // The sweep at start reads the queued jobs' events once, whatever their number.
    let app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.create_collection("many").await;
    let mut events = Vec::new();
    for n in 0..30 {
        let ack = app.add_items("many", vec![json!(format!("Item number {n}."))]).await;
        events.push(ack["eventID"].as_str().unwrap().to_string());
    }
    let records = app.app().state.records.clone();
    let mut stranded = Vec::new();
    for _ in 0..3 {
        let job = records.claim_job("worker-that-gave-up", 30_000).await.unwrap().expect("a job");
        records.fail_job(&job.id, "worker-that-gave-up", "the vector store was down", None).await.unwrap();
        stranded.push(job.payload["eventID"].as_str().unwrap().to_string());
    }
    // One more claimed and running: not stranded.
    records.claim_job("worker-at-work", 30_000).await.unwrap().expect("a job");
    let mut found: Vec<String> =
        records.orphaned_writes("collections.embed").await.unwrap().into_iter().map(|w| w.event_id).collect();
    found.sort();
    stranded.sort();
    assert_eq!(found, stranded);
    assert!(stranded.iter().all(|e| events.contains(e)));
}
