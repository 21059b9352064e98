//! The FalkorDB child as a process: spawned so that it dies with canon, stopped when a killed
//! canon left it running, aborted when hung, and watched for CPU (work) or none (a deadlock).

use std::path::Path;
use std::sync::{mpsc, OnceLock};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// CPU time a silent child must spend per second of waiting to count as busy, not stuck.
const BUSY_CPU_SHARE: f64 = 0.1;
/// How long an aborted child may take writing its crash report before it is killed.
const ABORT_LIMIT: Duration = Duration::from_secs(5);
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
pub(super) async fn spawn_tied_to_canon(mut command: Command) -> std::io::Result<Child> {
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

/// Ends a hung child: SIGABRT first, so Redis's crash handler logs every thread's stack (what
/// a deadlock report needs), then SIGKILL if it has not exited within [`ABORT_LIMIT`].
pub(super) async fn abort(child: &mut Child) {
    if let Some(pid) = child.id() {
        let pid = pid as libc::pid_t;
        // SAFETY: plain kill(2) on our own child, not yet reaped. SIGCONT wakes a stopped one.
        unsafe {
            libc::kill(pid, libc::SIGABRT);
            libc::kill(pid, libc::SIGCONT);
        }
        if tokio::time::timeout(ABORT_LIMIT, child.wait()).await.is_ok() {
            return;
        }
    }
    let _ = child.kill().await;
}

/// A FalkorDB left running by a canon that was killed would share our files: stop it first.
pub(super) async fn stop_stale_server(dir: &Path) {
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
        if !running(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether process `pid` still runs. A FalkorDB whose canon was killed is an orphan: once it
/// exits it stays a zombie until init reaps it, which some inits do only every few seconds
/// (2 s seen here) or never. A zombie has let go of its files and socket, so it counts as gone:
/// waiting for it to leave `/proc` delayed every start after a crash by that long.
pub(super) fn running(pid: i32) -> bool {
    let state = stat_fields(pid).and_then(|fields| fields.into_iter().next());
    !matches!(state.as_deref(), Some("Z" | "X") | None)
}

/// The fields of `/proc/<pid>/stat` after `pid (comm)`, the state first (proc(5)); the command
/// may hold spaces and parentheses, so they start after its last `)`. `None` once it is gone.
fn stat_fields(pid: impl std::fmt::Display) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect())
}

/// Tells a child that works from one that waits: its CPU time, sampled about once a second.
pub(super) struct CpuWatch {
    pid: Option<u32>,
    last: Option<(tokio::time::Instant, f64)>,
    busy: bool,
}

impl CpuWatch {
    pub(super) fn new(pid: Option<u32>) -> Self {
        let last = pid.and_then(cpu_seconds).map(|cpu| (tokio::time::Instant::now(), cpu));
        Self { pid, last, busy: false }
    }

    /// Whether the child spent at least [`BUSY_CPU_SHARE`] of the last sampled interval on CPU.
    pub(super) fn busy(&mut self) -> bool {
        let (Some(pid), Some((at, cpu))) = (self.pid, self.last) else { return false };
        if at.elapsed() < Duration::from_secs(1) {
            return self.busy;
        }
        let Some(now) = cpu_seconds(pid) else { return false };
        self.busy = now - cpu >= BUSY_CPU_SHARE * at.elapsed().as_secs_f64();
        self.last = Some((tokio::time::Instant::now(), now));
        self.busy
    }
}

/// CPU time (user + system) a process has used, in seconds; `None` once it is gone.
fn cpu_seconds(pid: u32) -> Option<f64> {
    // After `pid (comm)`: state is the 1st field, utime the 12th, stime the 13th (proc(5)).
    let fields = stat_fields(pid)?;
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| ticks as f64 / per_second as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_counts_as_stopped_and_a_live_process_as_running() {
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        let (live, zombie) = (sleeper.id() as i32, exited.id() as i32);
        // Not reaped yet: `true` stays a zombie in /proc until the wait below.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(format!("/proc/{zombie}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
            assert!(std::time::Instant::now() < deadline, "`true` exits");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(Path::new(&format!("/proc/{zombie}")).exists(), "the zombie is still in /proc");
        assert!(!running(zombie), "a zombie is not running");
        assert!(running(live), "a sleeping process is running");
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        exited.wait().unwrap();
        assert!(!running(zombie), "a reaped process is not running");
    }
}
