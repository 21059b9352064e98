//! The delivery workers: claim due rows of the outbox, send each to its destination, record
//! the attempt, and schedule the next one. At least once: a row leaves `pending` only after
//! its destination answered 2xx (or 410, or the schedule ran out); a worker that dies
//! mid-send leaves a lease that runs out, and the row is sent again (receivers dedupe by
//! `eventID`).
//!
//! By the batch: one loop per process claims due rows and records finished attempts in one
//! transaction a turn (a claim is one statement on PostgreSQL, two on SQLite, for any number
//! of rows; recording is one UPDATE (on SQLite one per 64 deliveries, from plain parameters),
//! plus one INSERT when some attempt did not deliver at once), and the sends sign with the environment's secrets as cached for
//! [`KEY_CACHE_TTL`](crate::secrets::signing::KEY_CACHE_TTL) (1 s): a secret generated,
//! rotated or revoked through this process signs (or stops signing) the next send at once;
//! through another process sharing the record store, within that second.
//!
//! Per destination:
//! - `webhook`: `POST webhookURL`, the event's stored body as is, `content-type:
//!   application/json`, `svc-signature` when the environment has a signing secret; 15 s
//!   timeout, through the egress guard (no redirects). 2xx delivered; 410 disables the
//!   subscription; 429 waits `Retry-After`; anything else is retried on the schedule.
//! - `s3`: `<s3FilePath>/<eventID>.json` PUT into `s3Bucket` with SigV4 at the tenant's
//!   S3-compatible endpoint when it keeps one in its secrets (`s3-endpoint`,
//!   `s3-access-key-id`, `s3-secret-access-key`, optional `s3-region`; the endpoint passes the
//!   egress guard); otherwise written as `<s3Bucket>/<s3FilePath>/<eventID>.json` in the
//!   tenant's own object store ([`crate::egress::objects`]), where a file already there from
//!   an earlier attempt counts as delivered.
//! - `google_drive`: a multipart upload (`POST <CANON_GOOGLE_DRIVE_API_URL>/upload/drive/v3/
//!   files?uploadType=multipart`) of `<eventID>.json` into `googleDriveFolderID`, with the
//!   tenant's secret named `google-drive-token` as the bearer token.

use super::schedule::Schedule;
use super::shares::{Shares, HELD, IN_FLIGHT};
use crate::egress::webhooks::{self, DestinationAnswer};
use crate::egress::{objects, Egress};
use crate::engines::sigv4;
use crate::graph::Tenant;
use crate::ids;
use crate::secrets::SecretsService;
use crate::signature;
use crate::store::records::keys::Environment;
use crate::store::records::outbox::{Attempt, Claimed, Finished};
use crate::store::records::Records;
use futures::stream::{FuturesUnordered, StreamExt};
use http::header::{HeaderName, HeaderValue};
use http::Uri;
use reqwest::Method;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinHandle;

const TIMEOUT: Duration = Duration::from_secs(15);
/// Characters of a destination's answer kept on its attempt.
const EXCERPT_CHARS: usize = 500;
const LEASE_MS: i64 = 60_000;
/// A turn with finished attempts to record waits up to [`GATHER_FOR`] for this many (more than
/// can be in flight, so in practice it waits the whole [`GATHER_FOR`]).
const GATHER: usize = 2 * IN_FLIGHT;
const GATHER_FOR: Duration = Duration::from_millis(2);
/// How often an idle worker looks for due deliveries.
const POLL: Duration = Duration::from_millis(25);
/// The secret naming a tenant's S3-compatible endpoint; without it `s3Bucket` is a folder of
/// the tenant's own object store.
pub const S3_ENDPOINT_SECRET: &str = "s3-endpoint";
/// The secret a Google Drive destination authenticates with.
pub const DRIVE_TOKEN_SECRET: &str = "google-drive-token";

#[derive(Clone)]
pub struct DeliveryWorker {
    pub records: Records,
    pub secrets: SecretsService,
    pub egress: Arc<Egress>,
    pub schedule: Schedule,
    pub drive_api_url: String,
    pub gauges: Arc<super::gauges::Gauges>,
}

