//! FalkorDB as a child process: `redis-server --loadmodule falkordb.so`, started, supervised
//! (restarted if it dies) and stopped with its data saved, all under the data directory.
//! The child never outlives canon, even a `kill -9` of canon (see [`spawn_tied_to_canon`](process::spawn_tied_to_canon)).
//!
//! Start time: Redis loads the append-only file at start, and replaying written Cypher is
//! slow (13.6 s for 5,000 entities once). So the file is kept compact: on stop it is rewritten
//! into one snapshot (an RDB preamble, loaded by decoding, not by running queries), and while
//! running the supervisor has it rewritten whenever the queries written since the last
//! snapshot pass about 1 MiB (`replay_bound`) — a crash replays about that (well under a
//! second with the indexes built first; writes made while a rewrite runs come on top). At
//! canon's start after a clean stop, indexes are rebuilt after loading, in the background
//! (`DELAY_INDEXING`; writes wait for them, see `index_build`); with queries to replay, or
//! when the supervisor relaunches a child, they are built first. Loading a large graph still
//! takes time, so readiness waits as long as the child reports it is loading or, silent,
//! spends CPU (building indexes first after a crash: minutes at a million entities, and a
//! fixed limit made every restart fail the same way), and gives up only when it answers
//! nothing and sleeps, as a deadlocked child does ([`wait_ready`]).
//!
//! FalkorDB 4.16 can deadlock while loading a snapshot (seen once in CI: the main thread
//! waits forever on its graph registry lock after decoding the graph; the same files loaded
//! fine six times after). Such a child accepts connections and never answers, so every
//! readiness command has its own time limit, and a child that does not become ready is
//! killed and started again, up to [`LAUNCH_ATTEMPTS`] times; loading does not change its
//! files, so a second start loses nothing.
//!
//! A running child can deadlock too (seen in CI: a fresh child answered PING, then left the
//! first connection and every later one unanswered for 90 s; FalkorDB's tracker has open
//! reports of the same, GIL against the graph's write lock). So the supervisor PINGs the child
//! twice a second, and one that gives no answer at all for `CANON_FALKORDB_HUNG_SECONDS` is
//! aborted (SIGABRT: Redis writes every thread's stack to its log first) and started again
//! from its files. Nothing acknowledged is lost: Redis appends a write to the file before it
//! answers, and a killed process's written pages survive. A busy child still answers PING
//! (queries run on FalkorDB's own threads; loading answers `-LOADING`).

mod process;

use super::falkordb::RESPONSE_TIMEOUT;
use super::resp::{command, command_within, info_field};
use super::writes_in_flight::WritesInFlight;
use crate::provision;
use process::{abort, spawn_tied_to_canon, stop_stale_server, CpuWatch};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::{watch, Mutex};

/// Starts of a child that does not become ready before canon gives up.
const LAUNCH_ATTEMPTS: u32 = 3;
/// Redis's own rewrite threshold for the queries appended since the last snapshot: a backstop
/// (the supervisor asks for rewrites much sooner, see `replay_bound`).
const AOF_REWRITE_MIN_SIZE: &str = "8mb";
/// How long a stop waits for the append-only file's rewrite.
const REWRITE_LIMIT: Duration = Duration::from_secs(120);
/// How often the supervisor checks that the child is alive and answering.
const CHECK_EVERY: Duration = Duration::from_millis(500);
/// FalkorDB's log past this size is rotated (one older file kept: at most twice this).
const LOG_LIMIT: u64 = 8 * 1024 * 1024;
/// How long `SHUTDOWN SAVE` may take to answer before the stop just waits for the exit.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// A running, supervised FalkorDB child.
pub struct EmbeddedFalkor {
    socket: PathBuf,
    child: Arc<Mutex<Option<Child>>>,
    stop_tx: watch::Sender<bool>,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// canon's writes waiting for the child: silence while one runs is not a hang.
    writes: Arc<WritesInFlight>,
}

