//! FalkorDB as a child process: `redis-server --loadmodule falkordb.so`, started, supervised
//! (restarted if it dies) and stopped with its data saved, all under the data directory.
//! The child never outlives canon, even a `kill -9` of canon (see [`spawn_tied_to_canon`]).

use crate::config::Config;
use crate::provision;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{mpsc, Arc, OnceLock};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch, Mutex};

/// A running, supervised FalkorDB child.
pub struct EmbeddedFalkor {
    socket: PathBuf,
    child: Arc<Mutex<Option<Child>>>,
    stop_tx: watch::Sender<bool>,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

struct Launch {
    server: PathBuf,
    module: PathBuf,
    dir: PathBuf,
    socket: PathBuf,
}

impl EmbeddedFalkor {
    /// Starts FalkorDB with its files in `<data_dir>/falkordb` and waits until it answers.
    pub async fn start(config: &Config) -> anyhow::Result<Self> {
        let dir = absolute(&config.data_dir.join("falkordb"))?;
        std::fs::create_dir_all(&dir)?;
        let socket = dir.join("falkordb.sock");
        // Unix socket paths are limited to 107 bytes.
        anyhow::ensure!(
            socket.as_os_str().len() < 100,
            "data directory path too long for FalkorDB's socket: {}",
            socket.display()
        );
        let launch = Launch {
            server: provision::falkordb_server(config),
            module: absolute(&provision::falkordb_module(config))?,
            dir,
            socket: socket.clone(),
        };
        stop_stale_server(&launch.dir).await;
        let child = launch.spawn().await?;
        let child = Arc::new(Mutex::new(Some(child)));
        wait_ready(&socket, Duration::from_secs(20)).await?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let supervisor = tokio::spawn(supervise(launch, child.clone(), stop_rx));
        Ok(Self { socket, child, stop_tx, supervisor: Mutex::new(Some(supervisor)) })
    }

    /// The connection URL of the running child.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// The running child's process ID (a restart by the supervisor changes it).
    pub async fn pid(&self) -> Option<u32> {
        self.child.lock().await.as_ref().and_then(Child::id)
    }