/// An attempt's outcome, the status code, an excerpt of the answer, an error.
type Answer = (Outcome, Option<i64>, Option<String>, Option<String>);

/// How one attempt ended.
enum Outcome {
    Delivered,
    /// Disable the subscription (410 Gone).
    Gone,
    Retry {
        retry_after: Option<Duration>,
    },
}

impl DeliveryWorker {
    /// Runs until `stop` turns true (or its sender is gone); in-flight sends finish and are
    /// recorded first.
    ///
    /// One loop owns the outbox's writes: each turn records the attempts that finished since
    /// the last and claims as many due rows as there are free send slots, in one transaction.
    /// A turn that cannot be written is logged; its leases run out and those rows are sent
    /// again, so at least once still holds.
    ///
    /// The loop runs on a thread of its own (a single-threaded runtime), the sends on the
    /// caller's runtime. A turn is several statements, each a round trip to the database's
    /// connection thread; on the shared runtime every answer waited in line behind the
    /// hundreds of sends and requests it was serving, and a 128-row turn took 9 ms, of which
    /// SQLite worked 2. Throughput is one turn's rows per turn, so that wait was the limit.
    pub fn spawn(self, stop: watch::Receiver<bool>) -> JoinHandle<()> {
        let sends = tokio::runtime::Handle::current();
        let (ended_tx, ended_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("canon-outbox".into()).spawn(move || {
            match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime.block_on(self.run(stop, sends)),
                Err(err) => tracing::error!(error = %err, "the delivery worker could not start"),
            }
            let _ = ended_tx.send(());
        });
        if let Err(err) = thread {
            tracing::error!(error = %err, "the delivery worker's thread could not start");
        }
        tokio::spawn(async move {
            let _ = ended_rx.await;
        })
    }