struct Launch {
    server: PathBuf,
    module: PathBuf,
    dir: PathBuf,
    socket: PathBuf,
    /// How long a running child may leave PING unanswered before it counts as hung.
    hung_limit: Duration,
}

/// What the embedded FalkorDB takes from the configuration (the store reads no `Config`:
/// that names the services' settings, and storage sits below the services).
pub struct EmbeddedSettings {
    /// Its files go to `<data_dir>/falkordb`.
    pub data_dir: PathBuf,
    /// Where `make provision` put redis-server and falkordb.so.
    pub vendor_dir: PathBuf,
    /// Seconds a running child may leave PING unanswered before it counts as hung.
    pub hung_seconds: f64,
}

impl EmbeddedFalkor {
    /// Starts FalkorDB with its files in `<data_dir>/falkordb` and waits until it answers.
    pub async fn start(settings: &EmbeddedSettings) -> anyhow::Result<Self> {
        let dir = absolute(&settings.data_dir.join("falkordb"))?;
        std::fs::create_dir_all(&dir)?;
        let socket = dir.join("falkordb.sock");
        // Unix socket paths are limited to 107 bytes.
        anyhow::ensure!(
            socket.as_os_str().len() < 100,
            "data directory path too long for FalkorDB's socket: {}",
            socket.display()
        );
        let launch = Launch {
            server: provision::falkordb_server(&settings.vendor_dir),
            module: absolute(&provision::falkordb_module(&settings.vendor_dir))?,
            dir,
            socket: socket.clone(),
            // At least a second (the setting is bounded when parsed; MAX guards one set in code).
            hung_limit: Duration::try_from_secs_f64(settings.hung_seconds.max(1.0)).unwrap_or(Duration::MAX),
        };
        stop_stale_server(&launch.dir).await;
        let child = Arc::new(Mutex::new(Some(launch.spawn_ready(true).await?)));
        let (stop_tx, stop_rx) = watch::channel(false);
        let writes = Arc::new(WritesInFlight::default());
        let supervisor = tokio::spawn(supervise(launch, child.clone(), stop_rx, writes.clone()));
        Ok(Self { socket, child, stop_tx, supervisor: Mutex::new(Some(supervisor)), writes })
    }

    /// Where the engine talking to this child registers its writes.
    pub fn writes(&self) -> Arc<WritesInFlight> {
        self.writes.clone()
    }

    /// The connection URL of the running child.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// The running child's process ID (a restart by the supervisor changes it).
    pub async fn pid(&self) -> Option<u32> {
        self.child.lock().await.as_ref().and_then(Child::id)
    }

    /// Stops the child after it rewrites its append-only file into one snapshot (so the next
    /// start decodes instead of replaying) and saves its data (`SHUTDOWN SAVE`), then reaps it.
    pub async fn stop(&self) {
        let _ = self.stop_tx.send(true);
        if let Some(handle) = self.supervisor.lock().await.take() {
            let _ = handle.await;
        }
        let mut guard = self.child.lock().await;
        if let Some(mut child) = guard.take() {
            if let Err(err) = compact_aof(&self.socket).await {
                tracing::warn!(error = %err, "FalkorDB's append-only file was not rewritten; the next start replays it");
            }
            if let Err(err) = shutdown_save(&self.socket).await {
                tracing::warn!(error = %err, "FalkorDB did not accept SHUTDOWN SAVE; terminating it");
                let _ = child.start_kill();
            }
            match tokio::time::timeout(Duration::from_secs(30), child.wait()).await {
                Ok(_) => tracing::info!("FalkorDB stopped with its data saved"),
                Err(_) => {
                    tracing::error!("FalkorDB did not stop in 30 s; killing it");
                    let _ = child.kill().await;
                }
            }
        }
    }
}

