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
