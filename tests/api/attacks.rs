//! One tenant cannot take the server down (#48), proven on a real `canon serve` process: each
//! attack of the issue is sent over HTTP while another tenant's requests run beside it, and
//! after each the attacker has had a 4xx or a failed call naming the limit, canon is the same
//! live process, its FalkorDB child is the same process, every request of the other tenant
//! succeeded, and canon's peak memory grew by at most [`RSS_GROWTH_LIMIT_MIB`]. A call that is
//! running whenever canon is killed is failed after its attempts, never run again; and canon
//! answers again soon after a `kill -9` with a graph of 5,000 entities.
//!
//! These are the only tests that run the canon binary under attack. `serve_process` uses
//! SQLite records and the embedded FalkorDB child on every pass (the PostgreSQL and Neo4j
//! passes too: it ignores `CANON_TEST_DATABASE_URL` and `CANON_TEST_NEO4J_URI`), so what is
//! measured is always one canon process and its one FalkorDB child. The measured figures are
//! printed (`cargo test --test api attacks -- --nocapture`).

use crate::calls::{invoice_schema, INVOICE};
use crate::decode_limits::nested_mail;
use crate::helpers::{cli_key, serve_process_with};
use crate::outside_replies::endless_receiver;
use base64::Engine as _;
use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use reqwest::{Client, Method, Response};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How much canon's peak resident memory (`VmHWM`) may grow over its baseline during any
/// attack (the issue's bound).
const RSS_GROWTH_LIMIT_MIB: u64 = 512;
/// The error of a call whose worker stopped while running it `CALL_JOB_ATTEMPTS` (5) times.
const STOPPED_FIVE_TIMES: &str = "the worker stopped while running this job 5 times; it is not retried";
/// The issue's goal for answering after a crash with 5,000 entities is 5 s; the assertion is
/// generous (timing on a shared machine must not decide pass or fail) and the figure printed.
const CRASH_RESTART_LIMIT: Duration = Duration::from_secs(30);

/// A `canon serve` process on a data directory, and the FalkorDB child it started.
struct Canon {
    child: Child,
    address: String,
    data: PathBuf,
    settings: &'static [(&'static str, &'static str)],
    falkordb: u32,
    client: Client,
}

impl Canon {
    /// Starts canon on `data` (off the async workers: the start blocks until it listens).
    async fn start(data: &Path, settings: &'static [(&'static str, &'static str)]) -> Canon {
        let dir = data.to_path_buf();
        let (child, address) = tokio::task::spawn_blocking(move || serve_process_with(&dir, settings))
            .await
            .expect("canon starts and listens");
        let falkordb = falkordb_child(child.id()).expect("canon runs a FalkorDB child");
        Canon { child, address, data: data.to_path_buf(), settings, falkordb, client: Client::new() }
    }

    /// `kill -9` of canon, reaped; its FalkorDB child is left to the kernel's signal.
    fn kill(&mut self) {
        self.child.kill().expect("SIGKILL to canon");
        self.child.wait().expect("canon reaped");
    }

    /// `kill -9`, then a new start on the same data.
    async fn crash_and_restart(&mut self) {
        self.kill();
        self.restart().await;
    }