    async fn run(self, mut stop: watch::Receiver<bool>, sends: tokio::runtime::Handle) {
        // The outbox's own connection, opened on this thread's runtime; tried again each
        // second while the store is unreachable.
        let outbox = loop {
            match self.records.connect_alone(1).await {
                Ok(records) => break records,
                Err(err) => {
                    tracing::warn!(error = %err, "the delivery worker could not connect to the record store")
                }
            }
            if *stop.borrow() || stop.has_changed().is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        let held = Arc::new(Semaphore::new(HELD));
        // Bytes of the held deliveries' bodies, until each is sent.
        let held_bytes = Arc::new(AtomicUsize::new(0));
        // Each finished attempt with its delivery's account.
        let (finished_tx, mut finished_rx) = mpsc::channel::<(String, Finished)>(HELD);
        let worker = Arc::new(self);
        let mut finished = Vec::with_capacity(HELD);
        let mut shares = Shares::default();
        let mut stopping = false;
        loop {
            // A stop sender that is gone (its app dropped without stopping) stops the loop too.
            stopping = stopping || *stop.borrow_and_update() || stop.has_changed().is_err();
            while let Ok(done) = finished_rx.try_recv() {
                finished.push(done);
            }
            if !stopping && !finished.is_empty() && finished.len() < GATHER {
                // Group commit: a turn's commit costs about the same for 1 row as for 100
                // (each writes the same few pages), so a turn waits briefly for more. It
                // sleeps rather than waiting on the channel: a waiting receiver is woken by
                // every send, a thread switch per delivery.
                tokio::time::sleep(GATHER_FOR).await;
                while let Ok(done) = finished_rx.try_recv() {
                    finished.push(done);
                }
            }
            for (account, _) in &finished {
                shares.release(account);
            }
            let free = if stopping { 0 } else { held.available_permits() };
            let (skip, limit) = shares.next_claim(free, held_bytes.load(Ordering::Relaxed));
            let mut claimed = Vec::new();
            if !finished.is_empty() || limit > 0 {
                let now = ids::now_millis();
                let attempts: Vec<Finished> = finished.drain(..).map(|(_, done)| done).collect();
                let turn = outbox.settle_and_claim(&attempts, now, LEASE_MS, limit as i64, &skip);
                match turn.await {
                    Ok(rows) => claimed = rows,
                    Err(err) => tracing::warn!(error = %err, "recording and claiming deliveries failed"),
                }
                if !claimed.is_empty() {
                    worker.gauges.claimed(HELD - held.available_permits());
                }
                if limit > 0 {
                    shares.claimed(!skip.is_empty(), claimed.len());
                }
            }
            if stopping && held.available_permits() == HELD && finished_rx.is_empty() {
                break;
            }
            let idle = claimed.is_empty();
            if !idle {
                let batch: Vec<_> = claimed
                    .into_iter()
                    .map(|delivery| {
                        let hold = held.clone().try_acquire_owned().expect("claimed no more than are free");
                        let share = shares.hold(&delivery.account_id);
                        (delivery, hold, share)
                    })
                    .collect();
                held_bytes.fetch_add(
                    batch.iter().map(|(delivery, ..)| delivery.body.len()).sum(),
                    Ordering::Relaxed,
                );
                let (worker, slots, finished_tx) = (worker.clone(), slots.clone(), finished_tx.clone());
                let held_bytes = held_bytes.clone();
                // The turn's deliveries are sent by one task of the sends' runtime, as a plain
                // client drives its requests: a task spawned for each (from this thread, or from
                // a task there) cost a task's allocation, a copy of its large future and often a
                // wake of the other runtime thread per delivery.
                sends.spawn(async move {
                    // A turn's webhooks mostly share a few URLs: each is parsed and checked by
                    // the egress guard once a turn, not once a delivery (a plain client's
                    // request parses its URL too: 1–2 µs a delivery of CPU).
                    let mut checked: HashMap<&str, Result<Uri, String>> = HashMap::new();
                    let urls: Vec<_> = batch
                        .iter()
                        .map(|(delivery, ..)| {
                            let url = delivery
                                .webhook_url
                                .as_deref()
                                .filter(|_| delivery.destination == "webhook")?;
                            let check = || worker.egress.check_webhook_url(url);
                            Some(checked.entry(url).or_insert_with(check).clone())
                        })
                        .collect();
                    let mut attempts: FuturesUnordered<_> = batch
                        .into_iter()
                        .zip(urls)
                        .map(|((delivery, hold, share), url)| {
                            let (worker, slots, finished_tx, held_bytes) =
                                (&worker, &slots, &finished_tx, &held_bytes);
                            async move {
                                let account = delivery.account_id.clone();
                                let bytes = delivery.body.len();
                                let done = {
                                    // The account's share first: waiting for it holds no slot
                                    // another account could send in.
                                    let _share =
                                        share.acquire_owned().await.expect("an account's sends stay open");
                                    let _sending = slots.acquire().await.expect("the send slots stay open");
                                    worker.gauges.send_began(IN_FLIGHT - slots.available_permits());
                                    worker.attempt(delivery, url).await
                                };
                                held_bytes.fetch_sub(bytes, Ordering::Relaxed);
                                // Handed in before the hold ends, so a stop waits for it to be written.
                                let _ = finished_tx.send((account, done)).await;
                                drop(hold);
                            }
                        })
                        .collect();
                    while attempts.next().await.is_some() {}
                });
            } else {
                // Until a send finishes, new work may be due, or the stop.
                tokio::select! {
                    Some(done) = finished_rx.recv() => finished.push(done),
                    _ = tokio::time::sleep(POLL) => {}
                    _ = stop.changed(), if !stopping => {}
                }
            }
        }
        outbox.close().await;
    }

    /// `url`: a webhook's URL as the egress guard checked it (`None` for other destinations,
    /// or when the subscription has none).
    async fn attempt(&self, mut delivery: Claimed, url: Option<Result<Uri, String>>) -> Finished {
        let started = Instant::now();
        let at = ids::now_millis();
        let (outcome, status_code, excerpt, error) = self.send(&mut delivery, url).await;
        let number = delivery.attempts + 1;
        let mut attempt = Attempt {
            at,
            status_code,
            latency_ms: started.elapsed().as_millis() as i64,
            response_excerpt: excerpt,
            error,
            next_retry_at: None,
        };
        let status = match outcome {
            Outcome::Delivered => "delivered",
            Outcome::Gone => {
                // Boxed: a store write is a large future, and every delivery's would carry it.
                let disabling = Box::pin(self.records.disable_subscription(&delivery.subscription_id, at));
                if let Err(err) = disabling.await {
                    tracing::warn!(error = %err, "disabling a gone subscription failed");
                }
                "disabled"
            }
            Outcome::Retry { retry_after } => match self.schedule.next_delay(number, retry_after) {
                Some(delay) => {
                    attempt.next_retry_at = Some(at + delay.as_millis() as i64);
                    "pending"
                }
                None => "failed",
            },
        };
        Finished { delivery_id: delivery.id, row: delivery.row, number, attempt, status }
    }

    async fn send(&self, delivery: &mut Claimed, url: Option<Result<Uri, String>>) -> Answer {
        let tenant = Tenant {
            account_id: delivery.account_id.clone(),
            environment: Environment::parse(&delivery.environment).unwrap_or(Environment::Sandbox),
        };
        let result = match delivery.destination.as_str() {
            "webhook" => self.webhook(&tenant, delivery, url).await,
            // Boxed: every delivery's future is as large as the largest of these, and webhooks
            // are nearly all of them.
            "s3" => Box::pin(self.object(&tenant, delivery)).await,
            "google_drive" => Box::pin(self.drive(&tenant, delivery)).await,
            other => Err(format!("unknown destination {other:?}")),
        };
        match result {
            Ok(answer) => answer,
            Err(error) => (Outcome::Retry { retry_after: None }, None, None, Some(error)),
        }
    }

    /// Sends the body (taken from `delivery`: each attempt is claimed afresh) to `url`, its
    /// `webhookURL` as the egress guard checked it.
    async fn webhook(
        &self,
        tenant: &Tenant,
        delivery: &mut Claimed,
        url: Option<Result<Uri, String>>,
    ) -> Result<Answer, String> {
        let url = url.ok_or("the subscription has no webhookURL any more")??;
        let signer = self.secrets.signer(tenant).await?;
        let signature = match signer.is_empty() {
            true => None,
            false => {
                let signed = signer.sign(chrono::Utc::now().timestamp(), delivery.body.as_bytes());
                let value = HeaderValue::try_from(signed).map_err(|err| err.to_string())?;
                Some((HeaderName::from_static(signature::HEADER), value))
            }
        };
        let body = std::mem::take(&mut delivery.body);
        let webhooks = self.egress.webhooks();
        let answered =
            webhooks.post_json(url, "canon-webhooks", signature, body, TIMEOUT, EXCERPT_CHARS).await?;
        Ok(outcome(answered))
    }

    async fn object(&self, tenant: &Tenant, delivery: &Claimed) -> Result<Answer, String> {
        let bucket = delivery.s3_bucket.as_deref().ok_or("the subscription has no s3Bucket any more")?;
        let mut relative = objects::relative_folder(bucket)?;
        if let Some(path) = delivery.s3_file_path.as_deref().filter(|p| !p.trim().is_empty()) {
            relative.push(objects::relative_folder(path)?);
        }
        let key_path = relative.join(format!("{}.json", delivery.event_id));
        if let Some(endpoint) = self.secrets.reveal_if_present(tenant, S3_ENDPOINT_SECRET).await? {
            return self.put_s3(tenant, &endpoint, bucket, delivery).await;
        }
        let root = self.egress.policy().object_store_dir.clone();
        let home = PathBuf::from(&tenant.account_id).join(tenant.environment.as_str());
        let body = delivery.body.clone().into_bytes();
        let written = tokio::task::spawn_blocking(move || objects::write_new(&root, &home, &key_path, &body))
            .await
            .map_err(|err| err.to_string())?;
        match written {
            Ok(_) => Ok((Outcome::Delivered, None, None, None)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                Ok((Outcome::Delivered, None, None, None))
            }
            Err(err) => Err(format!("writing the object: {err}")),
        }
    }

    /// A SigV4-signed PUT of `<s3FilePath>/<eventID>.json` into `s3Bucket` at the tenant's
    /// S3-compatible endpoint (its secrets `s3-endpoint`, `s3-access-key-id`,
    /// `s3-secret-access-key`, optional `s3-region`).
    async fn put_s3(
        &self,
        tenant: &Tenant,
        endpoint: &str,
        bucket: &str,
        delivery: &Claimed,
    ) -> Result<Answer, String> {
        let key_id = self.secrets.reveal(tenant, "s3-access-key-id").await?;
        let secret = self.secrets.reveal(tenant, "s3-secret-access-key").await?;
        let region =
            self.secrets.reveal_if_present(tenant, "s3-region").await?.unwrap_or_else(|| "us-east-1".into());
        let prefix = delivery.s3_file_path.as_deref().map(|p| p.trim_matches('/')).filter(|p| !p.is_empty());
        let key = match prefix {
            Some(prefix) => format!("{prefix}/{}.json", delivery.event_id),
            None => format!("{}.json", delivery.event_id),
        };
        let target = sigv4::Target {
            endpoint,
            bucket,
            region: &region,
            access_key_id: &key_id,
            secret_access_key: &secret,
        };
        let (response, _) =
            sigv4::put_object(&self.egress, &target, &key, delivery.body.clone().into_bytes(), TIMEOUT)
                .await
                .map_err(|err| match err {
                    sigv4::PutError::Refused(reason) | sigv4::PutError::Failed(reason) => reason,
                })?;
        Ok(answer(response).await)
    }

    async fn drive(&self, tenant: &Tenant, delivery: &Claimed) -> Result<Answer, String> {
        let folder = delivery
            .google_drive_folder_id
            .as_deref()
            .ok_or("the subscription has no googleDriveFolderID")?;
        let token = self.secrets.reveal(tenant, DRIVE_TOKEN_SECRET).await?;
        let boundary = format!("canon-{}", ulid::Ulid::new());
        let metadata = serde_json::json!({
            "name": format!("{}.json", delivery.event_id), "parents": [folder], "mimeType": "application/json"
        });
        let body = format!(
            "--{boundary}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{metadata}\r\n\
             --{boundary}\r\ncontent-type: application/json\r\n\r\n{}\r\n--{boundary}--\r\n",
            delivery.body
        );
        let url = format!(
            "{}/upload/drive/v3/files?uploadType=multipart",
            self.drive_api_url.trim_end_matches('/')
        );
        let response = self
            .egress
            .request(Method::POST, &url)?
            .timeout(TIMEOUT)
            .bearer_auth(token)
            .header("content-type", format!("multipart/related; boundary={boundary}"))
            .body(body)
            .send()
            .await
            .map_err(|err| crate::egress::describe(&err))?;
        Ok(answer(response).await)
    }
}

/// Reads a destination's answer (S3's or Drive's) into an outcome, its status and an excerpt
/// of its body.
async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let retry_after = webhooks::retry_after(response.headers());
    // Only an excerpt is kept, so only a few KiB are read: a destination cannot make the
    // worker hold its body.
    let excerpt = crate::egress::reply::excerpt(response, EXCERPT_CHARS).await;
    outcome(DestinationAnswer { status, retry_after, excerpt })
}

/// An answer as the attempt's outcome, its status, excerpt and error.
fn outcome(answered: DestinationAnswer) -> Answer {
    let DestinationAnswer { status, retry_after, excerpt } = answered;
    let excerpt = Some(excerpt);
    let code = Some(i64::from(status.as_u16()));
    let outcome = if status.is_success() {
        Outcome::Delivered
    } else if status.as_u16() == 410 {
        Outcome::Gone
    } else if status.as_u16() == 429 {
        Outcome::Retry { retry_after }
    } else {
        Outcome::Retry { retry_after: None }
    };
    let error = (!status.is_success()).then(|| format!("the destination answered {status}"));
    (outcome, code, excerpt, error)
}
