//! A database of its own on a PostgreSQL server, for the tests and the benches (each includes
//! this file: neither is a library the other can import).

/// Creates `<prefix>_<ulid>` on the server `admin_url` points at and returns its URL.
pub async fn create_database(admin_url: &str, prefix: &str) -> Result<String, sqlx::Error> {
    let (base, _) = admin_url
        .rsplit_once('/')
        .ok_or_else(|| sqlx::Error::Configuration(format!("{admin_url:?} has no database path").into()))?;
    sqlx::any::install_default_drivers();
    let name = format!("{prefix}_{}", ulid::Ulid::new().to_string().to_lowercase());
    let admin = sqlx::AnyPool::connect(admin_url).await?;
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await?;
    admin.close().await;
    Ok(format!("{base}/{name}"))
}

/// Drops the database `url` names (one [`create_database`] made) from the server `admin_url`
/// points at, its connections closed first. The benches' (the tests' are dropped together by
/// `scripts/test.sh` after a run).
#[allow(dead_code)]
pub async fn drop_database(admin_url: &str, url: &str) -> Result<(), sqlx::Error> {
    let name = url.rsplit_once('/').map_or(url, |(_, name)| name);
    let admin = sqlx::AnyPool::connect(admin_url).await?;
    let dropped = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
    admin.close().await;
    dropped.map(|_| ())
}
