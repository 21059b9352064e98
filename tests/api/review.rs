//! The review queue and reviewer assignments.

use crate::helpers::{assert_error, json, spawn_app, strings};
use reqwest::Method;
use serde_json::{json, Value};

fn ids(page: &Value) -> Vec<String> {
    strings(&page["entities"], "entityID")
}

#[tokio::test]
async fn the_queue_holds_pre_terminal_entities_in_id_order_by_default() {
    let app = spawn_app().await;
    let mut created = Vec::new();
    for name in ["Q1", "Q2", "Q3"] {
        created.push(app.entity(name, "Company").await);
    }
    app.patch(&format!("/v3/entities/{}", created[1]), json!({ "status": "approved" })).await;
    let page = json(app.get("/v3/review-queue").await).await;
    let mut expected = vec![created[0].clone(), created[2].clone()];
    expected.sort();
    assert_eq!(ids(&page), expected);
    assert_eq!(page["hasMore"], false);
    assert!(page.get("nextCursor").is_none());
    let approved = json(app.get("/v3/review-queue?status=approved").await).await;
    assert_eq!(ids(&approved), vec![created[1].clone()]);
    let repeated = json(app.get("/v3/review-queue?status=approved&status=proposed").await).await;
    let comma = json(app.get("/v3/review-queue?status=approved,proposed").await).await;
    assert_eq!(ids(&repeated).len(), 3);
    assert_eq!(ids(&repeated), ids(&comma));
    assert_error(app.get("/v3/review-queue?status=bogus").await, 400).await;
}

#[tokio::test]
async fn first_pages_start_where_the_tenants_entities_begin_and_still_see_every_later_one() {
    let app = spawn_app().await;
    // A first page of a tenant with no entity yet, a quiet time, then entities: a first page
    // (which keeps where they begin) and first pages after more arrive, whatever their status.
    assert!(ids(&json(app.get("/v3/review-queue").await).await).is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let first = app.entity("Early One", "Company").await;
    app.patch(&format!("/v3/entities/{first}"), json!({ "status": "approved" })).await;
    assert!(ids(&json(app.get("/v3/review-queue").await).await).is_empty());
    let mut later = Vec::new();
    for name in ["Later One", "Later Two"] {
        later.push(app.entity(name, "Company").await);
    }
    later.sort();
    assert_eq!(ids(&json(app.get("/v3/review-queue").await).await), later);
    let approved = json(app.get("/v3/review-queue?status=approved").await).await;
    assert_eq!(ids(&approved), vec![first]);
}

#[tokio::test]
async fn the_queue_pages_with_a_cursor_and_bounds_its_limit() {
    let app = spawn_app().await;
    let rows: Vec<Value> =
        (0..7).map(|i| json!({ "canonical": format!("Paged {i}"), "type": "T" })).collect();
    app.seed(json!(rows)).await;
    let mut seen = Vec::new();
    let mut query = "/v3/review-queue?limit=3".to_string();
    loop {
        let page = json(app.get(&query).await).await;
        seen.extend(ids(&page));
        if page["hasMore"] == false {
            assert!(page.get("nextCursor").is_none());
            break;
        }
        query = format!("/v3/review-queue?limit=3&cursor={}", page["nextCursor"].as_str().unwrap());
    }
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!((seen.len(), &seen), (7, &sorted));
    for bad in ["0", "201", "x"] {
        assert_error(app.get(&format!("/v3/review-queue?limit={bad}")).await, 400).await;
    }
    assert_eq!(app.get("/v3/review-queue?limit=200").await.status(), 200);
}

#[tokio::test]
async fn the_type_filter_matches_the_assigned_type_or_else_the_inferred_name() {
    let app = spawn_app().await;
    let by_seed = app.entity("Seeded Drug", "Drug").await; // assigned Drug by the seed
    let moved = app.entity("Moved", "Device").await;
    let drug = json(app.get("/v3/entity-types").await).await["entityTypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Drug")
        .unwrap()["typeID"]
        .as_str()
        .unwrap()
        .to_string();
    app.patch(&format!("/v3/entities/{moved}"), json!({ "assignedTypeID": drug })).await;
    // An entity with no assignment matches by its inferred type name.
    let inferred = app.entity("Inferred", "Drug").await;
    app.patch(&format!("/v3/entities/{inferred}"), json!({ "assignedTypeID": "" })).await;
    let page = json(app.get(&format!("/v3/review-queue?type={drug}")).await).await;
    let mut expected = vec![by_seed, moved, inferred];
    expected.sort();
    assert_eq!(ids(&page), expected);
    let none = json(app.get("/v3/review-queue?type=ety_01NOSUCH00000000000000000").await).await;
    assert!(ids(&none).is_empty());
}

#[tokio::test]
async fn since_and_bucket_filters_and_together() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("Review bucket").await;
    let old = app.entity("Old", "T").await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let cutoff = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let new = app.entity("New", "T").await;
    let body = json(
        app.post(
            "/v3/entities/bulk",
            json!({ "entities": [{ "canonical": "In bucket", "type": "T" }], "bucket": bucket }),
        )
        .await,
    )
    .await;
    let in_bucket = body["results"][0]["entityID"].as_str().unwrap().to_string();
    let since = json(app.get(&format!("/v3/review-queue?since={}", cutoff.replace('+', "%2B"))).await).await;
    let mut expected = vec![new.clone(), in_bucket.clone()];
    expected.sort();
    assert_eq!(ids(&since), expected);
    assert!(!ids(&since).contains(&old));
    let scoped = json(app.get(&format!("/v3/review-queue?since={cutoff}&bucket={bucket}")).await).await;
    assert_eq!(ids(&scoped), vec![in_bucket]);
    assert_error(app.get("/v3/review-queue?since=last-week").await, 400).await;
}

