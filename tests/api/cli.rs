//! The `canon` binary: keys, configuration, provisioning checks, signals.

use crate::helpers::{assert_error, cli_key, json, serve_process, spawn_app, TestApp};
use std::process::Command;
use std::time::{Duration, Instant};

fn canon(app: &TestApp) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_canon"));
    command.env("CANON_DATA_DIR", &app.config.data_dir).env_remove("CANON_DATABASE_URL");
    if let Some(url) = &app.config.database_url {
        command.env("CANON_DATABASE_URL", url);
    }
    command
}

fn stdout_of(command: &mut Command) -> String {
    let output = command.output().expect("canon runs");
    assert!(output.status.success(), "canon failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test]
async fn keys_create_prints_one_key_that_works_at_once_while_canon_serves() {
    let app = spawn_app().await;
    let account = crate::helpers::unique("cli-co");
    let out = stdout_of(canon(&app).args([
        "keys",
        "create",
        "--account",
        &account,
        "--environment",
        "production",
        "--name",
        "ci",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "the key alone on one line: {out:?}");
    let key = lines[0];
    let response =
        app.client.get(format!("{}/v3/buckets", app.address)).header("x-api-key", key).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(json(response).await["totalCount"], 1);
}

#[tokio::test]
async fn keys_list_never_shows_secrets_and_revoke_stops_a_key() {
    let app = spawn_app().await;
    let account = crate::helpers::unique("cli-co");
    let key =
        stdout_of(canon(&app).args(["keys", "create", "--account", &account, "--environment", "sandbox"]));
    let key = key.trim();
    let listed = stdout_of(canon(&app).args(["keys", "list", "--account", &account]));
    let key_id = listed.split_whitespace().next().expect("a key line").to_string();
    assert!(key_id.starts_with("key_"), "{listed}");
    let secret = key.rsplit('_').next().unwrap();
    assert!(!listed.contains(secret), "list shows no secret: {listed}");
    assert!(listed.contains("active"));
    stdout_of(canon(&app).args(["keys", "revoke", &key_id]));
    let response =
        app.client.get(format!("{}/v3/buckets", app.address)).header("x-api-key", key).send().await.unwrap();
    assert_error(response, 401).await;
    assert!(stdout_of(canon(&app).args(["keys", "list", "--account", &account])).contains("revoked"));
    let again = canon(&app).args(["keys", "revoke", &key_id]).output().unwrap();
    assert!(!again.status.success(), "revoking twice says so");
}

#[tokio::test]
async fn a_key_the_server_just_trusted_is_refused_within_the_second_the_revoke_command_states() {
    let app = spawn_app().await;
    let account = crate::helpers::unique("cli-co");
    let key =
        stdout_of(canon(&app).args(["keys", "create", "--account", &account, "--environment", "sandbox"]));
    let key = key.trim().to_string();
    let buckets = || app.client.get(format!("{}/v3/buckets", app.address)).header("x-api-key", &key).send();
    assert_eq!(buckets().await.unwrap().status(), 200, "the server now trusts the key");
    let listed = stdout_of(canon(&app).args(["keys", "list", "--account", &account]));
    let key_id = listed.split_whitespace().next().expect("a key line").to_string();
    let help = stdout_of(canon(&app).args(["keys", "revoke", "--help"]));
    assert!(help.contains("within 1 second"), "the help states the bound: {help}");
    let said = stdout_of(canon(&app).args(["keys", "revoke", &key_id]));
    let revoked = tokio::time::Instant::now();
    assert!(said.contains("within 1 s"), "{said}");
    tokio::time::sleep_until(revoked + canon::keys::TRUST_FOR).await;
    assert_error(buckets().await.unwrap(), 401).await;
}

#[tokio::test]
async fn users_create_prints_a_dashboard_token_the_running_server_accepts() {
    let app = spawn_app().await;
    let account = crate::helpers::unique("dash-co");
    let out = stdout_of(canon(&app).args([
        "users",
        "create",
        "--account",
        &account,
        "--environment",
        "sandbox",
        "--email",
        "ana@example.com",
        "--role",
        "admin",
    ]));
    let token = out.trim();
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let response =
        app.client.get(format!("{}/v3/buckets", app.address)).bearer_auth(token).send().await.unwrap();
    assert_eq!(response.status(), 200, "the token works on the API");
    let entity_type = app.create_type("Reviewed", None).await;
    let reviewers = app
        .client
        .get(format!("{}/v3/entity-types/{entity_type}/reviewers", app.address))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(reviewers.status(), 404, "another account's type is not found, but the token is accepted");
}

#[test]
fn serve_help_lists_every_setting() {
    let output = Command::new(env!("CARGO_BIN_EXE_canon")).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for var in [
        "CANON_LISTEN",
        "CANON_DATA_DIR",
        "CANON_DATABASE_URL",
        "CANON_NEO4J_URI",
        "CANON_NEO4J_USER",
        "CANON_NEO4J_PASSWORD",
        "CANON_QDRANT_URL",
        "CANON_FALKORDB_URL",
        "CANON_RATE_LIMIT_PER_SECOND",
        "CANON_RATE_LIMIT_BURST",
    ] {
        assert!(help.contains(var), "{var} in:\n{help}");
    }
    assert!(help.contains("127.0.0.1:8080") && help.contains("./data"), "defaults shown");
}

#[test]
fn serve_exits_at_once_naming_what_is_missing_and_how_to_get_it() {
    let empty = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_canon"))
        .arg("serve")
        .env("CANON_VENDOR_DIR", empty.path())
        .env("CANON_DATA_DIR", data.path())
        .env("CANON_LISTEN", "127.0.0.1:0")
        .env_remove("CANON_DATABASE_URL")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(started.elapsed() < Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in ["redis-server", "falkordb.so", "model.safetensors", "make provision"] {
        assert!(stderr.contains(needle), "{needle} in: {stderr}");
    }
}

#[test]
fn canon_toml_supplies_what_the_environment_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let from_toml = dir.path().join("from-toml");
    std::fs::write(
        dir.path().join("canon.toml"),
        format!("data_dir = {:?}\n", from_toml.display().to_string()),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_canon"))
        .args(["keys", "create", "--account", "toml-co", "--environment", "sandbox"])
        .current_dir(dir.path())
        .env_remove("CANON_DATA_DIR")
        .env_remove("CANON_DATABASE_URL")
        .env_remove("CANON_CONFIG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(from_toml.join("canon.sqlite").is_file(), "the data directory came from canon.toml");
}

#[tokio::test]
async fn sigterm_stops_canon_and_its_falkordb_with_the_data_saved() {
    let data = tempfile::tempdir().unwrap();
    let key = cli_key(data.path(), "signal-co");
    let client = reqwest::Client::new();
    let (mut child, address) = serve_process(data.path());
    let created = client
        .post(format!("{address}/v3/buckets"))
        .header("x-api-key", &key)
        .json(&serde_json::json!({ "name": "survives-sigterm" }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    let pid_file = data.path().join("falkordb/redis.pid");
    let falkordb_pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();

    // SAFETY: signalling the child process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(status.success(), "canon exits cleanly on SIGTERM: {status}");
    assert!(!std::path::Path::new(&format!("/proc/{falkordb_pid}")).exists(), "FalkorDB stopped with canon");
    assert!(data.path().join("falkordb/graph.rdb").is_file(), "FalkorDB saved a snapshot");

    let (mut child, address) = serve_process(data.path());
    let listed = client
        .get(format!("{address}/v3/buckets?nameSubstring=survives"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(json(listed).await["totalCount"], 1);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success(), "and on SIGINT");
}

/// `kill -9` of canon leaves no FalkorDB behind, neither the first child nor one the
/// supervisor restarted (which is spawned later, from another task).
#[tokio::test]
async fn a_falkordb_child_dies_with_canon_even_on_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let (canon, address) = serve_process(data.path());
    let mut canon = KilledOnDrop(canon);
    let pid_file = data.path().join("falkordb/redis.pid");
    let first = falkordb_pid(&pid_file);
    assert_eq!(parent_of(first), Some(canon.0.id() as i32), "FalkorDB is canon's child");

    // SAFETY: signalling the FalkorDB child of the canon this test started.
    unsafe { libc::kill(first, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(30);
    let restarted = loop {
        let pid = std::fs::read_to_string(&pid_file).ok().and_then(|p| p.trim().parse::<i32>().ok());
        let ready = reqwest::get(format!("{address}/readyz")).await.is_ok_and(|r| r.status() == 200);
        if let Some(pid) = pid.filter(|pid| ready && *pid != first && is_running(*pid)) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the supervisor restarts FalkorDB and canon is ready again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(parent_of(restarted), Some(canon.0.id() as i32), "the restarted FalkorDB is canon's child");

    // SAFETY: signalling the child process this test started.
    unsafe { libc::kill(canon.0.id() as i32, libc::SIGKILL) };
    canon.0.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while is_running(restarted) {
        assert!(Instant::now() < deadline, "FalkorDB {restarted} outlived a SIGKILLed canon");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A waited call runs in the process that took it; `kill -9` of that process in the middle
/// of a node loses nothing: after the restart a worker resumes the call from its held job and
/// it completes with one output, its node run a second try.
#[tokio::test]
async fn a_waited_call_cut_off_by_sigkill_completes_after_the_restart() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    // A receiver that holds its first request open (canon is killed meanwhile), then answers.
    let hits = Arc::new(AtomicUsize::new(0));
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let first_tx = Arc::new(std::sync::Mutex::new(Some(first_tx)));
    let receiver = {
        let hits = hits.clone();
        axum::Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let (hits, first_tx) = (hits.clone(), first_tx.clone());
                async move {
                    if hits.fetch_add(1, Ordering::SeqCst) == 0 {
                        if let Some(tx) = first_tx.lock().unwrap().take() {
                            let _ = tx.send(());
                        }
                        std::future::pending::<()>().await;
                    }
                    "ok"
                }
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let data = tempfile::tempdir().unwrap();
    let key = cli_key(data.path(), "sigkill-co");
    let settings = [("CANON_ALLOW_PRIVATE_NETWORK", "true")];
    let (canon, address) = crate::helpers::serve_process_with(data.path(), &settings);
    let mut canon = KilledOnDrop(canon);
    let client = reqwest::Client::new();
    let post = |path: &str, body: serde_json::Value| {
        client.post(format!("{address}{path}")).header("x-api-key", &key).json(&body).send()
    };
    let extract = serde_json::json!({"functionName": "invoice", "type": "extract", "outputSchemaName": "Invoice",
        "outputSchema": crate::calls::invoice_schema()});
    assert_eq!(post("/v3/functions", extract).await.unwrap().status(), 200);
    let function = serde_json::json!({"functionName": "notify", "type": "send", "destinationType": "webhook",
        "webhookUrl": hook});
    assert_eq!(post("/v3/functions", function).await.unwrap().status(), 200);
    let workflow = serde_json::json!({"name": "notify", "mainNodeName": "invoice",
        "nodes": [{"name": "invoice", "function": {"name": "invoice"}}, {"name": "notify", "function": {"name": "notify"}}],
        "edges": [{"sourceNodeName": "invoice", "destinationNodeName": "notify"}]});
    assert_eq!(post("/v3/workflows", workflow).await.unwrap().status(), 200);
    let call = serde_json::json!({"callReferenceID": "cut-off",
        "input": {"singleFile": {"inputContent": crate::calls::INVOICE, "inputType": "text"}}});
    let waiting = tokio::spawn(post("/v3/workflows/notify/call?wait=true", call));
    tokio::time::timeout(Duration::from_secs(30), first_rx)
        .await
        .expect("the node reaches the receiver")
        .unwrap();
    // While the send hangs, the trace shows it running after the quick run before it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let extract_run = loop {
        let trace = trace_by_reference(&client, &address, &key, "cut-off").await;
        let runs = trace["trace"]["functionCalls"].as_array().cloned().unwrap_or_default();
        let status =
            |node: &str| runs.iter().find(|r| r["workflowNodeName"] == node).map(|r| r["status"].clone());
        if status("notify") == Some("running".into()) {
            assert_eq!(status("invoice"), Some("completed".into()), "{trace}");
            break runs.iter().find(|r| r["workflowNodeName"] == "invoice").unwrap()["functionCallID"]
                .clone();
        }
        assert!(Instant::now() < deadline, "the hanging send shows as running: {trace}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    // SAFETY: signalling the child process this test started.
    unsafe { libc::kill(canon.0.id() as i32, libc::SIGKILL) };
    canon.0.wait().unwrap();
    assert!(waiting.await.unwrap().is_err(), "the waiting request died with canon");

    let (restarted, address) = crate::helpers::serve_process_with(data.path(), &settings);
    let _restarted = KilledOnDrop(restarted);
    let get = |path: String| client.get(format!("{address}{path}")).header("x-api-key", &key).send();
    let deadline = Instant::now() + Duration::from_secs(60);
    let call = loop {
        let listed = json(get("/v3/calls?referenceIDs=cut-off".into()).await.unwrap()).await;
        assert_eq!(listed["totalCount"], 1, "the call was stored before it ran: {listed}");
        let call = listed["calls"][0].clone();
        if call["status"] == "completed" || call["status"] == "failed" {
            break call;
        }
        assert!(Instant::now() < deadline, "the call finishes after the restart: {call}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["outputs"].as_array().map(Vec::len), Some(1), "one output, none twice: {call}");
    assert_eq!(hits.load(Ordering::SeqCst), 2, "the cut-off send ran again, once");
    let trace =
        json(get(format!("/v3/calls/{}/trace", call["callID"].as_str().unwrap())).await.unwrap()).await;
    let runs = trace["trace"]["functionCalls"].as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 2, "the run left by the crash was replaced: {trace}");
    assert!(runs.iter().any(|r| r["functionCallID"] == extract_run), "the finished run was reused: {trace}");
}

/// The trace of the call `reference` names.
async fn trace_by_reference(
    client: &reqwest::Client,
    address: &str,
    key: &str,
    reference: &str,
) -> serde_json::Value {
    let get = |path: String| client.get(format!("{address}{path}")).header("x-api-key", key).send();
    let listed = json(get(format!("/v3/calls?referenceIDs={reference}")).await.unwrap()).await;
    let call_id = listed["calls"][0]["callID"].as_str().unwrap_or_default().to_string();
    json(get(format!("/v3/calls/{call_id}/trace")).await.unwrap()).await
}

/// A canon process stopped when the test ends, failed or not.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn falkordb_pid(pid_file: &std::path::Path) -> i32 {
    std::fs::read_to_string(pid_file).unwrap().trim().parse().unwrap()
}

/// Fields of `/proc/<pid>/stat` after the command name: state, parent…
fn proc_stat(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    Some(after_name.split_whitespace().map(str::to_string).collect())
}

fn parent_of(pid: i32) -> Option<i32> {
    proc_stat(pid)?.get(1)?.parse().ok()
}

/// Alive and not a zombie waiting for whoever reaps orphans here.
fn is_running(pid: i32) -> bool {
    proc_stat(pid).is_some_and(|fields| fields[0] != "Z" && fields[0] != "X")
}
