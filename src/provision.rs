//! Where `make provision` puts what the embedded defaults need (the configuration checks
//! they are there, see `Config::check_provisioned`).

use std::path::{Path, PathBuf};

/// The checkout cargo builds and runs from, for tests and benches (the server reads
/// `CANON_VENDOR_DIR` instead). `cargo test` and `cargo bench` set `CARGO_MANIFEST_DIR` when
/// they run a binary, and that is read first; the path compiled in is the fallback. Two
/// checkouts sharing one build cache (CI builds its own clone into the default one) can get a
/// binary cargo found fresh whose compiled-in path names the other checkout.
pub fn source_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

pub fn falkordb_server(vendor_dir: &Path) -> PathBuf {
    vendor_dir.join("falkordb").join("redis-server")
}

pub fn falkordb_module(vendor_dir: &Path) -> PathBuf {
    vendor_dir.join("falkordb").join("falkordb.so")
}
