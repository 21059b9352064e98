//! What every benchmark needs: canon in process on a fresh data directory, a key, timing.

#![allow(dead_code)]

use canon::app::App;
use canon::config::Config;
use canon::graph::Tenant;
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use std::path::PathBuf;
use std::time::Duration;

pub struct Bench {
    pub app: App,
    pub base: String,
    pub key: String,
    pub tenant: Tenant,
    pub client: reqwest::Client,
    _data: tempfile::TempDir,
}

/// Canon on its embedded defaults with no rate limit, and one sandbox key.
pub async fn start(configure: impl FnOnce(&mut Config)) -> anyhow::Result<Bench> {
    let data = tempfile::tempdir()?;
    let vendor = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vendor");
    let mut config = Config::embedded(data.path(), &vendor);
    config.rate_limit_per_second = 1e9;
    config.rate_limit_burst = u32::MAX;
    configure(&mut config);
    let app = App::spawn(&config, Handlers::default()).await?;
    let base = format!("http://{}", app.addr);
    let account = app.state.records.ensure_account("bench").await?;
    let (_, key) = app.state.records.create_key(&account.id, Environment::Sandbox, "bench").await?;
    let tenant = Tenant { account_id: account.id.clone(), environment: Environment::Sandbox };
    app.state.graph.ensure_tenant(&tenant).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build()?;
    Ok(Bench { app, base, key, tenant, client, _data: data })
}

impl Bench {
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(format!("{}{path}", self.base)).header("x-api-key", &self.key)
    }

    pub fn post(&self, path: &str, body: &serde_json::Value) -> reqwest::RequestBuilder {
        self.client.post(format!("{}{path}", self.base)).header("x-api-key", &self.key).json(body)
    }

    pub async fn stop(self) {
        self.app.stop().await;
    }
}

pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}
