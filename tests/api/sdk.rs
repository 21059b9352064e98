//! The official Python SDK works against canon unchanged (installed by `make provision`).

use crate::helpers::{source_dir, spawn_app, vendor_dir};
use std::process::Command;

#[tokio::test]
async fn the_python_sdk_works_unchanged() {
    run_script("buckets_and_entity_types.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_collections() {
    run_script("collections.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_calls() {
    run_script("calls.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_functions_and_workflows() {
    run_script("functions_workflows.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_subscriptions() {
    run_script("subscriptions.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_accuracy() {
    run_script("accuracy.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_views() {
    run_script("views.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_fs_copies_and_connectors() {
    run_script("fs_copies_connectors.py").await;
}

#[tokio::test]
async fn the_python_sdk_works_unchanged_on_entities_and_the_graph() {
    run_script("entities_graph.py").await;
}

#[tokio::test]
async fn the_python_sdk_does_not_retry_a_conflict() {
    run_script("retries.py").await;
}

async fn run_script(script: &'static str) {
    let script = source_dir().join("tests/sdk").join(script);
    let app = spawn_app().await;
    let env = [("BEM_BASE_URL", app.address.clone()), ("BEM_API_KEY", app.api_key.clone())];
    run_python(script, "python", env, "bem-sdk").await;
}

/// Runs a Python check script with the client provisioned in `vendor/<vendor_folder>`; it
/// must exit 0 and print "<label>: all checks passed".
pub async fn run_python<const N: usize>(
    script: std::path::PathBuf,
    vendor_folder: &'static str,
    env: [(&'static str, String); N],
    label: &'static str,
) {
    let output = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .env("PYTHONPATH", vendor_dir().join(vendor_folder))
            .envs(env)
            .output()
            .expect("python3 runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{label} checks failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{label}: all checks passed")), "{stdout}");
}
