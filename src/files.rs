//! Files canon keeps for itself (keys, secrets): readable by canon's user alone.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The contents of `path`, or, when it is missing or empty, `make()` written there as a new
/// file of mode 0600 (two processes starting at once agree on the first one written).
pub fn read_or_create_private(path: &Path, make: impl FnOnce() -> Vec<u8>) -> io::Result<Vec<u8>> {
    match fs::read(path) {
        Ok(bytes) if !bytes.is_empty() => return Ok(bytes),
        Ok(_) => fs::remove_file(path)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let bytes = make();
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(&bytes)?;
            file.sync_all()?;
            Ok(bytes)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => fs::read(path),
        Err(err) => Err(err),
    }
}
