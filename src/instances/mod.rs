//! Instances: several canons may serve one record store and one graph (PostgreSQL with Neo4j
//! or an external FalkorDB). Each records itself in the record store and beats every
//! [`HEARTBEAT`]; one whose beat is older than [`LIVE_FOR`] is taken for dead.
//!
//! What is shared and what is per instance: records, the graph, jobs, deliveries and
//! subscriptions are read from the shared stores on each use (a changed subscription
//! applies to the next delivery of any instance); the API-key cache and rate limits are per
//! instance (a revoked key stops working everywhere within the key cache's 1 s, and each
//! instance allows its own burst). The embedded vector store (Qdrant Edge) lives in one
//! process's data folder, so it cannot be shared: an instance using it refuses to start
//! beside a live instance, and an instance refuses to start beside a live one that uses it,
//! naming `CANON_QDRANT_URL`.
//!
//! A process that died leaves its row behind: on the same machine a row whose process no
//! longer exists is dead at once (so a restart after a crash is not refused), elsewhere
//! after [`LIVE_FOR`].

use crate::ids;
use crate::store::records::instances::InstanceRow;
use crate::store::records::{RecordError, Records};
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

/// How often a live instance says so.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// How long after its last beat an instance counts as live (three missed beats).
pub const LIVE_FOR: Duration = Duration::from_secs(20);

/// IDs of the instances this process runs now (tests run several in one process, and one
/// process may start again on the same data after an instance stopped).
static LOCAL: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Errors of registering an instance.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("{0}")]
    VectorStoreNotShared(String),
    #[error(transparent)]
    Records(#[from] RecordError),
}

/// Where an instance keeps its collections' vectors.
#[derive(Clone, Debug)]
pub enum VectorStoreKind {
    /// Qdrant Edge in this folder: one process only.
    Embedded(std::path::PathBuf),
    /// A Qdrant server, shareable.
    Server(String),
}

impl VectorStoreKind {
    fn describe(&self) -> String {
        match self {
            Self::Embedded(folder) => format!("embedded:{}", folder.display()),
            Self::Server(url) => format!("qdrant:{url}"),
        }
    }
}

/// This instance's row and its heartbeat; dropping it stops the heartbeat.
pub struct Registration {
    pub id: String,
    /// No other live instance served the record store when this one started.
    pub alone: bool,
    records: Records,
    beat: tokio::task::JoinHandle<()>,
}

impl Registration {
    /// Records this instance, unless its vector store cannot live beside the live instances
    /// (`unshared_allowed`: see `Config::unshared_vectors_beside_others`).
    pub async fn start(
        records: &Records,
        vectors: &VectorStoreKind,
        unshared_allowed: bool,
    ) -> Result<Self, InstanceError> {
        let now = ids::now_millis();
        let row = InstanceRow {
            id: format!("inst_{}", ulid::Ulid::new()),
            host: this_host(),
            pid: i64::from(std::process::id()),
            vectors: vectors.describe(),
            started_at: now,
            heartbeat_at: now,
        };
        // Recorded before looking, so two instances starting together see each other.
        records.register_instance(&row).await?;
        local(|ids| ids.insert(row.id.clone()));
        let others = live_others(records, &row).await?;
        let embedded = |r: &InstanceRow| r.vectors.starts_with("embedded:");
        let clash = match vectors {
            VectorStoreKind::Embedded(_) => others.first(),
            VectorStoreKind::Server(_) => others.iter().find(|r| embedded(r)),
        };
        if let Some(other) = clash.filter(|_| !unshared_allowed) {
            forget(records, &row.id).await;
            return Err(InstanceError::VectorStoreNotShared(refusal(other, now)));
        }
        let beat = tokio::spawn(beat(records.clone(), row.id.clone()));
        Ok(Self { id: row.id, alone: others.is_empty(), records: records.clone(), beat })
    }

    /// Removes this instance's row (a clean stop).
    pub async fn stop(self) {
        self.beat.abort();
        forget(&self.records, &self.id).await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // An instance dropped without `stop` (a crash, in tests) is dead to this process.
        self.beat.abort();
        local(|ids| ids.remove(&self.id));
    }
}

async fn forget(records: &Records, id: &str) {
    local(|ids| ids.remove(id));
    if let Err(err) = records.remove_instance(id).await {
        tracing::warn!(error = %err, instance = id, "could not remove this instance's record");
    }
}

async fn beat(records: Records, id: String) {
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        if let Err(err) = records.beat_instance(&id, ids::now_millis()).await {
            tracing::warn!(error = %err, instance = %id, "instance heartbeat failed; retrying");
        }
    }
}

/// The other instances that are live now; rows of dead processes of this machine are removed.
async fn live_others(records: &Records, me: &InstanceRow) -> Result<Vec<InstanceRow>, RecordError> {
    let since = me.heartbeat_at - LIVE_FOR.as_millis() as i64;
    let mut live = Vec::new();
    for row in records.instances_beating_since(since).await? {
        if row.id == me.id {
            continue;
        }
        if row.host == me.host && !process_runs(&row, me.pid) {
            tracing::info!(instance = %row.id, pid = row.pid, "forgetting an instance whose process is gone");
            records.remove_instance(&row.id).await?;
            continue;
        }
        live.push(row);
    }
    Ok(live)
}

/// Whether the instance of a row of this machine still runs.
fn process_runs(row: &InstanceRow, my_pid: i64) -> bool {
    if row.pid == my_pid {
        return local(|ids| ids.contains(&row.id));
    }
    let Ok(pid) = libc::pid_t::try_from(row.pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks that the process exists without touching it (EPERM: it exists).
    // SAFETY: kill with signal 0 sends nothing.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn refusal(other: &InstanceRow, now: i64) -> String {
    let ago = (now - other.heartbeat_at).max(0) as f64 / 1000.0;
    format!(
        "another canon instance is live on this record store (instance {}, pid {} on {}, last \
         heartbeat {ago:.1} s ago, vectors {}); the embedded vector store (Qdrant Edge) lives in \
         one process's data folder, so two instances would search different vectors. Give every \
         instance CANON_QDRANT_URL (one Qdrant server they share), or stop the other instance",
        other.id, other.pid, other.host, other.vectors
    )
}

/// This machine: its host name and boot ID (a PID means something only within one boot).
pub fn this_host() -> String {
    let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default();
    format!("{}/{}", read("/proc/sys/kernel/hostname"), read("/proc/sys/kernel/random/boot_id"))
}

fn local<T>(f: impl FnOnce(&mut HashSet<String>) -> T) -> T {
    let mut guard = LOCAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f(guard.get_or_insert_with(HashSet::new))
}
