//! What the embedded defaults need on disk, and a clear failure when it is missing.

use crate::config::Config;
use std::path::PathBuf;

/// The provisioned files a configuration needs (none for a backend served elsewhere).
pub fn required_files(config: &Config) -> Vec<PathBuf> {
    let vendor = &config.vendor_dir;
    let mut files = Vec::new();
    if config.neo4j_uri.is_none() && config.falkordb_url.is_none() {
        files.push(falkordb_server(config));
        files.push(falkordb_module(config));
    }
    if config.embeddings_url.is_none() {
        for name in ["config.json", "tokenizer.json", "model.safetensors"] {
            files.push(vendor.join("minilm").join(name));
        }
    }
    files
}

pub fn falkordb_server(config: &Config) -> PathBuf {
    config.vendor_dir.join("falkordb").join("redis-server")
}

pub fn falkordb_module(config: &Config) -> PathBuf {
    config.vendor_dir.join("falkordb").join("falkordb.so")
}

/// Fails, naming every missing file and the command that provides them.
pub fn check(config: &Config) -> anyhow::Result<()> {
    let missing: Vec<String> = required_files(config)
        .into_iter()
        .filter(|path| !path.is_file())
        .map(|path| path.display().to_string())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "missing provisioned file(s): {}. Run `make provision` (it fetches them from PyPI into {}), \
         or point CANON_VENDOR_DIR at a folder that has them.",
        missing.join(", "),
        config.vendor_dir.display()
    )
}