impl Launch {
    /// Starts the child and waits until it answers, killing and restarting one that does not.
    /// `background_indexing`: whether the child may answer before its indexes are rebuilt
    /// (canon's own start, where the graph engine follows the build and holds writes until
    /// it ends; see `index_build`). A relaunch of a child that died while canon runs builds
    /// them first: nothing would hold the writes meanwhile.
    async fn spawn_ready(&self, background_indexing: bool) -> anyhow::Result<Child> {
        let mut attempt = 1;
        loop {
            let mut child = self.spawn(background_indexing).await?;
            match wait_ready(&self.socket, child.id(), self.hung_limit).await {
                Ok(()) => return Ok(child),
                Err(err) if attempt < LAUNCH_ATTEMPTS => {
                    tracing::warn!(error = %err, attempt, "FalkorDB did not become ready; starting it again");
                    abort(&mut child).await;
                    attempt += 1;
                }
                Err(err) => {
                    abort(&mut child).await;
                    return Err(err.context(format!("FalkorDB was started {attempt} times")));
                }
            }
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.join("falkordb.log")
    }

    async fn spawn(&self, background_indexing: bool) -> anyhow::Result<Child> {
        // A fresh directory has nothing to load, so nothing to index later.
        let delay_indexing =
            background_indexing && self.dir.join("appendonlydir").exists() && !queries_to_replay(&self.dir);
        let mut command = Command::new(&self.server);
        command
            .arg("--port")
            .arg("0")
            .arg("--unixsocket")
            .arg(&self.socket)
            .arg("--unixsocketperm")
            .arg("700")
            .arg("--dir")
            .arg(&self.dir)
            .arg("--dbfilename")
            .arg("graph.rdb")
            // Every write is appended to the AOF and synced before FalkorDB replies, and a
            // snapshot is written on shutdown: an acknowledged write survives a crash of
            // FalkorDB, of canon or of the machine. With `everysec`, Redis postpones its write
            // of the AOF while the last second's sync is still running (a busy disk) and
            // replies meanwhile: a `kill -9` of the child lost the last 50 acknowledged
            // entities of 5,000 (tests/api/backend_stalls.rs, builds writing to the disk).
            .arg("--appendonly")
            .arg("yes")
            .arg("--appendfsync")
            .arg("always")
            .arg("--auto-aof-rewrite-percentage")
            .arg("100")
            .arg("--auto-aof-rewrite-min-size")
            .arg(AOF_REWRITE_MIN_SIZE)
            .arg("--save")
            .arg("")
            .arg("--pidfile")
            .arg(self.dir.join("redis.pid"))
            .arg("--logfile")
            .arg(self.log())
            .arg("--daemonize")
            .arg("no")
            // A crash report's memory test can take minutes on a large heap; its stacks are
            // what a hang or crash needs.
            .arg("--crash-memcheck-enabled")
            .arg("no")
            .arg("--loadmodule")
            .arg(&self.module)
            // At canon's start after a clean stop, indexes are built after loading, in the
            // background (see `index_build`): the graph answers once decoded instead of after
            // every index is rebuilt. Queries left to replay (a crash) would run without
            // indexes, scanning per row, so then the indexes are built first, as FalkorDB does
            // by default; so are they when the supervisor relaunches a child.
            .args(["DELAY_INDEXING", if delay_indexing { "yes" } else { "no" }])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        // What the child prints outside its log (a module's messages, a failure before the
        // log opens) goes to the same file: Redis appends and reopens it per line, so the
        // lines interleave and a rotation (see `rotate_log`) takes the file away from neither.
        let log = self.log();
        rotate_log(&log);
        match std::fs::OpenOptions::new().create(true).append(true).open(&log) {
            Ok(file) => {
                let copy = file.try_clone()?;
                command.stdout(file).stderr(copy);
            }
            Err(err) => {
                tracing::warn!(error = %err, log = %log.display(), "cannot open FalkorDB's log for its output");
                command.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        spawn_tied_to_canon(command)
            .await
            .map_err(|err| anyhow::anyhow!("cannot start FalkorDB ({}): {err}", self.server.display()))
    }
}

/// Restarts the child whenever it exits unexpectedly or stops answering, until told to stop.
async fn supervise(
    launch: Launch,
    child: Arc<Mutex<Option<Child>>>,
    mut stop: watch::Receiver<bool>,
    writes: Arc<WritesInFlight>,
) {
    let mut backoff = Duration::from_millis(200);
    let mut answered = tokio::time::Instant::now();
    // The silence (by when it began) already said to be a write's, so it is said once.
    let mut excused_silence = None;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(CHECK_EVERY) => {}
        }
        // Any reply is life: `-LOADING` and errors come from the same main thread as PONG.
        if command(&launch.socket, "PING").await.is_ok_and(|reply| !reply.is_empty()) {
            answered = tokio::time::Instant::now();
            super::replay_bound::bound_replay(&launch.socket).await;
        }
        rotate_log(&launch.log());
        let mut guard = child.lock().await;
        let Some(running) = guard.as_mut() else { return };
        let pid = running.id();
        if let Ok(Some(status)) = running.try_wait() {
            // The status says how: a signal (9: killed, maybe by the OOM killer; 6: aborted;
            // 11: crashed, its stack in falkordb.log) or an exit code.
            tracing::error!(?pid, %status, log = %launch.log().display(), "FalkorDB exited unexpectedly; restarting it");
        } else if answered.elapsed() >= launch.hung_limit
            && writes.excuse_silence_since(answered, RESPONSE_TIMEOUT)
        {
            if excused_silence.replace(answered) != Some(answered) {
                tracing::warn!(unanswered = ?answered.elapsed(), "FalkorDB is silent while a write of canon's runs; waiting for it");
            }
            continue;
        } else if answered.elapsed() >= launch.hung_limit {
            tracing::error!(
                ?pid,
                unanswered = ?answered.elapsed(),
                "FalkorDB stopped answering (hung); aborting it (its log gets every thread's stack) and restarting it"
            );
            abort(running).await;
            if let Ok(Some(status)) = running.try_wait() {
                tracing::warn!(?pid, %status, "the hung FalkorDB ended");
            }
        } else {
            backoff = Duration::from_millis(200);
            continue;
        }
        let restarting = tokio::time::Instant::now();
        match launch.spawn_ready(false).await {
            Ok(new_child) => {
                tracing::warn!(pid = ?new_child.id(), took = ?restarting.elapsed(), "FalkorDB restarted and answering");
                *guard = Some(new_child);
                answered = tokio::time::Instant::now();
            }
            Err(err) => {
                drop(guard);
                tracing::error!(error = %err, retry_in = ?backoff, "cannot restart FalkorDB");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// Keeps FalkorDB's log bounded: past [`LOG_LIMIT`] it becomes `falkordb.log.1` (replacing
/// the older one) and Redis starts a new file at its next line.
fn rotate_log(log: &Path) {
    if std::fs::metadata(log).is_ok_and(|meta| meta.len() > LOG_LIMIT) {
        let mut older = log.as_os_str().to_owned();
        older.push(".1");
        if let Err(err) = std::fs::rename(log, &older) {
            tracing::warn!(error = %err, "cannot rotate FalkorDB's log");
        }
    }
}

/// Whether the append-only file holds queries after its snapshot (a crash, or a rewrite that
/// did not finish): any non-empty incremental file.
fn queries_to_replay(dir: &Path) -> bool {
    let Ok(files) = std::fs::read_dir(dir.join("appendonlydir")) else {
        return false;
    };
    files.filter_map(Result::ok).any(|file| {
        file.file_name().to_string_lossy().ends_with(".incr.aof")
            && file.metadata().map(|m| m.len() > 0).unwrap_or(true)
    })
}

/// Waits until the child answers PING. While it answers `-LOADING` (decoding its files) or
/// gives no answer but spends CPU (building its indexes before it answers, which takes
/// minutes at a million entities after a crash) it is making progress and canon waits on,
/// logging how far it got; `unanswered` bounds only the time it answers nothing and spends
/// no CPU, which is what a deadlocked child does (its threads sleep on a lock).
async fn wait_ready(socket: &Path, pid: Option<u32>, unanswered: Duration) -> anyhow::Result<()> {
    let mut deadline = tokio::time::Instant::now() + unanswered;
    let mut next_report = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut cpu = CpuWatch::new(pid);
    loop {
        match command(socket, "PING").await {
            Ok(reply) if reply.starts_with("+PONG") => return Ok(()),
            Ok(reply) if reply.starts_with("-LOADING") => {
                deadline = tokio::time::Instant::now() + unanswered;
                if tokio::time::Instant::now() >= next_report {
                    let info = command(socket, "INFO persistence").await.unwrap_or_default();
                    let done = info_field(&info, "loading_loaded_perc").unwrap_or("?").to_string();
                    tracing::info!(percent = %done, "FalkorDB is loading its data");
                    next_report = tokio::time::Instant::now() + Duration::from_secs(5);
                }
            }
            Ok(_) | Err(_) => {
                if cpu.busy() {
                    deadline = tokio::time::Instant::now() + unanswered;
                    if tokio::time::Instant::now() >= next_report {
                        tracing::info!("FalkorDB is busy (building its indexes) and does not answer yet");
                        next_report = tokio::time::Instant::now() + Duration::from_secs(5);
                    }
                }
            }
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("FalkorDB did not answer on {} within {unanswered:?}", socket.display());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Rewrites the append-only file into one snapshot and waits for the rewrite to finish.
async fn compact_aof(socket: &Path) -> std::io::Result<()> {
    // A rewrite the supervisor asked for (replay_bound) may still run: Redis refuses a second
    // one meanwhile, and the queries written during the first would be left to replay.
    rewrite_settled(socket).await?;
    let reply = command(socket, "BGREWRITEAOF").await?;
    if reply.starts_with('-') {
        return Err(std::io::Error::other(reply.trim().to_string()));
    }
    let info = rewrite_settled(socket).await?;
    match info_field(&info, "aof_last_bgrewrite_status") {
        Some("ok") => Ok(()),
        other => Err(std::io::Error::other(format!("rewrite status {other:?}"))),
    }
}

/// Waits until the FalkorDB at `socket` has no append-only-file rewrite running or scheduled
/// (at most [`REWRITE_LIMIT`]), and returns its last `INFO persistence`.
pub async fn rewrite_settled(socket: &Path) -> std::io::Result<String> {
    let deadline = tokio::time::Instant::now() + REWRITE_LIMIT;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let info = command(socket, "INFO persistence").await?;
        let busy = |field| info_field(&info, field) != Some("0");
        if !busy("aof_rewrite_in_progress") && !busy("aof_rewrite_scheduled") {
            return Ok(info);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(std::io::Error::other(format!("rewrite still running after {REWRITE_LIMIT:?}")));
        }
    }
}

async fn shutdown_save(socket: &Path) -> std::io::Result<()> {
    // A successful SHUTDOWN closes the connection without a reply; a save still running after
    // the limit is left to finish (the stop then waits for the exit).
    match command_within(socket, "SHUTDOWN SAVE", SHUTDOWN_LIMIT).await {
        Ok(reply) if reply.starts_with('-') => Err(std::io::Error::other(reply)),
        _ => Ok(()),
    }
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(std::path::absolute(path)?)
}

#[cfg(test)]
mod tests {
    use super::super::resp::REPLY_LIMIT;
    use super::*;

    #[test]
    fn only_a_non_empty_incremental_file_means_queries_to_replay() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!queries_to_replay(dir.path()), "no files yet");
        let aof = dir.path().join("appendonlydir");
        std::fs::create_dir(&aof).unwrap();
        std::fs::write(aof.join("appendonly.aof.3.base.rdb"), b"REDIS0011").unwrap();
        std::fs::write(aof.join("appendonly.aof.3.incr.aof"), b"").unwrap();
        assert!(!queries_to_replay(dir.path()), "a clean stop leaves the incremental file empty");
        std::fs::write(aof.join("appendonly.aof.3.incr.aof"), b"*3\r\n$11\r\nGRAPH.QUERY\r\n").unwrap();
        assert!(queries_to_replay(dir.path()));
    }

    /// A child that answers "loading" for longer than the unanswered limit is waited for:
    /// loading is progress (a large graph takes longer than any fixed limit).
    #[tokio::test]
    async fn readiness_waits_through_loading_longer_than_the_unanswered_limit() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        let ready_at = tokio::time::Instant::now() + Duration::from_millis(600);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 64];
                let _ = stream.read(&mut buf).await;
                let reply: &[u8] = if tokio::time::Instant::now() < ready_at {
                    b"-LOADING Redis is loading the dataset in memory\r\n"
                } else {
                    b"+PONG\r\n"
                };
                let _ = stream.write_all(reply).await;
            }
        });
        wait_ready(&socket, None, Duration::from_millis(200)).await.expect("ready after loading");
        assert!(tokio::time::Instant::now() >= ready_at);
    }