    /// A new start on the same data, once this canon is gone.
    async fn restart(&mut self) {
        *self = Canon::start(&self.data.clone(), self.settings).await;
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn request(&self, method: Method, key: &str, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.address)).header("x-api-key", key)
    }

    async fn get(&self, key: &str, path: &str) -> Value {
        let response = self.request(Method::GET, key, path).send().await.expect("canon answers");
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.expect("JSON")
    }

    async fn post(&self, key: &str, path: &str, body: Value) -> Response {
        self.request(Method::POST, key, path).json(&body).send().await.expect("canon answers")
    }

    /// Creates functions (each 200) and a workflow running them in a chain.
    async fn workflow(&self, key: &str, name: &str, functions: &[Value]) {
        for function in functions {
            let response = self.post(key, "/v3/functions", function.clone()).await;
            assert_eq!(response.status(), 200, "creating {function}");
        }
        let names: Vec<&str> = functions.iter().map(|f| f["functionName"].as_str().unwrap()).collect();
        let body = json!({"name": name, "mainNodeName": names[0],
            "nodes": names.iter().map(|n| json!({"name": n, "function": {"name": n}})).collect::<Vec<_>>(),
            "edges": names.windows(2).map(|w| json!({"sourceNodeName": w[0], "destinationNodeName": w[1]})).collect::<Vec<_>>()});
        let response = self.post(key, "/v3/workflows", body).await;
        assert_eq!(response.status(), 200, "creating workflow {name}");
    }

    /// Submits a call of `workflow` on `content` (`inputType`), waited for or not.
    async fn call(&self, key: &str, workflow: &str, content: &[u8], input_type: &str, wait: bool) -> Value {
        let content = base64::engine::general_purpose::STANDARD.encode(content);
        let body = json!({"input": {"singleFile": {"inputContent": content, "inputType": input_type}}});
        let path = format!("/v3/workflows/{workflow}/call{}", if wait { "?wait=true" } else { "" });
        let response = self.post(key, &path, body).await;
        assert_eq!(response.status(), if wait { 200 } else { 202 }, "calling {workflow}");
        response.json().await.expect("JSON")
    }

    /// A call once it is completed or failed (within a minute).
    async fn finished_call(&self, key: &str, call_id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let call = self.get(key, &format!("/v3/calls/{call_id}")).await["call"].clone();
            if matches!(call["status"].as_str(), Some("completed" | "failed")) {
                return call;
            }
            assert!(Instant::now() < deadline, "call {call_id} still {}", call["status"]);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Asserts what must hold after every attack, and prints the figures.
    fn assert_unharmed(&mut self, attack: &str, baseline_kib: u64, bystander: &Bystander) {
        let exited = self.child.try_wait().expect("canon's status");
        assert!(exited.is_none(), "{attack}: canon exited ({exited:?})");
        let falkordb = falkordb_child(self.pid());
        assert_eq!(falkordb, Some(self.falkordb), "{attack}: FalkorDB is the same process");
        let (peak, resident) = (memory_kib(self.pid(), "VmHWM:"), memory_kib(self.pid(), "VmRSS:"));
        let growth_mib = peak.saturating_sub(baseline_kib) / 1024;
        println!(
            "FIGURES {attack}: canon pid {} and FalkorDB pid {} unchanged; canon VmHWM {baseline_kib} -> \
             {peak} KiB (+{growth_mib} MiB, bound {RSS_GROWTH_LIMIT_MIB} MiB), VmRSS {resident} KiB; \
             other tenant: {} requests beside it, all succeeded, slowest {:?}",
            self.pid(),
            self.falkordb,
            bystander.requests,
            bystander.slowest
        );
        assert!(
            bystander.failures.is_empty(),
            "{attack}: the other tenant's requests failed: {:?}",
            bystander.failures
        );
        assert!(growth_mib <= RSS_GROWTH_LIMIT_MIB, "{attack}: canon's peak memory grew {growth_mib} MiB");
    }
}

impl Drop for Canon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The PID of the FalkorDB (`redis-server`) whose parent is `parent`, from `/proc/*/stat`.
fn falkordb_child(parent: u32) -> Option<u32> {
    let children: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // `pid (comm) state ppid …`: the command may hold spaces, so read after its `)`.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let Some((head, rest)) = stat.rsplit_once(')') else { return false };
            let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
            ppid == Some(parent) && head.contains("redis-server")
        })
        .collect();
    assert!(children.len() <= 1, "one FalkorDB child, found {children:?}");
    children.first().copied()
}

/// Whether process `pid` runs: not gone, and not a zombie (an orphan that exited stays one
/// until init reaps it, seconds later here).
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|s| s != "Z")
}

/// A `/proc/<pid>/status` figure (`VmRSS:`, `VmHWM:`) in KiB.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("canon's /proc status");
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field in /proc status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// What the other tenant saw while an attack ran.
#[derive(Default)]
struct Bystander {
    requests: usize,
    failures: Vec<String>,
    slowest: Duration,
}

