//! Persistence: canon stops, starts again on the same data, and everything is there.

use crate::helpers::{json, spawn_app};

#[tokio::test]
async fn buckets_and_entity_types_survive_a_restart() {
    let mut app = spawn_app().await;
    let bucket = app.create_bucket("Kept").await;
    let parent = app.create_type("Kept parent", None).await;
    let child = app.create_type("Kept child", Some(&parent)).await;
    let before = json(app.get("/v3/buckets").await).await;
    app.restart().await;
    assert_eq!(json(app.get("/v3/buckets").await).await, before);
    assert_eq!(json(app.get(&format!("/v3/buckets/{bucket}")).await).await["name"], "Kept");
    let child = json(app.get(&format!("/v3/entity-types/{child}")).await).await;
    assert_eq!(child["parentTypeID"], parent.as_str());
    assert_eq!(
        app.post("/v3/buckets", serde_json::json!({ "name": "Kept" })).await.status(),
        409,
        "constraints too"
    );
}