    /// A child stuck while loading accepts connections and never replies: readiness must
    /// not wait on that reply forever.
    #[tokio::test]
    async fn readiness_gives_up_on_a_child_that_accepts_and_never_replies() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let waited = tokio::time::Instant::now();
        let error = wait_ready(&socket, None, Duration::from_millis(200)).await.unwrap_err();
        assert!(error.to_string().contains("did not answer"), "{error}");
        assert!(waited.elapsed() < REPLY_LIMIT * 3, "gave up after {:?}", waited.elapsed());
    }

    #[tokio::test]
    async fn readiness_gives_up_on_a_child_that_never_answers() {
        let dir = tempfile::tempdir().unwrap();
        let error =
            wait_ready(&dir.path().join("none.sock"), None, Duration::from_millis(200)).await.unwrap_err();
        assert!(error.to_string().contains("did not answer"), "{error}");
    }

    /// A socket that closes each connection unanswered until `ready_at`, then answers PONG.
    fn silent_until(socket: &Path, ready_at: tokio::time::Instant) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::UnixListener::bind(socket).unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                if tokio::time::Instant::now() >= ready_at {
                    let mut buf = [0u8; 64];
                    let _ = stream.read(&mut buf).await;
                    let _ = stream.write_all(b"+PONG\r\n").await;
                }
            }
        });
    }

    /// A child that answers nothing while it builds its indexes (after a crash, before it
    /// answers) is waited for as long as it spends CPU; one that answers nothing and sleeps
    /// (a deadlock) is given up on after the limit.
    #[tokio::test]
    async fn readiness_waits_for_a_silent_child_only_while_it_spends_cpu() {
        let dir = tempfile::tempdir().unwrap();
        let limit = Duration::from_millis(1_200);

        let busy = dir.path().join("busy.sock");
        let ready_at = tokio::time::Instant::now() + Duration::from_millis(3_000);
        silent_until(&busy, ready_at);
        let mut spinner =
            std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let waited = wait_ready(&busy, Some(spinner.id()), limit).await;
        spinner.kill().unwrap();
        spinner.wait().unwrap();
        waited.expect("a busy child is waited for past the limit");
        assert!(tokio::time::Instant::now() >= ready_at);

        let stuck = dir.path().join("stuck.sock");
        silent_until(&stuck, tokio::time::Instant::now() + Duration::from_secs(60));
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let started = tokio::time::Instant::now();
        let error = wait_ready(&stuck, Some(sleeper.id()), limit).await.unwrap_err();
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        assert!(error.to_string().contains("did not answer"), "{error}");
        assert!(started.elapsed() < limit * 3, "gave up after {:?}", started.elapsed());
    }
}
