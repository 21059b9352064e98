//! The external programs decoding runs: `pdftotext` and `pdftoppm` (Debian's poppler-utils)
//! and `tesseract` (tesseract-ocr, with tesseract-ocr-eng). `scripts/provision.sh` installs
//! them. Input and output go through files in a folder of this request's own (mode 0700 under
//! `std::env::temp_dir()`, removed after use; no pipe to fill up). A tool is a child process
//! that can blow up on a crafted file, so it runs under rlimits set in the child before it
//! starts (address space, CPU time, size of a file it writes, no core dump), is killed past a
//! wall-clock timeout, and its output is read only up to a bound: a tool past a limit fails
//! this file, never the server.

use super::limits::exceeded;
use super::EngineError;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PDF_TIMEOUT: Duration = Duration::from_secs(60);
const OCR_TIMEOUT: Duration = Duration::from_secs(120);
/// Address space of a tool (RLIMIT_AS).
pub const TOOL_MEMORY: u64 = 1024 * 1024 * 1024;
/// CPU time of a tool (RLIMIT_CPU); past it the kernel stops it with SIGXCPU.
pub const TOOL_CPU_SECONDS: u64 = 60;
/// Largest file a tool may write (RLIMIT_FSIZE): a rendered page, the text layer.
pub const TOOL_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Text read back from a tool.
pub const TOOL_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;
/// Pages of a scanned PDF rendered for OCR (each is a pdftoppm page and a tesseract run).
pub const MAX_OCR_PAGES: u32 = 50;

/// The text layer of a PDF, in layout mode; pages end with a form feed.
pub fn pdf_text(bytes: &[u8]) -> Result<String, EngineError> {
    let folder = Folder::new()?;
    let input = folder.write("input.pdf", bytes)?;
    let output = folder.0.join("output.txt");
    let mut command = Command::new("pdftotext");
    command.args(["-layout", "-enc", "UTF-8"]).arg(&input).arg(&output);
    run(command, &folder, None, PDF_TIMEOUT, "pdftotext", "poppler-utils")?;
    read(&output, "pdftotext")
}

/// Each page of a PDF (the first [`MAX_OCR_PAGES`]) rendered as a PNG at `dpi` and given to
/// `each` in page order, one page in memory at a time (for OCR of scanned PDFs).
pub fn pdf_pages<T>(
    bytes: &[u8],
    dpi: u32,
    mut each: impl FnMut(&[u8]) -> Result<T, EngineError>,
) -> Result<Vec<T>, EngineError> {
    let folder = Folder::new()?;
    let input = folder.write("input.pdf", bytes)?;
    let pages = folder.0.join("pages");
    std::fs::create_dir(&pages)
        .map_err(|err| EngineError::decoding(format!("creating a temporary folder: {err}")))?;
    let mut command = Command::new("pdftoppm");
    command
        .args(["-r", &dpi.to_string(), "-png", "-l", &MAX_OCR_PAGES.to_string()])
        .arg(&input)
        .arg(pages.join("page"));
    run(command, &folder, None, PDF_TIMEOUT, "pdftoppm", "poppler-utils")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&pages)
        .map_err(|err| EngineError::decoding(format!("reading rendered pages: {err}")))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    // pdftoppm pads page numbers to one width, so names sort in page order.
    files.sort();
    files
        .iter()
        .map(|file| each(&std::fs::read(file).map_err(|err| EngineError::decoding(err.to_string()))?))
        .collect()
}

/// The OCR text of an image (English).
pub fn ocr(input_type: &str, bytes: &[u8]) -> Result<String, EngineError> {
    let folder = Folder::new()?;
    let input = folder.write(&format!("input.{input_type}"), bytes)?;
    let output = folder.0.join("output.txt");
    let mut command = Command::new("tesseract");
    // One OpenMP thread: OCR shares the machine with the server and other calls.
    command.arg(&input).arg("stdout").env("OMP_THREAD_LIMIT", "1");
    run(command, &folder, Some(&output), OCR_TIMEOUT, "tesseract", "tesseract-ocr tesseract-ocr-eng")?;
    read(&output, "tesseract")
}

