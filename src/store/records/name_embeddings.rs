//! Name embeddings kept between merge-suggestion refreshes: a name's vector under one model
//! never changes, and embedding was a third of a large refresh. Kept per tenant (one
//! tenant's refresh never runs faster for another's names), at most [`NAME_EMBEDDINGS_KEPT`]
//! in all, the least recently used pruned.

use super::{RecordError, Records};
use crate::ids;
use sqlx::Row;
use std::collections::HashMap;

/// Vectors kept at most, across tenants (MiniLM's 384 floats: ~1.6 KB each, ~160 MB in
/// all); twice what one refresh embeds at most.
pub const NAME_EMBEDDINGS_KEPT: i64 = 100_000;

/// Names one statement reads or writes at most.
const PER_STATEMENT: usize = 500;

/// Whose names, under which model.
pub struct NameSpace<'a> {
    pub account_id: &'a str,
    pub environment: &'a str,
    pub model: &'a str,
}

fn to_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

fn placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

impl Records {
    /// The kept vectors of these names, by name; marks them used.
    pub async fn name_embeddings(
        &self,
        space: &NameSpace<'_>,
        names: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, RecordError> {
        let mut found = HashMap::new();
        let now = ids::now_millis();
        for chunk in names.chunks(PER_STATEMENT) {
            let sql = format!(
                "SELECT name, vector FROM name_embeddings WHERE account_id = $1 AND environment = $2 \
                 AND model = $3 AND name IN ({})",
                placeholders(4, chunk.len())
            );
            let mut query =
                sqlx::query(&sql).bind(space.account_id).bind(space.environment).bind(space.model);
            for name in chunk {
                query = query.bind(name);
            }
            let rows = query.fetch_all(&self.pool).await?;
            let hits: Vec<String> = rows.iter().map(|row| row.get::<String, _>("name")).collect();
            for row in rows {
                found.insert(row.get("name"), from_bytes(&row.get::<Vec<u8>, _>("vector")));
            }
            if hits.is_empty() {
                continue;
            }
            let sql = format!(
                "UPDATE name_embeddings SET used_at = $4 WHERE account_id = $1 AND environment = $2 \
                 AND model = $3 AND name IN ({})",
                placeholders(5, hits.len())
            );
            let mut query =
                sqlx::query(&sql).bind(space.account_id).bind(space.environment).bind(space.model).bind(now);
            for name in &hits {
                query = query.bind(name);
            }
            query.execute(&mut *self.write().await?).await?;
        }
        Ok(found)
    }

    /// Keeps these vectors (replacing any of the same names), then prunes the least recently
    /// used past [`NAME_EMBEDDINGS_KEPT`].
    pub async fn keep_name_embeddings(
        &self,
        space: &NameSpace<'_>,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<(), RecordError> {
        let now = ids::now_millis();
        for chunk in vectors.chunks(PER_STATEMENT) {
            let values: Vec<String> = (0..chunk.len())
                .map(|i| format!("($1, $2, $3, ${}, ${}, $4)", 5 + 2 * i, 6 + 2 * i))
                .collect();
            let sql = format!(
                "INSERT INTO name_embeddings (account_id, environment, model, name, vector, used_at) VALUES {} \
                 ON CONFLICT (account_id, environment, model, name) DO UPDATE SET vector = excluded.vector, \
                 used_at = excluded.used_at",
                values.join(", ")
            );
            let mut query =
                sqlx::query(&sql).bind(space.account_id).bind(space.environment).bind(space.model).bind(now);
            for (name, vector) in chunk {
                query = query.bind(name).bind(to_bytes(vector));
            }
            query.execute(&mut *self.write().await?).await?;
        }
        if !vectors.is_empty() {
            self.prune_name_embeddings(NAME_EMBEDDINGS_KEPT).await?;
        }
        Ok(())
    }

    /// Deletes all but the `kept` most recently used vectors (those used at the same moment
    /// as the last one kept stay too).
    pub async fn prune_name_embeddings(&self, kept: i64) -> Result<(), RecordError> {
        sqlx::query(
            "DELETE FROM name_embeddings WHERE used_at < \
             (SELECT used_at FROM name_embeddings ORDER BY used_at DESC LIMIT 1 OFFSET $1)",
        )
        .bind(kept)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// How many vectors are kept, across tenants.
    pub async fn name_embeddings_kept(&self) -> Result<i64, RecordError> {
        Ok(sqlx::query("SELECT COUNT(*) AS n FROM name_embeddings").fetch_one(&self.pool).await?.get("n"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_vector_survives_its_bytes() {
        let vector = vec![0.25_f32, -1.0, 3.5e-8, f32::MIN_POSITIVE];
        assert_eq!(super::from_bytes(&super::to_bytes(&vector)), vector);
    }
}