    /// Stops the child after it saves its data (`SHUTDOWN SAVE`), then reaps it.
    pub async fn stop(&self) {
        let _ = self.stop_tx.send(true);
        if let Some(handle) = self.supervisor.lock().await.take() {
            let _ = handle.await;
        }
        let mut guard = self.child.lock().await;
        if let Some(mut child) = guard.take() {
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
    async fn spawn(&self) -> anyhow::Result<Child> {
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
            // Every write is appended to the AOF (fsync each second), and a snapshot is
            // written on shutdown: a crash loses at most a second, a stop loses nothing.
            .arg("--appendonly")
            .arg("yes")
            .arg("--appendfsync")
            .arg("everysec")
            .arg("--save")
            .arg("")
            .arg("--pidfile")
            .arg(self.dir.join("redis.pid"))
            .arg("--logfile")
            .arg(self.dir.join("falkordb.log"))
            .arg("--daemonize")
            .arg("no")
            .arg("--loadmodule")
            .arg(&self.module)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        spawn_tied_to_canon(command)
            .await
            .map_err(|err| anyhow::anyhow!("cannot start FalkorDB ({}): {err}", self.server.display()))
    }
}

/// A spawn request for the launcher thread: the command, the runtime that will reap the
/// child, and where to send it.
type SpawnRequest = (Command, tokio::runtime::Handle, oneshot::Sender<std::io::Result<Child>>);

/// Starts a child that dies with canon. On Linux the child asks the kernel for SIGTERM when
/// its parent dies (`PR_SET_PDEATHSIG`; SIGTERM, not SIGKILL, so Redis still flushes its
/// append-only file). That signal fires when the *thread* that forked the child ends, not
/// the process: forked from a tokio worker, the child would be stopped whenever that thread
/// is retired (a runtime shut down, a test's runtime ending while canon runs on). So every
/// spawn happens on one dedicated thread that never returns: the signal comes exactly when
/// canon itself dies, `kill -9` included. Elsewhere the next start stops a stale child
/// (`stop_stale_server`).
async fn spawn_tied_to_canon(mut command: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    die_with_canon(&mut command);
    let launcher = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        let thread = std::thread::Builder::new().name("falkordb-launcher".into()).spawn(move || {
            // Runs until the process ends: the static sender is never dropped.
            for (mut command, runtime, reply) in rx {
                let _runtime = runtime.enter();
                let _ = reply.send(command.spawn());
            }
        });
        if let Err(err) = thread {
            tracing::error!(error = %err, "cannot start the FalkorDB launcher thread");
        }
        tx
    });
    let gone = || std::io::Error::other("the FalkorDB launcher thread is gone");
    let (reply, answer) = oneshot::channel();
    launcher.send((command, tokio::runtime::Handle::current(), reply)).map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

#[cfg(target_os = "linux")]
fn die_with_canon(command: &mut Command) {
    let canon = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // canon may have died between fork and prctl; then no signal would ever come.
            if libc::getppid() != canon {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_canon(_command: &mut Command) {}

/// Restarts the child whenever it exits unexpectedly, until told to stop.
async fn supervise(launch: Launch, child: Arc<Mutex<Option<Child>>>, mut stop: watch::Receiver<bool>) {
    let mut backoff = Duration::from_millis(200);
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        let mut guard = child.lock().await;
        let exited = match guard.as_mut() {
            Some(running) => matches!(running.try_wait(), Ok(Some(_))),
            None => return,
        };
        if !exited {
            backoff = Duration::from_millis(200);
            continue;
        }
        tracing::error!("FalkorDB exited unexpectedly; restarting it");
        match launch.spawn().await {
            Ok(new_child) => {
                *guard = Some(new_child);
                drop(guard);
                if let Err(err) = wait_ready(&launch.socket, Duration::from_secs(20)).await {
                    tracing::error!(error = %err, "restarted FalkorDB is not ready");
                }
            }
            Err(err) => {
                drop(guard);
                tracing::error!(error = %err, "cannot restart FalkorDB");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// A FalkorDB left running by a canon that was killed would share our files: stop it first.
async fn stop_stale_server(dir: &Path) {
    let Ok(pid) = std::fs::read_to_string(dir.join("redis.pid")) else {
        return;
    };
    let Ok(pid) = pid.trim().parse::<i32>() else {
        return;
    };
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if !cmdline.contains("redis-server") {
        return;
    }
    tracing::warn!(pid, "stopping a FalkorDB left running by an earlier canon");
    // SAFETY: plain kill(2) on a pid we just verified is a redis-server using our directory.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    for _ in 0..100 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_ready(socket: &Path, within: Duration) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if ping(socket).await.is_ok() {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("FalkorDB did not answer on {} within {within:?}", socket.display());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends one inline RESP command and reads the first reply line.
async fn command(socket: &Path, line: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(socket).await?;
    stream.write_all(format!("{line}\r\n").as_bytes()).await?;
    let mut buf = [0u8; 256];
    let n = stream.read(&mut buf).await?;
    Ok(String::from_utf8_lossy(&buf[..n]).into_owned())
}

async fn ping(socket: &Path) -> std::io::Result<()> {
    let reply = command(socket, "PING").await?;
    if reply.starts_with("+PONG") {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("unexpected reply: {reply}")))
    }
}

async fn shutdown_save(socket: &Path) -> std::io::Result<()> {
    // A successful SHUTDOWN closes the connection without a reply.
    match command(socket, "SHUTDOWN SAVE").await {
        Ok(reply) if reply.starts_with('-') => Err(std::io::Error::other(reply)),
        _ => Ok(()),
    }
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(std::path::absolute(path)?)
}
