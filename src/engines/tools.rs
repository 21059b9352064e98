//! The external programs decoding runs: `pdftotext` and `pdftoppm` (Debian's poppler-utils)
//! and `tesseract` (tesseract-ocr, with tesseract-ocr-eng). `scripts/provision.sh` installs
//! them. Input and output go through temporary files under `std::env::temp_dir()` (no pipe
//! to fill up), and every run is time-bounded: a stuck tool is killed.

use super::inputs::decoding_error;
use super::EngineError;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PDF_TIMEOUT: Duration = Duration::from_secs(60);
const OCR_TIMEOUT: Duration = Duration::from_secs(120);

/// The text layer of a PDF, in layout mode; pages end with a form feed.
pub fn pdf_text(bytes: &[u8]) -> Result<String, EngineError> {
    let input = TempFile::with(bytes, "pdf")?;
    let output = TempFile::path_for("txt");
    let mut command = Command::new("pdftotext");
    command.args(["-layout", "-enc", "UTF-8"]).arg(&input.0).arg(&output.0);
    run(command, None, PDF_TIMEOUT, "pdftotext", "poppler-utils")?;
    read(&output.0)
}

/// Each page of a PDF rendered as a PNG at `dpi`, in page order (for OCR of scanned PDFs).
pub fn pdf_page_images(bytes: &[u8], dpi: u32) -> Result<Vec<Vec<u8>>, EngineError> {
    let input = TempFile::with(bytes, "pdf")?;
    let folder = TempFile::path_for("pages");
    std::fs::create_dir(&folder.0)
        .map_err(|err| decoding_error(format!("creating a temporary folder: {err}")))?;
    let mut command = Command::new("pdftoppm");
    command.args(["-r", &dpi.to_string(), "-png"]).arg(&input.0).arg(folder.0.join("page"));
    run(command, None, PDF_TIMEOUT, "pdftoppm", "poppler-utils")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder.0)
        .map_err(|err| decoding_error(format!("reading rendered pages: {err}")))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    // pdftoppm pads page numbers to one width, so names sort in page order.
    files.sort();
    files.iter().map(|file| std::fs::read(file).map_err(|err| decoding_error(err.to_string()))).collect()
}

/// The OCR text of an image (English).
pub fn ocr(input_type: &str, bytes: &[u8]) -> Result<String, EngineError> {
    let input = TempFile::with(bytes, input_type)?;
    let output = TempFile::path_for("txt");
    let mut command = Command::new("tesseract");
    // One OpenMP thread: OCR shares the machine with the server and other calls.
    command.arg(&input.0).arg("stdout").env("OMP_THREAD_LIMIT", "1");
    run(command, Some(&output.0), OCR_TIMEOUT, "tesseract", "tesseract-ocr tesseract-ocr-eng")?;
    read(&output.0)
}

fn read(path: &Path) -> Result<String, EngineError> {
    let bytes = std::fs::read(path).map_err(|err| decoding_error(format!("reading tool output: {err}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn run(
    mut command: Command,
    stdout: Option<&Path>,
    timeout: Duration,
    tool: &str,
    package: &str,
) -> Result<(), EngineError> {
    let stdout = match stdout {
        Some(path) => Stdio::from(File::create(path).map_err(|err| decoding_error(err.to_string()))?),
        None => Stdio::null(),
    };
    let stderr = TempFile::path_for("err");
    let stderr_file = File::create(&stderr.0).map_err(|err| decoding_error(err.to_string()))?;
    let mut child =
        command.stdin(Stdio::null()).stdout(stdout).stderr(stderr_file).spawn().map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                decoding_error(format!("{tool} is not installed (Debian package: {package})"))
            } else {
                decoding_error(format!("{tool} could not start: {err}"))
            }
        })?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(decoding_error(format!("{tool} took longer than {}s", timeout.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(err) => return Err(decoding_error(format!("{tool}: {err}"))),
        }
    };
    if status.success() {
        return Ok(());
    }
    let message = std::fs::read_to_string(&stderr.0).unwrap_or_default();
    let message = message.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message").trim();
    Err(decoding_error(format!("{tool} failed ({status}): {message}")))
}

/// A file (or folder) removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn path_for(extension: &str) -> Self {
        Self(std::env::temp_dir().join(format!("canon-engine-{}.{extension}", ulid::Ulid::new())))
    }

    fn with(bytes: &[u8], extension: &str) -> Result<Self, EngineError> {
        let file = Self::path_for(extension);
        std::fs::write(&file.0, bytes)
            .map_err(|err| decoding_error(format!("writing a temporary file: {err}")))?;
        Ok(file)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
