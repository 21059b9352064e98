//! The data directory holds secrets: `jwt.secret` signs dashboard tokens, `secrets.key`
//! encrypts tenant secrets, `canon.sqlite` holds the API key hashes and every record, and the
//! graph and vectors live beside them. canon creates the directory 0700 and those files 0600,
//! whatever the umask (modes are set explicitly, not only requested), and warns at start about
//! existing ones others can read.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub const SECRET_FILE: &str = "jwt.secret";
pub const SQLITE_FILE: &str = "canon.sqlite";
/// The tenant secrets' key (written by `crate::secrets::cipher`).
const KEY_FILE: &str = "secrets.key";
const PRIVATE_DIR: u32 = 0o700;
const PRIVATE_FILE: u32 = 0o600;

/// Creates `dir` (0700) and any missing parents; an existing directory is left as it is.
pub fn create(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    match fs::DirBuilder::new().mode(PRIVATE_DIR).create(dir) {
        Ok(()) => fs::set_permissions(dir, fs::Permissions::from_mode(PRIVATE_DIR)),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(err) => Err(err),
    }
}

/// Creates `path` empty and 0600 when missing (an existing file keeps its mode).
fn create_private(path: &Path) -> io::Result<()> {
    match fs::OpenOptions::new().write(true).create_new(true).mode(PRIVATE_FILE).open(path) {
        Ok(file) => file.set_permissions(fs::Permissions::from_mode(PRIVATE_FILE)),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(err),
    }
}

/// The embedded record store's URL, its directory and (empty) database file created private
/// first: SQLite then creates its `-wal` and `-shm` files with the database file's mode.
pub fn prepare_sqlite(dir: &Path) -> io::Result<String> {
    create(dir)?;
    create_private(&dir.join(SQLITE_FILE))?;
    Ok(sqlite_url(dir))
}

/// The URL of the embedded record store in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}?mode=rwc", dir.join(SQLITE_FILE).display())
}

/// The data directory and its secret files that other users may read or write, with modes.
pub fn loose_modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    [dir.to_path_buf(), dir.join(SECRET_FILE), dir.join(KEY_FILE), dir.join(SQLITE_FILE)]
        .into_iter()
        .filter_map(|path| {
            let mode = fs::metadata(&path).ok()?.permissions().mode() & 0o777;
            (mode & 0o077 != 0).then_some((path, mode))
        })
        .collect()
}

/// Logs a warning for each of [`loose_modes`].
pub fn warn_loose_modes(dir: &Path) {
    for (path, mode) in loose_modes(dir) {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "other users can read this; chmod 700 the data directory and 600 its jwt.secret, secrets.key and canon.sqlite"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn what_canon_creates_is_private_and_nothing_is_loose() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/data");
        prepare_sqlite(&dir).unwrap();
        crate::files::read_or_create_private(&dir.join(SECRET_FILE), || b"s3cret".to_vec()).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(SQLITE_FILE)), 0o600);
        assert_eq!(mode(&dir.join(SECRET_FILE)), 0o600);
        assert!(loose_modes(&dir).is_empty());
    }

    #[test]
    fn existing_loose_modes_are_kept_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(dir.path().join(SECRET_FILE), b"old").unwrap();
        fs::set_permissions(dir.path().join(SECRET_FILE), fs::Permissions::from_mode(0o644)).unwrap();
        create(dir.path()).unwrap();
        prepare_sqlite(dir.path()).unwrap();
        let loose: Vec<(PathBuf, u32)> = loose_modes(dir.path());
        assert_eq!(loose, vec![(dir.path().to_path_buf(), 0o755), (dir.path().join(SECRET_FILE), 0o644)]);
    }
}
