//! Events delivery: deliveries per second from the outbox to a local receiver, against a
//! plain HTTP client POSTing the same bodies to the same receiver with the same concurrency
//! (the limit), and the event-to-delivery p50/p99 of calls through the API with a healthy
//! receiver. Goal (#45): ratio ≥ 0.8, p99 under 100 ms.
//!
//! The throughput phase measures the drain alone: the receiver holds its requests while the
//! events are recorded (so the workers can only take their in-flight sends), and the clock
//! starts when it lets them through. The receiver runs in a process of its own
//! ([`common::receiver`]), as a real one would.

mod common;

use futures::StreamExt;
use serde_json::{json, Value};
use std::time::Instant;

const CALLS: usize = 200;
const IN_FLIGHT: usize = canon::delivery::shares::IN_FLIGHT; // the plain client gets the same concurrency

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::var_os(common::receiver::ROLE).is_some() {
        return common::receiver::serve().await;
    }
    // Large enough that connecting to the receiver is a small part of the drain.
    let outbox = common::size("CANON_BENCH_OUTBOX", 10_000);
    let receiver = common::receiver::Remote::start().await?;
    let hook = format!("{}/hook", receiver.base);

    let bench = common::start(|config| config.allow_private_network = true).await?;
    let created: Value = bench
        .post("/v3/functions", &json!({"functionName": "shaper", "type": "transform"}))
        .send()
        .await?
        .json()
        .await?;
    let function_id = created["function"]["functionID"].as_str().unwrap_or_default().to_string();
    let workflow = json!({"name": "flow", "mainNodeName": "shaper", "nodes": [{"name": "shaper", "function": {"name": "shaper"}}]});
    anyhow::ensure!(bench.post("/v3/workflows", &workflow).send().await?.status() == 200, "workflow");
    let sub = json!({"name": "bench", "type": "transform", "functionName": "shaper", "webhookURL": hook});
    anyhow::ensure!(bench.post("/v3/subscriptions", &sub).send().await?.status() == 200, "subscription");
    let secret = bench
        .client
        .post(format!("{}/v3/webhook-secret", bench.base))
        .header("x-api-key", &bench.key)
        .header("content-type", "application/json")
        .send()
        .await?;
    anyhow::ensure!(secret.status() == 200, "webhook secret");

    // Latency: calls through the API, one at a time, each waited for.
    let body =
        json!({"input": {"singleFile": {"inputContent": "SW52b2ljZSBJTlYtNDI=", "inputType": "text"}}});
    for _ in 0..CALLS {
        let response = bench.post("/v3/workflows/flow/call?wait=true", &body).send().await?;
        anyhow::ensure!(response.status() == 200, "call answered {}", response.status());
    }
    receiver.wait_for(CALLS).await?;
    let mut late = receiver.late().await?;
    let (p50, p99) = (common::percentile(&mut late, 0.5), common::percentile(&mut late, 0.99));

    // Throughput: `outbox` events recorded at once, then drained by the workers.
    receiver.clear().await?;
    receiver.hold().await?;
    let records = &bench.app.state.records;
    let recorded =
        common::events::record_terminal_events(records, bench.tenant.owner(), &function_id, "bench", outbox)
            .await?;
    let bodies: Vec<String> = recorded.into_iter().map(|(_, body)| body).collect();
    let cpu = Cpu::start(receiver.pid());
    let started = Instant::now();
    receiver.release().await?;
    receiver.wait_for(outbox).await?;
    let canon_rate = outbox as f64 / started.elapsed().as_secs_f64();
    let canon_cpu = cpu.per(outbox);

    // The limit: a plain client POSTing the same bodies to the same receiver.
    receiver.clear().await?;
    let plain = reqwest::Client::new();
    let cpu = Cpu::start(receiver.pid());
    let started = Instant::now();
    futures::stream::iter(bodies)
        .map(|body| {
            let request = plain.post(&hook).header("content-type", "application/json").body(body);
            async move { request.send().await.map(|r| r.status().is_success()).unwrap_or(false) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<bool>>()
        .await;
    receiver.wait_for(outbox).await?;
    let plain_rate = outbox as f64 / started.elapsed().as_secs_f64();
    let plain_cpu = cpu.per(outbox);

    println!("delivery: {outbox} outbox deliveries to a local receiver, {IN_FLIGHT} in flight, signed");
    println!("  canon workers   {canon_rate:>9.0} deliveries/s");
    println!("  plain client    {plain_rate:>9.0} POSTs/s (the limit)");
    println!("  ratio           {:>9.2} (goal >= 0.8)", canon_rate / plain_rate);
    if let (Some((canon, canon_receiver)), Some((plain, plain_receiver))) = (canon_cpu, plain_cpu) {
        println!(
            "  CPU per delivery: canon {canon:.1} µs (its receiver {canon_receiver:.1}), plain client {plain:.1} µs \
             (its receiver {plain_receiver:.1}); as a ratio {:.2}",
            (plain + plain_receiver) / (canon + canon_receiver)
        );
    }
    println!(
        "  event-to-delivery over {CALLS} calls: p50 {} ms, p99 {} ms (goal p99 < 100 ms)",
        common::ms(p50),
        common::ms(p99)
    );
    bench.stop().await;
    receiver.stop().await;
    Ok(())
}

/// CPU time spent by this process (canon, or the plain client) and by the receiver's, from
/// when it was started.
struct Cpu {
    receiver: u32,
    at: Option<(u64, u64)>,
}

impl Cpu {
    fn start(receiver: u32) -> Self {
        let at = common::cpu_ns(std::process::id()).zip(common::cpu_ns(receiver));
        Self { receiver, at }
    }

    /// Microseconds per delivery of this process and of the receiver's, over `count`.
    fn per(&self, count: usize) -> Option<(f64, f64)> {
        let (own, receiver) = self.at?;
        let (own_now, receiver_now) =
            common::cpu_ns(std::process::id()).zip(common::cpu_ns(self.receiver))?;
        let per = |ns: u64| ns as f64 / 1000.0 / count as f64;
        Some((per(own_now - own), per(receiver_now - receiver)))
    }
}
