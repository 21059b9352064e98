//! #43's audit, blind labels and safe bulk decisions over real HTTP: each entity's timeline
//! (who did what, when, newest first), decisions taken blind recorded as blind, and bulk
//! decisions over "all matching this filter" that change exactly what was counted; with the
//! dashboard pages driving the same calls in Chromium.

use crate::helpers::{assert_error, browser_script, json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use reqwest::Method;
use serde_json::{json, Value};

/// Every item of an entity's timeline, following `nextCursor` pages of `limit`.
async fn timeline(app: &TestApp, id: &str, limit: usize) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(c) => format!("?limit={limit}&cursor={c}"),
            None => format!("?limit={limit}"),
        };
        let response = app.get(&format!("/v3/entities/{id}/timeline{query}")).await;
        assert_eq!(response.status(), 200);
        let page = json(response).await;
        let got = page["items"].as_array().unwrap();
        assert!(got.len() <= limit, "{page}");
        items.extend(got.iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => {
                assert_eq!(page["hasMore"], false, "{page}");
                return items;
            }
        }
    }
}

fn kinds_and_actors(items: &[Value]) -> Vec<(String, String)> {
    items.iter().map(|i| (i["kind"].as_str().unwrap().into(), i["actor"].as_str().unwrap().into())).collect()
}

