//! The data directory canon creates is private: its secrets are no one else's to read.

use crate::helpers::spawn_app_with;
use canon::jobs::Handlers;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[tokio::test]
async fn canon_creates_its_data_dir_0700_and_its_secrets_0600_even_under_umask_0() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("fresh/data");
    // SAFETY: umask(2) only swaps this process's file-creation mask; restored right after.
    let previous = unsafe { libc::umask(0) };
    let app = spawn_app_with(Handlers::default(), |config| config.data_dir = data.clone()).await;
    unsafe { libc::umask(previous) };
    assert_eq!(app.get("/v3/buckets").await.status(), 200);

    assert_eq!(mode(&data), 0o700, "the data dir");
    assert_eq!(mode(&data.join("jwt.secret")), 0o600, "jwt.secret");
    assert_eq!(mode(&data.join("secrets.key")), 0o600, "secrets.key");
    if app.config.database_url.is_none() {
        assert_eq!(mode(&data.join("canon.sqlite")), 0o600, "canon.sqlite");
        let wal = data.join("canon.sqlite-wal");
        if wal.exists() {
            assert_eq!(mode(&wal), 0o600, "SQLite's WAL follows the database file");
        }
    }
    assert!(canon::data_dir::loose_modes(&data).is_empty(), "nothing to warn about");
}
