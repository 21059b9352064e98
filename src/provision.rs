//! Where `make provision` puts what the embedded defaults need (the configuration checks
//! they are there, see `Config::check_provisioned`).

use std::path::{Path, PathBuf};

pub fn falkordb_server(vendor_dir: &Path) -> PathBuf {
    vendor_dir.join("falkordb").join("redis-server")
}

pub fn falkordb_module(vendor_dir: &Path) -> PathBuf {
    vendor_dir.join("falkordb").join("falkordb.so")
}