/// The one open suggestion's ID (two similar names, refreshed).
async fn suggestion_between(app: &TestApp) -> String {
    let refreshed = json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await;
    assert_eq!(refreshed["suggested"], 1, "{refreshed}");
    let page = json(app.get("/v3/merge-suggestions").await).await;
    page["suggestions"][0]["suggestionID"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn an_entitys_timeline_lists_each_curation_step_newest_first_with_who_did_it() {
    let app = spawn_app().await;
    let software = app.entity("Initech Software", "Company").await;
    let group = app.entity("Initech Software Group", "Company").await;
    let globex = app.entity("Globex Corporation", "Company").await;
    let (user, token) = app.dashboard_token("operator").await;
    let as_reviewer = |method: Method, path: &str| app.as_user(method, path, &token);

    // The suggestion first (a decided pair is never suggested again), dismissed by the key, blind.
    let suggestion = suggestion_between(&app).await;
    let dismissed =
        json(app.post(&format!("/v3/merge-suggestions/{suggestion}/dismiss?blind=true"), json!({})).await)
            .await;
    assert_eq!((dismissed["status"].as_str(), dismissed["blind"].as_bool()), (Some("dismissed"), Some(true)));
    let key = dismissed["decidedBy"].as_str().unwrap().to_string();
    assert!(key.starts_with("key_"), "{dismissed}");
    // Validated by the reviewer.
    let validated = as_reviewer(Method::PATCH, &format!("/v3/entities/{software}"))
        .json(&json!({ "status": "approved" }))
        .send()
        .await
        .unwrap();
    assert_eq!(validated.status(), 200);
    // A synonym added by the key, removed by the reviewer.
    let synonym =
        json(app.post(&format!("/v3/entities/{software}/synonyms"), json!({ "text": "ISW" })).await).await;
    let synonym_id = synonym["synonymID"].as_str().unwrap();
    let removed = as_reviewer(Method::DELETE, &format!("/v3/entities/{software}/synonyms/{synonym_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 204);
    // Globex merged in by the key, the merge undone by the reviewer.
    let merged =
        json(app.post(&format!("/v3/entities/{software}/merge"), json!({ "entityIDs": [globex] })).await)
            .await;
    let merge_id = merged["merges"][0]["mergeID"].as_str().unwrap().to_string();
    assert_eq!(merged["merges"][0]["mergedBy"], key.as_str());
    let undone = as_reviewer(Method::POST, &format!("/v3/merges/{merge_id}/undo")).send().await.unwrap();
    assert_eq!(undone.status(), 200);

    let items = timeline(&app, &software, 50).await;
    let expected: Vec<(String, String)> = [
        ("unmerged", &user),
        ("merged", &key),
        ("synonym_removed", &user),
        ("synonym_added", &key),
        ("status_changed", &user),
        ("suggestion_dismissed", &key),
    ]
    .iter()
    .map(|(kind, actor)| (kind.to_string(), actor.to_string()))
    .collect();
    assert_eq!(kinds_and_actors(&items), expected, "{items:#?}");
    let times: Vec<&str> = items.iter().map(|i| i["at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
    assert_eq!(items[0]["details"]["mergeID"], merge_id.as_str());
    assert_eq!(items[0]["details"]["mergedID"], globex.as_str());
    assert_eq!(
        (items[2]["details"]["text"].as_str(), items[3]["details"]["text"].as_str()),
        (Some("ISW"), Some("ISW"))
    );
    assert_eq!(items[4]["details"], json!({ "from": "proposed", "to": "approved", "reason": null }));
    assert_eq!(items[5]["details"]["otherEntityID"], group.as_str());
    assert_eq!(items[5]["details"]["blind"], true);

    // Pages of two give the same items in the same order.
    assert_eq!(timeline(&app, &software, 2).await, items);
    // The other side of each pair sees its part.
    let group_items = timeline(&app, &group, 50).await;
    assert_eq!(kinds_and_actors(&group_items), vec![("suggestion_dismissed".to_string(), key.clone())]);
    assert_eq!(group_items[0]["details"]["otherEntityID"], software.as_str());
    let globex_kinds: Vec<String> =
        timeline(&app, &globex, 50).await.iter().map(|i| i["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(globex_kinds, ["unmerged", "merged"]);

    assert_error(app.get(&format!("/v3/entities/{software}/timeline?cursor=nonsense")).await, 400).await;
    assert_error(app.get(&format!("/v3/entities/{software}/timeline?limit=0")).await, 400).await;
    assert_error(app.get("/v3/entities/ent_01NOSUCH00000000000000000/timeline").await, 404).await;
}

#[tokio::test]
async fn a_survivor_of_many_merges_pages_its_history_and_timeline_the_same_as_one_read() {
    // Each read of an entity's merges reads one page of them (the newest, or those a timeline
    // page may show), not every merge it ever took part in.
    let app = spawn_app().await;
    let survivor = app.entity("Survivor Corp", "Company").await;
    let mut merge_ids = Vec::new();
    for n in 0..6 {
        let other = app.entity(&format!("Absorbed {n}"), "Company").await;
        let merged =
            json(app.post(&format!("/v3/entities/{survivor}/merge"), json!({ "entityIDs": [other] })).await)
                .await;
        merge_ids.push(merged["merges"][0]["mergeID"].as_str().unwrap().to_string());
    }
    // The oldest merge undone last: its undoing is the newest step, its merge the oldest.
    assert_eq!(app.post(&format!("/v3/merges/{}/undo", merge_ids[0]), json!({})).await.status(), 200);

    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = cursor.as_ref().map_or("?limit=4".to_string(), |c| format!("?limit=4&cursor={c}"));
        let page = json(app.get(&format!("/v3/entities/{survivor}/merges{query}")).await).await;
        let merges = page["merges"].as_array().unwrap();
        assert!(merges.len() <= 4, "{page}");
        paged.extend(merges.iter().map(|m| m["mergeID"].as_str().unwrap().to_string()));
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let newest_first: Vec<String> = merge_ids.iter().rev().cloned().collect();
    assert_eq!(paged, newest_first);
    let whole = json(app.get(&format!("/v3/entities/{survivor}/merges")).await).await;
    assert_eq!(whole["merges"].as_array().unwrap().len(), 6, "the default page holds them all");
    assert!(whole["merges"][5]["undoneAt"].is_string(), "{whole}");
    let refused = app.get(&format!("/v3/entities/{survivor}/merges?cursor=ent_nope")).await;
    assert_eq!(assert_error(refused, 400).await["details"]["field"], "cursor");

    let in_pages = timeline(&app, &survivor, 2).await;
    let at_once = timeline(&app, &survivor, 200).await;
    assert_eq!(in_pages, at_once);
    let kinds: Vec<&str> = at_once.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "merged").count(), 6, "{kinds:?}");
    assert_eq!((kinds[0], kinds.last().copied()), ("unmerged", Some("merged")), "{kinds:?}");
    // GraphQL's batched read shows the same history.
    let query = format!("{{ entity(id: \"{survivor}\") {{ merges {{ mergeID }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    let ids: Vec<&str> = body["data"]["entity"]["merges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mergeID"].as_str().unwrap())
        .collect();
    assert_eq!(ids, newest_first.iter().map(String::as_str).collect::<Vec<_>>(), "{body}");
}

#[tokio::test]
async fn a_decision_taken_blind_is_recorded_as_blind_and_one_taken_seeing_the_scores_is_not() {
    let app = spawn_app().await;
    let software = app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    let id = suggestion_between(&app).await;
    let open = json(app.get("/v3/merge-suggestions").await).await;
    assert_eq!(open["suggestions"][0]["blind"], false, "{open}");

    assert_eq!(
        app.post(&format!("/v3/merge-suggestions/{id}/accept?blind=true"), json!({})).await.status(),
        200
    );
    let accepted = &timeline(&app, &software, 50).await[0];
    assert_eq!(
        (accepted["kind"].as_str(), accepted["details"]["blind"].as_bool()),
        (Some("suggestion_accepted"), Some(true))
    );

    // Undone: open again, no longer blind; then dismissed seeing the scores.
    let reopened = json(app.post(&format!("/v3/merge-suggestions/{id}/reopen"), json!({})).await).await;
    assert_eq!((reopened["status"].as_str(), reopened["blind"].as_bool()), (Some("open"), Some(false)));
    let dismissed = json(app.post(&format!("/v3/merge-suggestions/{id}/dismiss"), json!({})).await).await;
    assert_eq!(
        (dismissed["status"].as_str(), dismissed["blind"].as_bool()),
        (Some("dismissed"), Some(false))
    );
    let items = timeline(&app, &software, 50).await;
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[..3], ["suggestion_dismissed", "suggestion_reopened", "unmerged"], "{items:#?}");
    assert_eq!(items[0]["details"]["blind"], false);
    assert_error(app.post(&format!("/v3/merge-suggestions/{id}/dismiss?blind=maybe"), json!({})).await, 400)
        .await;
}

/// Seeds `names` as Companies into `bucket`; their IDs.
async fn seed_into(app: &TestApp, bucket: &str, names: &[&str]) -> Vec<String> {
    let rows: Vec<Value> = names.iter().map(|n| json!({ "canonical": n, "type": "Company" })).collect();
    let seeded =
        json(app.post("/v3/entities/bulk", json!({ "entities": rows, "bucket": bucket })).await).await;
    seeded["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entityID"].as_str().unwrap().to_string())
        .collect()
}

async fn status_of(app: &TestApp, id: &str) -> String {
    json(app.get(&format!("/v3/entities/{id}")).await).await["status"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_filter_sent_as_an_array_is_a_400_not_a_filter_that_matches_everything() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("north").await;
    seed_into(&app, &bucket, &["Acme Anvils", "Globex Corporation"]).await;
    // serde read a nested struct from an array by position: this was the empty filter.
    let body = json!({ "status": "approved", "filter": [[], [], null, null, null], "dryRun": true });
    let refused = assert_error(app.post("/v3/review-queue/bulk-validate", body).await, 400).await;
    assert!(refused["message"].as_str().unwrap().starts_with("filter: invalid type: sequence"), "{refused}");
    let counted = json!({ "status": "approved", "filter": { "bucket": bucket }, "dryRun": true });
    assert_eq!(json(app.post("/v3/review-queue/bulk-validate", counted).await).await["matching"], 2);
}

#[tokio::test]
async fn a_bulk_validate_of_all_matching_a_filter_changes_exactly_the_counted_entities() {
    let app = spawn_app().await;
    let north = app.create_bucket("north").await;
    let south = app.create_bucket("south").await;
    let counted = seed_into(&app, &north, &["Acme Anvils", "Globex Corporation", "Initech"]).await;
    let elsewhere = seed_into(&app, &south, &["Umbrella", "Hooli"]).await;
    let already = seed_into(&app, &north, &["Soylent"]).await;
    assert_eq!(
        app.patch(&format!("/v3/entities/{}", already[0]), json!({ "status": "rejected" })).await.status(),
        200
    );
    let path = "/v3/review-queue/bulk-validate";
    let filter = json!({ "bucket": north });

    let count =
        json(app.post(path, json!({ "status": "approved", "filter": filter, "dryRun": true })).await).await;
    assert_eq!((count["matching"].as_u64(), count["applied"].as_bool()), (Some(3), Some(false)), "{count}");
    assert_eq!(count["limit"], 10_000);
    let selection = count["selection"].as_str().unwrap().to_string();
    for id in &counted {
        assert_eq!(status_of(&app, id).await, "proposed", "a dry run changes nothing");
    }
    let unasked =
        assert_error(app.post(path, json!({ "status": "approved", "filter": filter })).await, 400).await;
    assert!(unasked["message"].as_str().unwrap().contains("count first"), "{unasked}");

    // One more entity matches after the count: refused, nothing changed.
    let late = seed_into(&app, &north, &["Vandelay Industries"]).await;
    let changed = assert_error(
        app.post(path, json!({ "status": "approved", "filter": filter, "selection": selection })).await,
        409,
    )
    .await;
    assert!(changed["message"].as_str().unwrap().contains("matches 4 now"), "{changed}");
    assert_eq!(status_of(&app, &counted[0]).await, "proposed");
    assert_eq!(
        app.patch(&format!("/v3/entities/{}", late[0]), json!({ "status": "rejected" })).await.status(),
        200
    );

    // The set is the counted one again: exactly those three change.
    let done =
        json(app.post(path, json!({ "status": "approved", "filter": filter, "selection": selection })).await)
            .await;
    assert_eq!((done["applied"].as_bool(), done["matching"].as_u64()), (Some(true), Some(3)), "{done}");
    assert_eq!(done["summary"], json!({ "validated": 3, "skipped": 0, "rejectedRow": 0 }));
    for id in &counted {
        assert_eq!(status_of(&app, id).await, "approved", "{id}");
        assert_eq!(timeline(&app, id, 50).await[0]["kind"], "status_changed");
    }
    for id in &elsewhere {
        assert_eq!(status_of(&app, id).await, "proposed", "{id} is outside the filter");
    }
    assert_eq!(status_of(&app, &already[0]).await, "rejected");
    let after =
        json(app.post(path, json!({ "status": "approved", "filter": filter, "dryRun": true })).await).await;
    assert_eq!(after["matching"], 0, "{after}");
    assert_error(app.post(path, json!({ "status": "merged", "filter": filter, "dryRun": true })).await, 400)
        .await;
}

#[tokio::test]
async fn a_bulk_decision_over_more_than_the_limit_is_refused_naming_the_limit_and_changes_nothing() {
    // The limit lowered from 10,000 to 3 (a test-only setting) to reach it.
    let app = spawn_app_with(Handlers::default(), |config| config.bulk_limit = 3).await;
    let bucket = app.create_bucket("many").await;
    let ids = seed_into(&app, &bucket, &["Acme Anvils", "Globex Corporation", "Initech", "Umbrella"]).await;
    let filter = json!({ "bucket": bucket });
    let path = "/v3/review-queue/bulk-validate";
    let refused = assert_error(
        app.post(path, json!({ "status": "approved", "filter": filter, "dryRun": true })).await,
        422,
    )
    .await;
    assert!(refused["message"].as_str().unwrap().contains("at most 3"), "{refused}");
    assert_eq!(refused["details"]["limit"], 3, "{refused}");
    assert_error(
        app.post(path, json!({ "status": "approved", "filter": filter, "selection": "sel_x" })).await,
        422,
    )
    .await;
    for id in &ids {
        assert_eq!(status_of(&app, id).await, "proposed", "{id}");
    }
    // Three match once one is decided: counted and changed.
    assert_eq!(
        app.patch(&format!("/v3/entities/{}", ids[3]), json!({ "status": "rejected" })).await.status(),
        200
    );
    let count =
        json(app.post(path, json!({ "status": "approved", "filter": filter, "dryRun": true })).await).await;
    assert_eq!((count["matching"].as_u64(), count["limit"].as_u64()), (Some(3), Some(3)), "{count}");
}

#[tokio::test]
async fn a_bulk_dismiss_of_all_open_suggestions_dismisses_exactly_the_counted_ones() {
    let app = spawn_app().await;
    let software = app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    app.entity("Globex Corporation", "Company").await;
    app.entity("Globex Corporation Group", "Company").await;
    let refreshed = json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await;
    let open = json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().len();
    assert!(open >= 2, "{refreshed}");
    let path = "/v3/merge-suggestions/bulk-dismiss";
    let count = json(app.post(path, json!({ "dryRun": true })).await).await;
    assert_eq!(count["matching"].as_u64(), Some(open as u64), "the count agrees with the list: {count}");
    let (_, token) = app.dashboard_token("operator").await;
    let done = app
        .as_user(Method::POST, path, &token)
        .json(&json!({ "selection": count["selection"], "blind": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);
    let done = json(done).await;
    assert_eq!(
        (done["dismissed"].as_u64(), done["applied"].as_bool()),
        (Some(open as u64), Some(true)),
        "{done}"
    );
    assert!(json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().is_empty());
    let last = &timeline(&app, &software, 50).await[0];
    assert_eq!(
        (last["kind"].as_str(), last["details"]["blind"].as_bool()),
        (Some("suggestion_dismissed"), Some(true))
    );
    assert!(last["actor"].as_str().unwrap().starts_with("usr_"), "{last}");
    // The counted set is gone: its selection no longer names what matches.
    assert_error(app.post(path, json!({ "selection": count["selection"] })).await, 409).await;
}

/// Runs `tests/browser/review_audit.mjs` in `mode`; None (and a SKIPPED line) without a browser.
async fn in_browser(app: &TestApp, credential: &str, mode: &str, arg: &str) -> Option<Value> {
    browser_script("review_audit.mjs", &[&app.address, credential, mode, arg]).await
}

#[tokio::test]
async fn in_a_browser_the_entity_page_shows_its_history_as_text_and_a_blind_dismissal_is_labelled() {
    let app = spawn_app().await;
    let hostile = "<img src=x onerror=alert(1)>";
    let software = app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    suggestion_between(&app).await;
    // `d` in blind mode, as a reviewer.
    let (user, token) = app.dashboard_token("operator").await;
    let Some(blind) = in_browser(&app, &token, "blind", "").await else { return };
    assert_eq!(blind["scoreShown"], false, "{blind}");
    let dismissed = &timeline(&app, &software, 50).await[0];
    assert_eq!(
        (dismissed["kind"].as_str(), dismissed["actor"].as_str()),
        (Some("suggestion_dismissed"), Some(user.as_str()))
    );
    assert_eq!(dismissed["details"]["blind"], true, "recorded as blind: {dismissed}");
    // Then a hostile synonym added and validated with the key.
    assert_eq!(
        app.post(&format!("/v3/entities/{software}/synonyms"), json!({ "text": hostile })).await.status(),
        200
    );
    assert_eq!(
        app.patch(&format!("/v3/entities/{software}"), json!({ "status": "approved" })).await.status(),
        200
    );

    let seen = in_browser(&app, &app.api_key, "timeline", &software).await.unwrap();
    let entries = seen["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["status_changed", "synonym_added", "suggestion_dismissed"], "{seen}");
    assert!(entries[1]["text"].as_str().unwrap().contains(hostile), "shown as text: {seen}");
    assert!(entries[2]["text"].as_str().unwrap().contains("decided blind"), "{seen}");
    assert_eq!(entries[2]["actor"], user.as_str());
    assert!(entries[0]["text"].as_str().unwrap().contains("proposed → approved"), "{seen}");
    assert_eq!(seen["dialogs"], 0, "no dialog opened: {seen}");
}

#[tokio::test]
async fn in_a_browser_validate_all_matching_asks_once_with_the_servers_count_and_changes_exactly_those() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("bulk").await;
    // More than one page of the queue (50 rows) matches.
    let names: Vec<String> = (0..60).map(|i| format!("Bulk Company {i:02}")).collect();
    let counted = seed_into(&app, &bucket, &names.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert_eq!(counted.len(), 60);
    let outside = app.entity("Outside Corporation", "Company").await;
    let Some(seen) = in_browser(&app, &app.api_key, "bulk", &bucket).await else { return };
    assert_eq!(seen["rowsBefore"], 50, "the page held one page of rows: {seen}");
    assert!(seen["question"].as_str().unwrap().contains("validate 60 entities"), "{seen}");
    assert!(seen["status"].as_str().unwrap().starts_with("60 of 60 changed"), "{seen}");
    for id in &counted {
        assert_eq!(status_of(&app, id).await, "approved", "{id}");
    }
    assert_eq!(status_of(&app, &outside).await, "proposed");
}

/// A bulk decision over a filter counts every match even where each page of its walk ends
/// short at the page scan bound (one window on FalkorDB, 3 entities on Neo4j): it follows
/// the pages to the end.
#[tokio::test]
async fn a_bulk_validate_counts_every_match_across_pages_its_scan_bound_ends_short() {
    let app = crate::helpers::spawn_app_with(canon::jobs::Handlers::default(), |config| {
        config.page_scan = canon::graph::window::PageScan { time: std::time::Duration::ZERO, rows: 3 };
    })
    .await;
    let north = app.create_bucket("north").await;
    let south = app.create_bucket("south").await;
    let names = |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix} {i}")).collect::<Vec<_>>();
    let mut counted = Vec::new();
    for (bucket, batch) in
        [(&south, names("South", 12)), (&north, names("North", 4)), (&south, names("Far", 9))]
    {
        let batch: Vec<&str> = batch.iter().map(String::as_str).collect();
        let ids = seed_into(&app, bucket, &batch).await;
        if bucket == &north {
            counted = ids;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    counted.extend(seed_into(&app, &north, &["North last"]).await);
    let path = "/v3/review-queue/bulk-validate";
    let filter = json!({ "bucket": north });
    let count =
        json(app.post(path, json!({ "status": "approved", "filter": filter, "dryRun": true })).await).await;
    assert_eq!(count["matching"], 5, "{count}");
    let selection = count["selection"].as_str().unwrap();
    let body = json!({ "status": "approved", "filter": filter, "selection": selection });
    let applied = json(app.post(path, body).await).await;
    assert_eq!(applied["applied"], true, "{applied}");
    for id in &counted {
        assert_eq!(status_of(&app, id).await, "approved");
    }
}