#[tokio::test]
async fn reviewer_endpoints_take_dashboard_tokens_only_and_enforce_roles() {
    let app = spawn_app().await;
    let drug = app.create_type("Drug", None).await;
    let device = app.create_type("Device", None).await;
    let (admin, admin_token) = app.dashboard_token("admin").await;
    let (operator, operator_token) = app.dashboard_token("operator").await;
    let path = format!("/v3/entity-types/{drug}/reviewers");

    assert_error(app.request(Method::GET, &path).send().await.unwrap(), 401).await;
    assert_error(app.as_user(Method::GET, &path, "not-a-token").send().await.unwrap(), 401).await;
    let assign = |token: &str, user: &str| {
        app.as_user(Method::POST, &path, token).json(&json!({ "userID": user })).send()
    };
    assert_error(assign(&operator_token, &operator).await.unwrap(), 403).await;
    let first = json(assign(&admin_token, &operator).await.unwrap()).await;
    assert_eq!(
        (first["userID"].as_str(), first["role"].as_str()),
        (Some(operator.as_str()), Some("operator"))
    );
    let again = json(assign(&admin_token, &operator).await.unwrap()).await;
    assert_eq!(again["assignedAt"], first["assignedAt"], "idempotent");
    assert_error(assign(&admin_token, "usr_01NOSUCH000000000000000000").await.unwrap(), 404).await;

    let listed = json(app.as_user(Method::GET, &path, &operator_token).send().await.unwrap()).await;
    assert!(listed["reviewers"][0]["email"].as_str().unwrap().ends_with("@example.com"));
    assert_eq!(listed["reviewers"].as_array().unwrap().len(), 1);

    let own = format!("/v3/users/{operator}/reviewer-assignments");
    let mine = json(app.as_user(Method::GET, &own, &operator_token).send().await.unwrap()).await;
    assert_eq!(mine["assignments"][0]["typeID"], drug.as_str());
    let admins = format!("/v3/users/{admin}/reviewer-assignments");
    assert_error(app.as_user(Method::GET, &admins, &operator_token).send().await.unwrap(), 403).await;
    assert_eq!(app.as_user(Method::GET, &own, &admin_token).send().await.unwrap().status(), 200);

    // assignedTo: the queue shows the entities of the types a user reviews.
    let drug_entity = json(
        app.post("/v3/entities/bulk", json!({ "entities": [{ "canonical": "Aspirin", "type": "Drug" }] }))
            .await,
    )
    .await;
    let drug_entity = drug_entity["results"][0]["entityID"].as_str().unwrap().to_string();
    app.entity("Stent", "Device").await;
    let queue = json(
        app.as_user(Method::GET, "/v3/review-queue?assignedTo=me", &operator_token).send().await.unwrap(),
    )
    .await;
    assert_eq!(ids(&queue), vec![drug_entity.clone()]);
    let by_id = json(app.get(&format!("/v3/review-queue?assignedTo={operator}")).await).await;
    assert_eq!(ids(&by_id), vec![drug_entity]);
    assert_error(app.get("/v3/review-queue?assignedTo=me").await, 400).await;
    let both = json(app.get(&format!("/v3/review-queue?assignedTo={operator}&type={device}")).await).await;
    assert!(ids(&both).is_empty(), "filters AND together");

    let remove = format!("/v3/entity-types/{drug}/reviewers/{operator}");
    assert_error(app.as_user(Method::DELETE, &remove, &operator_token).send().await.unwrap(), 403).await;
    assert_eq!(app.as_user(Method::DELETE, &remove, &admin_token).send().await.unwrap().status(), 204);
    assert_error(app.as_user(Method::DELETE, &remove, &admin_token).send().await.unwrap(), 404).await;
    let listed = json(app.as_user(Method::GET, &path, &admin_token).send().await.unwrap()).await;
    assert!(listed["reviewers"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_page_skips_a_quiet_time_between_bursts_of_entities_in_a_few_statements() {
    let app = spawn_app().await;
    let early = app.seed(json!([{ "canonical": "Quiet A1", "type": "Company" }, { "canonical": "Quiet A2", "type": "Company" }])).await;
    tokio::time::sleep(std::time::Duration::from_millis(2_000)).await;
    let late = app
        .seed(json!([
            { "canonical": "Quiet B1", "type": "Company" }, { "canonical": "Quiet B2", "type": "Company" },
            { "canonical": "Quiet B3", "type": "Company" },
        ]))
        .await;
    let (mut early, mut late) =
        (strings(&early["results"], "entityID"), strings(&late["results"], "entityID"));
    early.sort();
    late.sort();

    let graph = &app.app().state.graph;
    let before = graph.queries_run();
    let page = json(app.get(&format!("/v3/review-queue?limit=2&cursor={}", early[1])).await).await;
    let used = graph.queries_run() - before;
    assert_eq!(ids(&page), late[..2], "the page after the quiet time starts at its next burst");
    assert_eq!(page["hasMore"], true);
    // Windows doubling from 10 ms would take nine to cross two seconds; the blocks of minted
    // IDs tell where the next burst begins (a window, two probes, the burst's window, the
    // entities' records).
    assert!(used <= 6, "{used} statements for a page across two quiet seconds");
    let rest = json(app.get(&format!("/v3/review-queue?limit=2&cursor={}", late[1])).await).await;
    assert_eq!(ids(&rest), late[2..]);
}

/// The counters are one count per status (each from an index), so under a filter each must
/// still agree with what the queue lists under the same filter.
#[tokio::test]
async fn the_queue_counters_under_a_type_or_bucket_filter_agree_with_the_queue() {
    let app = spawn_app().await;
    let person = app.create_type("Person", None).await;
    let ada = app.entity("Ada Lovelace", "Person").await;
    app.entity("Grace Hopper", "Person").await;
    app.entity("Acme Anvils", "Company").await;
    let other = app.create_bucket("archive").await;
    let seeded = app
        .post(
            "/v3/entities/bulk",
            json!({ "entities": [{ "canonical": "Globex", "type": "Company" }], "bucket": other }),
        )
        .await;
    assert_eq!(seeded.status(), 200);
    assert_eq!(
        app.patch(&format!("/v3/entities/{ada}"), json!({ "status": "approved" })).await.status(),
        200
    );

    let people = json(app.get(&format!("/v3/review-queue/counts?type={person}")).await).await;
    assert_eq!((people["left"].as_i64(), people["doneToday"].as_i64()), (Some(1), Some(1)), "{people}");
    assert_eq!(
        (people["byStatus"]["approved"].as_i64(), people["byStatus"]["proposed"].as_i64()),
        (Some(1), Some(1))
    );
    let listed = json(app.get(&format!("/v3/review-queue?type={person}")).await).await;
    assert_eq!(ids(&listed).len() as i64, people["left"].as_i64().unwrap(), "{listed}");

    let archived = json(app.get(&format!("/v3/review-queue/counts?bucket={other}")).await).await;
    assert_eq!((archived["left"].as_i64(), archived["doneToday"].as_i64()), (Some(1), Some(0)), "{archived}");
    let everything = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(
        (everything["left"].as_i64(), everything["doneToday"].as_i64()),
        (Some(3), Some(1)),
        "{everything}"
    );
    let later = json(app.get("/v3/review-queue/counts?since=2999-01-01T00:00:00Z").await).await;
    assert_eq!(
        (later["left"].as_i64(), later["byStatus"]["approved"].as_i64()),
        (Some(0), Some(0)),
        "{later}"
    );
}

/// Counting a big tenant takes the engine a while, and every dashboard page asks for the
/// counters: asked again with nothing changed, they are served without a statement; after a
/// decision they are counted anew.
#[tokio::test]
async fn the_queue_counters_are_not_counted_again_until_the_tenants_graph_changes() {
    let app = spawn_app().await;
    let ada = app.entity("Ada Lovelace", "Person").await;
    app.entity("Grace Hopper", "Person").await;
    let graph = &app.app().state.graph;
    let counted = |counts: &Value| (counts["left"].as_i64(), counts["doneToday"].as_i64());

    let first = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(counted(&first), (Some(2), Some(0)), "{first}");
    let before = graph.queries_run();
    let again = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(again, first);
    assert_eq!(graph.queries_run(), before, "the same counters were counted again");
    let filtered = json(app.get("/v3/review-queue/counts?since=2999-01-01T00:00:00Z").await).await;
    assert_eq!(counted(&filtered), (Some(0), Some(0)), "another filter is its own count: {filtered}");

    let approved = app.patch(&format!("/v3/entities/{ada}"), json!({ "status": "approved" })).await;
    assert_eq!(approved.status(), 200);
    let after = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(counted(&after), (Some(1), Some(1)), "{after}");
    assert_eq!(after["byStatus"]["approved"], 1);

    // A seed is a write too.
    app.entity("Alan Turing", "Person").await;
    let seeded = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(counted(&seeded), (Some(2), Some(1)), "{seeded}");
}

/// A page reads a bounded part of the tenant (here one window on FalkorDB, 3 entities on
/// Neo4j): where the filter matches little, it ends short, saying more may follow, and its
/// cursor goes on from where it stopped, so the pages together still list every match once,
/// in order; a filter that matches nothing ends too.
#[tokio::test]
async fn a_page_ends_short_at_its_scan_bound_and_the_cursors_still_list_every_match_once() {
    let app = crate::helpers::spawn_app_with(canon::jobs::Handlers::default(), |config| {
        config.page_scan = canon::graph::window::PageScan { time: std::time::Duration::ZERO, rows: 3 };
    })
    .await;
    // Three bursts of ten entities, apart in time (FalkorDB's first window holds one burst).
    let mut all = Vec::new();
    for burst in 0..3 {
        let rows: Vec<Value> =
            (0..10).map(|i| json!({ "canonical": format!("Scan {burst}-{i}"), "type": "T" })).collect();
        all.extend(strings(&app.seed(json!(rows)).await["results"], "entityID"));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    all.sort();
    let approved: Vec<String> = [3, 11, 19, 24, 28].iter().map(|&i| all[i].clone()).collect();
    for id in &approved {
        app.patch(&format!("/v3/entities/{id}"), json!({ "status": "approved" })).await;
    }
    let walk = |status: &'static str| {
        let app = &app;
        async move {
            let (mut seen, mut short, mut pages) = (Vec::new(), 0, 0);
            let mut query = format!("/v3/review-queue?status={status}&limit=2");
            loop {
                pages += 1;
                assert!(pages <= 40, "the pages of {status} end");
                let page = json(app.get(&query).await).await;
                let got = ids(&page);
                assert!(got.len() <= 2, "{page}");
                let Some(cursor) = page["nextCursor"].as_str() else {
                    assert_eq!(page["hasMore"], false, "{page}");
                    seen.extend(got);
                    return (seen, short);
                };
                assert_eq!(page["hasMore"], true, "{page}");
                short += usize::from(got.len() < 2);
                seen.extend(got);
                query = format!("/v3/review-queue?status={status}&limit=2&cursor={cursor}");
            }
        }
    };
    let (seen, short) = walk("approved").await;
    assert_eq!(seen, approved, "every match once, in order");
    assert!(short >= 1, "a page ended short at its scan bound and said more may follow");
    let (none, _) = walk("rejected").await;
    assert!(none.is_empty());
    // GraphQL's Relay connection, whose cursor can only be an entity's: it reads on past
    // pages that ended short with none, and its endCursors still list every match once.
    let connection =
        "query($after: String) { entities(first: 2, after: $after, filter: {status: [\"approved\"]}) { \
        pageInfo { hasNextPage endCursor } edges { node { entityID } } } }";
    let (mut relay, mut after) = (Vec::new(), Value::Null);
    for _ in 0..10 {
        let body =
            json(app.post("/graphql", json!({ "query": connection, "variables": { "after": after } })).await)
                .await;
        let page = &body["data"]["entities"];
        relay.extend(page["edges"].as_array().expect("edges").iter().map(|e| e["node"]["entityID"].clone()));
        if page["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = page["pageInfo"]["endCursor"].clone();
        assert!(after.is_string(), "a page with more after it has an endCursor: {body}");
    }
    assert_eq!(relay, approved.iter().map(|id| json!(id)).collect::<Vec<_>>());
    // A filter matching nothing: past its bounded reads the connection answers an error whose
    // details say where to read on (on Neo4j, 8 reads of 3 entities do not reach the 30th),
    // and reading on from there ends.
    let none =
        "query($after: String) { entities(first: 2, after: $after, filter: {status: [\"rejected\"]}) { \
        pageInfo { hasNextPage endCursor } edges { node { entityID } } } }";
    let mut after = Value::Null;
    for round in 0.. {
        assert!(round < 20, "the reads end");
        let body =
            json(app.post("/graphql", json!({ "query": none, "variables": { "after": after } })).await).await;
        if let Some(error) = body["errors"].get(0) {
            assert_eq!(error["extensions"]["code"], 422, "{body}");
            after = error["extensions"]["details"]["after"].clone();
            assert!(after.is_string(), "{body}");
            continue;
        }
        let page = &body["data"]["entities"];
        assert_eq!(page["edges"], json!([]), "{body}");
        if page["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = page["pageInfo"]["endCursor"].clone();
    }
    // The counters are not paged: they count every entity.
    let counts = json(app.get("/v3/review-queue/counts").await).await;
    assert_eq!(counts["byStatus"]["approved"], 5, "{counts}");
}