/// A tool's text output, read up to [`TOOL_OUTPUT_BYTES`] (past it: the file's error).
fn read(path: &Path, tool: &str) -> Result<String, EngineError> {
    let file =
        File::open(path).map_err(|err| EngineError::decoding(format!("reading {tool} output: {err}")))?;
    let mut bytes = Vec::new();
    file.take(TOOL_OUTPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| EngineError::decoding(format!("reading {tool} output: {err}")))?;
    if bytes.len() as u64 > TOOL_OUTPUT_BYTES {
        return Err(exceeded(
            format!("{tool} made more text of this file than the tool output limit"),
            format!("{} MiB (toolOutputBytes)", TOOL_OUTPUT_BYTES / (1024 * 1024)),
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Sets the child's rlimits; runs between fork and exec, so only async-signal-safe calls.
fn limit_child(command: &mut Command) {
    // SAFETY: the closure calls only setrlimit (async-signal-safe), allocates nothing and
    // touches no lock of the parent.
    unsafe {
        command.pre_exec(|| {
            for (resource, value) in [
                (libc::RLIMIT_AS, TOOL_MEMORY),
                (libc::RLIMIT_CPU, TOOL_CPU_SECONDS),
                (libc::RLIMIT_FSIZE, TOOL_FILE_BYTES),
                (libc::RLIMIT_CORE, 0),
            ] {
                let limit = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
                if libc::setrlimit(resource, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// What a tool that died of a signal ran into, as the error of the file.
fn signalled(tool: &str, signal: i32) -> Option<EngineError> {
    match signal {
        libc::SIGXCPU => Some(exceeded(
            format!("{tool} used more CPU time on this file than the tool CPU limit"),
            format!("{TOOL_CPU_SECONDS} s (toolCpuSeconds)"),
        )),
        libc::SIGXFSZ => Some(exceeded(
            format!("{tool} wrote a larger file from this one than the tool file limit"),
            format!("{} MiB (toolFileBytes)", TOOL_FILE_BYTES / (1024 * 1024)),
        )),
        _ => None,
    }
}

fn run(
    mut command: Command,
    folder: &Folder,
    stdout: Option<&Path>,
    timeout: Duration,
    tool: &str,
    package: &str,
) -> Result<(), EngineError> {
    let stdout = match stdout {
        Some(path) => Stdio::from(File::create(path).map_err(|err| EngineError::decoding(err.to_string()))?),
        None => Stdio::null(),
    };
    let stderr = folder.0.join("stderr.txt");
    let stderr_file = File::create(&stderr).map_err(|err| EngineError::decoding(err.to_string()))?;
    limit_child(&mut command);
    let mut child =
        command.stdin(Stdio::null()).stdout(stdout).stderr(stderr_file).spawn().map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                EngineError::decoding(format!("{tool} is not installed (Debian package: {package})"))
            } else {
                EngineError::decoding(format!("{tool} could not start: {err}"))
            }
        })?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(exceeded(
                    format!("{tool} ran longer on this file than the tool time limit"),
                    format!("{} s (toolSeconds)", timeout.as_secs()),
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(err) => return Err(EngineError::decoding(format!("{tool}: {err}"))),
        }
    };
    if status.success() {
        return Ok(());
    }
    if let Some(err) = status.signal().and_then(|signal| signalled(tool, signal)) {
        return Err(err);
    }
    let message = read(&stderr, tool).unwrap_or_default();
    let message = message.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message").trim();
    Err(EngineError::decoding(format!(
        "{tool} failed ({status}): {message} (it runs with at most {} MiB of memory)",
        TOOL_MEMORY / (1024 * 1024)
    )))
}

/// A folder of one decoding's own (mode 0700: other local users cannot read a tenant's
/// file), removed with everything in it when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> Result<Self, EngineError> {
        let path = std::env::temp_dir().join(format!("canon-decode-{}", ulid::Ulid::new()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|err| EngineError::decoding(format!("creating a temporary folder: {err}")))?;
        Ok(Self(path))
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, EngineError> {
        let path = self.0.join(name);
        std::fs::write(&path, bytes)
            .map_err(|err| EngineError::decoding(format!("writing a temporary file: {err}")))?;
        Ok(path)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_runs_under_the_rlimits_in_a_private_folder_removed_after_use() {
        let folder = Folder::new().unwrap();
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&folder.0).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o700);
        let output = folder.0.join("limits.txt");
        let mut command = Command::new("sh");
        command.args(["-c", "ulimit -v; ulimit -t; ulimit -c"]);
        run(command, &folder, Some(&output), Duration::from_secs(10), "sh", "dash").unwrap();
        assert_eq!(read(&output, "sh").unwrap(), "1048576\n60\n0\n");
        let path = folder.0.clone();
        drop(folder);
        assert!(!path.exists());
    }

    #[test]
    fn a_tool_past_the_wall_clock_is_killed_and_named() {
        let folder = Folder::new().unwrap();
        let mut command = Command::new("sleep");
        command.arg("30");
        let err = run(command, &folder, None, Duration::from_millis(200), "sleep", "coreutils").unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(err.message.contains("(toolSeconds)"), "{}", err.message);
    }
}