/// Runs `attack` while tenant `key` keeps making ordinary requests (a list, a GraphQL query,
/// a schema inference and a waited workflow call, over and over); returns the attack's result
/// and what the tenant saw.
async fn beside<T>(canon: &Canon, key: &str, attack: impl Future<Output = T>) -> (T, Bystander) {
    let stop = Arc::new(AtomicBool::new(false));
    let (client, address, key) = (canon.client.clone(), canon.address.clone(), key.to_string());
    let stopped = stop.clone();
    let other = tokio::spawn(async move {
        let mut seen = Bystander::default();
        loop {
            for (name, request) in bystander_requests(&client, &address, &key) {
                let asked = Instant::now();
                match request.send().await {
                    Ok(response) if response.status() == 200 => {
                        // A 200 whose body says the work failed is a failure too.
                        let body: Value = response.json().await.unwrap_or_default();
                        let failed = body.get("errors").is_some_and(|e| !e.is_null())
                            || body["call"].get("status").is_some_and(|s| s != "completed");
                        if failed {
                            seen.failures.push(format!("{name}: {body}"));
                        }
                    }
                    Ok(response) => seen.failures.push(format!("{name}: {}", response.status())),
                    Err(err) => seen.failures.push(format!("{name}: {err}")),
                }
                seen.requests += 1;
                seen.slowest = seen.slowest.max(asked.elapsed());
            }
            if stopped.load(Ordering::Relaxed) {
                return seen;
            }
            // About 40 requests a second: well within the key's rate limit (100 a second).
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let result = attack.await;
    stop.store(true, Ordering::Relaxed);
    (result, other.await.expect("the other tenant's loop"))
}

fn bystander_requests(
    client: &Client,
    address: &str,
    key: &str,
) -> Vec<(&'static str, reqwest::RequestBuilder)> {
    let request = |method: Method, path: &str| {
        client.request(method, format!("{address}{path}")).header("x-api-key", key)
    };
    let note = Form::new()
        .part("file", Part::bytes(b"Invoice number: INV-7\nTotal: $5.00\n".to_vec()).file_name("note.txt"));
    let call = json!({"input": {"singleFile": {"inputContent": base64::engine::general_purpose::STANDARD.encode(INVOICE), "inputType": "text"}}});
    vec![
        ("list buckets", request(Method::GET, "/v3/buckets")),
        (
            "graphql",
            request(Method::POST, "/graphql")
                .json(&json!({"query": "{ knowledgeGraph(limit: 1) { nextCursor } }"})),
        ),
        ("infer-schema", request(Method::POST, "/v3/infer-schema").multipart(note)),
        ("workflow call", request(Method::POST, "/v3/workflows/invoices/call?wait=true").json(&call)),
    ]
}

/// The two tenants of an attack run, each a key of its own account.
struct Tenants {
    attacker: String,
    other: String,
}

async fn canon_with_tenants(data: &Path) -> (Canon, Tenants) {
    let tenants = Tenants { attacker: cli_key(data, "attacker-co"), other: cli_key(data, "bystander-co") };
    let canon = Canon::start(data, &[("CANON_ALLOW_PRIVATE_NETWORK", "true")]).await;
    let invoices = json!({"functionName": "invoice", "type": "extract", "outputSchemaName": "Out",
        "outputSchema": invoice_schema()});
    canon.workflow(&tenants.other, "invoices", &[invoices]).await;
    let split = json!({"functionName": "attachments", "type": "split", "splitConfig": {"by": "attachments"}});
    canon.workflow(&tenants.attacker, "mail", &[split]).await;
    (canon, tenants)
}

/// The issue's attacks, one after another on one canon process, each beside the other
/// tenant's requests; after each, canon, FalkorDB and the other tenant are unharmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_attack_of_a_hostile_tenant_is_refused_naming_its_limit_while_canon_falkordb_and_another_tenant_carry_on(
) {
    let (hook, sent) = endless_receiver("200 OK").await;
    let data = tempfile::tempdir().unwrap();
    let (mut canon, tenants) = canon_with_tenants(data.path()).await;
    let attacker = tenants.attacker.as_str();
    let send =
        json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": hook});
    canon.workflow(attacker, "notify", &[send]).await;
    // One round of everything first, so what first uses allocate is in the baseline.
    let (_, warm) = beside(&canon, &tenants.other, async {}).await;
    assert!(warm.failures.is_empty(), "the other tenant's warm-up: {:?}", warm.failures);
    canon.call(attacker, "mail", b"From: a@a.example\r\nSubject: hi\r\n\r\nhello\r\n", "email", true).await;
    let baseline = memory_kib(canon.pid(), "VmHWM:");
    println!(
        "FIGURES baseline: canon pid {} VmHWM {baseline} KiB, FalkorDB pid {}",
        canon.pid(),
        canon.falkordb
    );

    // 1. An e-mail nested 3,000 deep to infer-schema: 422 naming the depth limit.
    let mail = nested_mail(3_000);
    let form = Form::new().part("file", Part::bytes(mail).file_name("deep.eml"));
    let request = canon.request(Method::POST, attacker, "/v3/infer-schema").multipart(form);
    let (response, seen) = beside(&canon, &tenants.other, request.send()).await;
    let response = response.expect("canon answers the deep e-mail");
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("nesting depth of 20"), "names the limit: {body}");
    canon.assert_unharmed("e-mail nested 3,000 deep to infer-schema", baseline, &seen);

    // 2. One nested 1,400 deep as a workflow call: the job worker fails the call naming the limit.
    let attack = async {
        let submitted = canon.call(attacker, "mail", &nested_mail(1_400), "email", false).await;
        canon.finished_call(attacker, submitted["call"]["callID"].as_str().unwrap()).await
    };
    let (call, seen) = beside(&canon, &tenants.other, attack).await;
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(call["errors"][0]["kind"], "input_limit", "{call}");
    assert!(call["errors"][0]["errorMessage"].as_str().unwrap().contains("nesting depth of 20"), "{call}");
    canon.assert_unharmed("e-mail nested 1,400 deep as a workflow call", baseline, &seen);

    // 3. A send answered with a 1 GiB body: 1 MiB kept, flagged truncated, the rest unread.
    sent.store(0, Ordering::Relaxed);
    let (call, seen) =
        beside(&canon, &tenants.other, canon.call(attacker, "notify", b"hello", "text", true)).await;
    let text = call.to_string();
    assert_eq!(call["call"]["status"], "completed", "{}", &text[..text.len().min(2_000)]);
    let output = find(&call, "webhookOutput").expect("a send output");
    assert_eq!(output["httpResponseBodyTruncated"], true);
    assert_eq!(output["httpResponseBody"].as_str().unwrap().len(), 1024 * 1024, "1 MiB kept");
    let streamed = sent.load(Ordering::Relaxed);
    println!("FIGURES 1 GiB reply: the receiver sent {streamed} bytes before canon hung up");
    assert!(streamed < 64 * 1024 * 1024, "canon stopped reading at the cap ({streamed} bytes sent)");
    canon.assert_unharmed("send answered with a 1 GiB body", baseline, &seen);

    // 4. GraphQL with 1,000 aliased root fields: 400 stating the cost and the limit.
    let aliases: String =
        (0..1_000).map(|i| format!("e{i}: entity(id: \"ent_{i}\") {{ entityID }} ")).collect();
    let query = json!({ "query": format!("{{ {aliases} }}") });
    let (response, seen) = beside(&canon, &tenants.other, canon.post(attacker, "/graphql", query)).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    let message = body["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("costs") && message.contains("the limit is 10000"), "{body}");
    assert!(body.get("data").is_none_or(Value::is_null), "nothing ran: {body}");
    canon.assert_unharmed("GraphQL with 1,000 aliased root fields", baseline, &seen);

    // 5. 3,000 requests with made-up methods and no key: each a 4xx, /metrics stays small.
    let metrics_before = canon.client.get(format!("{}/metrics", canon.address)).send().await.unwrap();
    let metrics_before = metrics_before.text().await.unwrap();
    let attack = futures::stream::iter(0..3_000)
        .map(|i| {
            let method = Method::from_bytes(format!("ATTACK{i}").as_bytes()).unwrap();
            canon.client.request(method, format!("{}/v3/probe-{i}", canon.address)).send()
        })
        .buffer_unordered(16)
        .map(|response| response.expect("canon answers").status().as_u16())
        .collect::<Vec<u16>>();
    let (statuses, seen) = beside(&canon, &tenants.other, attack).await;
    assert!(statuses.iter().all(|s| (400..500).contains(s)), "each a 4xx: {:?}", &statuses[..10]);
    let metrics = canon.client.get(format!("{}/metrics", canon.address)).send().await.unwrap();
    let metrics = metrics.text().await.unwrap();
    println!(
        "FIGURES made-up methods: /metrics {} bytes before, {} after 3,000 requests (statuses {:?})",
        metrics_before.len(),
        metrics.len(),
        statuses.iter().collect::<std::collections::BTreeSet<_>>()
    );
    assert!(!metrics.contains("ATTACK") && !metrics.contains("probe-"), "nothing a client sent is a label");
    assert!(metrics.len() < metrics_before.len() + 8 * 1024, "a few series at most were added");
    canon.assert_unharmed("3,000 requests with made-up methods", baseline, &seen);

    // 6. A JMESPath expression nested 10,000 deep (it overflowed a worker's stack and aborted
    // the process): as a shaping schema, a 400 naming the field and the limit; as an
    // extraction's `x-path` (read only at calls), the call runs and the path finds nothing.
    let deep = "[".repeat(10_000);
    let shaper = json!({"functionName": "shaper", "type": "payload_shaping", "shapingSchema": deep});
    let (response, seen) =
        beside(&canon, &tenants.other, canon.post(attacker, "/v3/functions", shaper)).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["details"]["field"], "shapingSchema", "{body}");
    assert!(body["message"].as_str().unwrap().contains("nested deeper than 100 levels"), "{body}");
    canon.assert_unharmed("a shaping schema nested 10,000 deep", baseline, &seen);
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "x-path": deep}}});
    let reader = json!({"functionName": "deep-reader", "type": "extract", "outputSchemaName": "Out", "outputSchema": schema});
    canon.workflow(attacker, "deep", &[reader]).await;
    let (call, seen) =
        beside(&canon, &tenants.other, canon.call(attacker, "deep", br#"{"a": "x"}"#, "json", true)).await;
    assert_eq!(call["call"]["status"], "completed", "{call}");
    canon.assert_unharmed("an x-path nested 10,000 deep in a call", baseline, &seen);

    // 7. A shaping expression that doubles its input at each of 30 steps (it took the
    // server's memory): the call fails naming the bound.
    let doubling = vec!["{a: @, b: @}"; 30].join(".");
    let doubler = json!({"functionName": "doubler", "type": "payload_shaping", "shapingSchema": doubling});
    canon.workflow(attacker, "doubler", &[doubler]).await;
    let (call, seen) =
        beside(&canon, &tenants.other, canon.call(attacker, "doubler", br#"{"a": 1}"#, "json", true)).await;
    assert_eq!(call["call"]["status"], "failed", "{call}");
    let error = find(&call, "errors").and_then(|errors| errors.get(0)).expect("an error");
    assert!(error["errorMessage"].as_str().unwrap().contains("builds more than 64 MiB"), "{error}");
    canon.assert_unharmed("a shaping expression doubling its input 30 times", baseline, &seen);

    // 8. Output schemas whose patterns are slow on the output's strings (a lookahead is
    // quadratic in a string's length; a linear pattern the DFA cannot hold runs ~14 µs a
    // byte): unbounded, each call held a runtime thread for minutes. A string past the
    // lookahead's limit is not matched; the linear checks stop at their time budget.
    for (name, pattern, strings, suffix, why) in [
        ("lookahead", "(?=a)(a|b)*c", 5, String::new(), "is not checked against a pattern with lookaround"),
        (
            "wide",
            "a[ab]{3000}c",
            60,
            "a".to_string() + &"b".repeat(3000) + "c",
            "checks of this output took their 1 s",
        ),
    ] {
        let schema = json!({"type": "array", "items": {"type": "string", "pattern": pattern}});
        let checker = json!({"functionName": format!("{name}-check"), "type": "payload_shaping",
            "shapingSchema": "json", "outputSchemaName": "Strings", "outputSchema": schema});
        canon.workflow(attacker, name, &[checker]).await;
        // a and b in no order a search can skip ahead on (the lookahead fails at every one of
        // its 20,000 places; each wide string ends in its match)
        let mut x: u64 = 7;
        let strings: Vec<String> = (0..strings)
            .map(|_| {
                let text: String = (0..100_000 / strings)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        if x >> 63 == 0 {
                            'a'
                        } else {
                            'b'
                        }
                    })
                    .collect();
                text + &suffix
            })
            .collect();
        let content = serde_json::to_vec(&strings).unwrap();
        let (call, seen) =
            beside(&canon, &tenants.other, canon.call(attacker, name, &content, "json", true)).await;
        let text = call.to_string();
        assert_eq!(call["call"]["status"], "failed", "{}", &text[..text.len().min(2_000)]);
        let error = find(&call, "errors").and_then(|errors| errors.get(0)).expect("an error");
        assert_eq!(error["kind"], "output_schema", "{error}");
        assert!(error["errorMessage"].as_str().unwrap().contains(why), "{error}");
        canon.assert_unharmed(
            &format!("an output schema's {name} pattern over long strings"),
            baseline,
            &seen,
        );
    }

    // 9. A score run whose output and expected value hold 100 KB strings that differ: the
    // field's similarity is an edit distance, quadratic (10^10 steps for one read, on an
    // async worker). Past its bound the similarity is null and the strings do not match. And
    // a pair whose output is past what a score run compares fails saying so, unread.
    let echo = json!({"functionName": "echo", "type": "payload_shaping", "shapingSchema": "json"});
    canon.workflow(attacker, "echo", &[echo]).await;
    let pair = |text: String, expected: Value| {
        let input = base64::engine::general_purpose::STANDARD.encode(json!({ "t": text }).to_string());
        json!({"input": {"inputContent": input, "inputType": "json"}, "expected": expected})
    };
    let long = "a".repeat(100_000);
    let pairs = [pair(long.clone(), json!({"t": format!("{long}b")})), pair("a".repeat(300_000), json!({}))];
    let created =
        canon.post(attacker, "/v3/eval/score", json!({"functionName": "echo", "pairs": pairs})).await;
    assert_eq!(created.status(), 202);
    let run_id = created.json::<Value>().await.unwrap()["scoreRunID"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = canon.get(attacker, &format!("/v3/eval/score/{run_id}")).await;
        if run["status"] == "completed" {
            break;
        }
        let shown = run.to_string();
        assert!(Instant::now() < deadline, "not completed in a minute: {}", &shown[..shown.len().min(2_000)]);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let fuzzy = format!("/v3/eval/score/{run_id}?fuzzyThreshold=0.5");
    let (run, seen) = beside(&canon, &tenants.other, canon.get(attacker, &fuzzy)).await;
    let field = &run["perPair"][0]["fieldResults"][0];
    assert_eq!(
        (&field["path"], &field["match"], &field["similarity"]),
        (&json!("/t"), &json!("mismatch"), &Value::Null)
    );
    let unread = &run["perPair"][1];
    assert_eq!((&unread["status"], &unread["fieldResults"]), (&json!("failed"), &Value::Null), "{unread}");
    assert!(unread["errorMessage"]
        .as_str()
        .unwrap()
        .contains("262144 a score run compares (scoredOutputCharacters)"));
    canon.assert_unharmed("a score run comparing two 100 KB strings", baseline, &seen);

    // 10. Two rows of one name whose compared (fuzzy) attribute holds 800 KB each: the seed
    // compares them to decide whether the second joins the first (Jaro-Winkler, quadratic:
    // ~10^11 steps, on the async worker answering the request: fewer than 100 rows are seeded
    // at once). A comparison reads a value's first 1,000 characters; these differ there (and
    // the rows' cities too), so the second row is a homonym of the first.
    let schema = json!({"properties": {"city": {"type": "string", "x-compare": "exact"},
        "notes": {"type": "string", "x-compare": "fuzzy"}}});
    let created =
        canon.post(attacker, "/v3/entity-types", json!({"name": "Noted", "attributeSchema": schema})).await;
    assert_eq!(created.status(), 200);
    let notes = "lorem ipsum dolor ".repeat(45_000);
    let rows = json!([
        {"canonical": "Acme", "type": "Noted", "attributes": {"city": "Paris", "notes": notes}},
        {"canonical": "Acme", "type": "Noted",
            "attributes": {"city": "Lyon", "notes": "quod erat demonstrandum ".repeat(33_000)}},
    ]);
    let seed = canon.post(attacker, "/v3/entities/bulk", json!({ "entities": rows }));
    let (response, seen) = beside(&canon, &tenants.other, seed).await;
    assert_eq!(response.status(), 200);
    let seeded: Value = response.json().await.unwrap();
    let outcomes: Vec<&Value> = seeded["results"].as_array().unwrap().iter().map(|r| &r["outcome"]).collect();
    assert_eq!(outcomes, [&json!("created"), &json!("created")], "{}", seeded["summary"]);
    canon.assert_unharmed("a seed comparing two 800 KB attribute values", baseline, &seen);
}

/// The first value of `key` anywhere in `value`.
fn find<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key).or_else(|| map.values().find_map(|v| find(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}

/// A model endpoint that takes every connection, counts it and never answers: a call to it
/// runs until canon dies. Returns its base URL and the connection count.
async fn hung_model() -> (String, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicU64::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    (format!("http://{address}/v1"), connections)
}

/// A call that is running each time canon is killed (`kill -9`) is claimed again at each
/// start until its attempts are used up, then failed saying so; no later start runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_running_whenever_canon_is_killed_is_failed_after_five_starts_and_never_run_again() {
    let (model, connections) = hung_model().await;
    let data = tempfile::tempdir().unwrap();
    let key = cli_key(data.path(), "poison-co");
    let mut canon = Canon::start(data.path(), &[("CANON_ALLOW_PRIVATE_NETWORK", "true")]).await;
    let hung = json!({"functionName": "hung", "type": "extract", "outputSchemaName": "Out",
        "outputSchema": invoice_schema(),
        "extraConfig": {"llm": {"baseUrl": model, "model": "stub-model", "timeoutSeconds": 600}}});
    canon.workflow(&key, "hung", &[hung]).await;
    let submitted = canon.call(&key, "hung", INVOICE.as_bytes(), "text", false).await;
    let call_id = submitted["call"]["callID"].as_str().unwrap().to_string();

    let (mut kills, mut runs_before) = (0, 0);
    let call = loop {
        // Each start either runs the call again (a new connection to the model) or fails it.
        let deadline = Instant::now() + Duration::from_secs(30);
        let call = loop {
            let call = canon.get(&key, &format!("/v3/calls/{call_id}")).await["call"].clone();
            let running = call["status"] == "running" && connections.load(Ordering::SeqCst) > runs_before;
            if running || call["status"] == "failed" {
                break call;
            }
            assert!(
                Instant::now() < deadline,
                "start {}: the call is neither run nor failed: {call}",
                kills + 1
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        if call["status"] == "failed" {
            break call;
        }
        assert!(kills < 5, "the call ran a sixth time");
        let (old_canon, old_falkordb) = (canon.pid(), canon.falkordb);
        let restarted = Instant::now();
        canon.kill();
        // Connections so far were the dead canon's; a new one is the next start's run.
        runs_before = connections.load(Ordering::SeqCst);
        canon.restart().await;
        kills += 1;
        println!(
            "FIGURES poison job: kill -9 {kills} of canon {old_canon} (FalkorDB {old_falkordb}) while the call \
             ran; canon {} with FalkorDB {} answered {:?} later",
            canon.pid(),
            canon.falkordb,
            restarted.elapsed()
        );
        assert!(!alive(old_falkordb), "the killed canon's FalkorDB is gone");
    };
    assert_eq!(kills, 5, "killed while running at each of its five attempts");
    assert_eq!(call["errors"][0]["errorMessage"], STOPPED_FIVE_TIMES, "{call}");
    assert_eq!(call["outputs"], json!([]));
    let runs = connections.load(Ordering::SeqCst);

    // Another crash and start: the call stays failed and the model is never asked again.
    canon.crash_and_restart().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let again = canon.get(&key, &format!("/v3/calls/{call_id}")).await;
    assert_eq!(again["call"]["status"], "failed", "{again}");
    assert_eq!(again["call"]["errors"][0]["errorMessage"], STOPPED_FIVE_TIMES);
    assert_eq!(connections.load(Ordering::SeqCst), runs, "no start ran the call again");
}

/// After `kill -9` with 5,000 entities and 500 calls' documents, canon answers again within
/// [`CRASH_RESTART_LIMIT`] (the figure is printed; the goal is 5 s) with everything there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_with_five_thousand_entities_and_five_hundred_calls_canon_answers_again_with_them() {
    let data = tempfile::tempdir().unwrap();
    let key = cli_key(data.path(), "crash-co");
    // 500 calls as fast as canon takes them: past the key's default rate limit. FalkorDB
    // 4.16 can deadlock loading its files (see `store::graph::embedded`; a CI run took 36 s
    // with the default 30 s before the relaunch): a silent, sleeping child is relaunched after
    // 5 s here, so one relaunch fits the bound and the figure says what it cost.
    let settings = &[
        ("CANON_RATE_LIMIT_PER_SECOND", "1000"),
        ("CANON_RATE_LIMIT_BURST", "2000"),
        ("CANON_FALKORDB_HUNG_SECONDS", "5"),
    ];
    let mut canon = Canon::start(data.path(), settings).await;
    // The calls first, the seeding last: the kill comes right after the last graph writes,
    // before the supervisor compacts them into a snapshot, so the start has them to replay.
    let invoices = json!({"functionName": "invoice", "type": "extract", "outputSchemaName": "Out",
        "outputSchema": invoice_schema()});
    canon.workflow(&key, "invoices", &[invoices]).await;
    let called = Instant::now();
    let calls: Vec<Value> = futures::stream::iter(0..500)
        .map(|_| canon.call(&key, "invoices", INVOICE.as_bytes(), "text", true))
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(calls.iter().all(|c| c["call"]["status"] == "completed"), "every call completed");
    let called = called.elapsed();
    let seeded = Instant::now();
    let mut last_entity = String::new();
    for batch in 0..5 {
        last_entity = seed_thousand(&canon, &key, batch).await;
    }
    println!(
        "FIGURES crash restart: 500 calls in {called:?}, seeded 5,000 entities in {:?}",
        seeded.elapsed()
    );

    let falkordb = canon.falkordb;
    assert_eq!(falkordb_child(canon.pid()), Some(falkordb), "FalkorDB ran on as the same process");
    canon.kill();
    let restarted = Instant::now();
    // The killed canon's FalkorDB flushes and exits on its own (the kernel signals it): only
    // then is its file complete enough to measure (the start would wait for it anyway).
    while alive(falkordb) && restarted.elapsed() < CRASH_RESTART_LIMIT {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let falkordb_exited = restarted.elapsed();
    let replay = queries_to_replay(&canon.data);
    let dir = canon.data.clone();
    canon = Canon::start(&dir, settings).await;
    let listening = restarted.elapsed();
    let entity = canon.get(&key, &format!("/v3/entities/{last_entity}")).await;
    let answered = restarted.elapsed();
    println!(
        "FIGURES crash restart: after kill -9 with 5,000 entities and 500 calls, the old FalkorDB \
         exited after {falkordb_exited:?} leaving {replay} bytes of queries to replay; canon listened \
         after {listening:?} and answered a graph read after {answered:?} (goal 5 s, bound \
         {CRASH_RESTART_LIMIT:?})"
    );
    assert_eq!(entity["entityID"], last_entity.as_str(), "{entity}");
    let calls = canon.get(&key, "/v3/calls?limit=1").await;
    assert_eq!(calls["totalCount"], 500, "every call is there");
    let log = std::fs::read_to_string(canon.data.join("falkordb").join("falkordb.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    assert!(
        answered < CRASH_RESTART_LIMIT,
        "canon answered {answered:?} after the crash; FalkorDB's log ends:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}

/// Seeds 1,000 entities as a seed job and waits for it; returns the last one's ID.
async fn seed_thousand(canon: &Canon, key: &str, batch: usize) -> String {
    let rows: Vec<Value> = (0..1_000)
        .map(|i| json!({"canonical": format!("Crash Company {batch} {i}"), "type": "Company"}))
        .collect();
    let response =
        canon.post(key, "/v3/entities/bulk", json!({"entities": rows, "onConflict": "merge"})).await;
    assert_eq!(response.status(), 202);
    let job: Value = response.json().await.unwrap();
    let id = job["seedJobID"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        let status = canon.get(key, &format!("/v3/entities/seed/{id}")).await;
        assert_ne!(status["status"], "failed", "{status}");
        if status["status"] == "completed" {
            break status;
        }
        assert!(Instant::now() < deadline, "seed job still {}", status["status"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status["createdCount"], 1_000, "rejected {} ({})", status["rejectedCount"], status["error"]);
    let results = status["results"].as_array().expect("per-row results");
    results.last().and_then(|r| r["entityID"].as_str()).expect("an entity ID").to_string()
}

/// The size of FalkorDB's append-only file past its last snapshot: what a start replays.
fn queries_to_replay(data: &Path) -> u64 {
    let aof = data.join("falkordb").join("appendonlydir");
    let manifest = std::fs::read_to_string(aof.join("appendonly.aof.manifest")).unwrap_or_default();
    manifest
        .lines()
        .filter(|l| l.contains("type i"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|file| std::fs::metadata(aof.join(file)).map(|m| m.len()).unwrap_or(0))
        .sum()
}
