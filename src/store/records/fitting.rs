//! Pages read whole within a byte bound: the sizes of their bodies (`v.body`) are asked
//! first (`octet_length`, which neither engine answers by reading the value), and only the
//! keys whose bodies fit are read. Functions and workflows, and their versions, page so.

use super::filters::fitting;
use super::{Owner, RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::HashMap;

impl Records {
    /// The rows (`columns` over `from`, as [`Records::ids_that_fit`] takes it) of the first
    /// of `ids` whose bodies fit in `max_bytes` (one at least), in the order of `ids` by
    /// their `id` column.
    pub(super) async fn rows_of_ids(
        &self,
        owner: Owner<'_>,
        ids: &[String],
        key: &str,
        columns: &str,
        from: impl Fn(&[String]) -> String,
        max_bytes: usize,
    ) -> Result<Vec<AnyRow>, RecordError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.ids_that_fit(owner, ids, key, &from, max_bytes).await?;
        let sql = format!("SELECT {columns} {}", from(&ids));
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in &ids {
            query = query.bind(id);
        }
        let mut rows = query.fetch_all(&self.pool).await?;
        rows.sort_by_cached_key(|row| ids.iter().position(|id| *id == row.get::<String, _>("id")));
        Ok(rows)
    }

    /// The rows (`columns` over `from`, as [`Records::versions_that_fit`] takes it) of the
    /// first of `nums` whose bodies fit in `max_bytes` (one at least), in the order of `nums`
    /// by their `version_num` column.
    pub(super) async fn rows_of_versions(
        &self,
        owner: Owner<'_>,
        parent_id: &str,
        nums: &[i64],
        columns: &str,
        from: impl Fn(&[i64]) -> String,
        max_bytes: usize,
    ) -> Result<Vec<AnyRow>, RecordError> {
        if nums.is_empty() {
            return Ok(Vec::new());
        }
        let nums = self.versions_that_fit(owner, parent_id, nums, &from, max_bytes).await?;
        let mut rows = sqlx::query(&format!("SELECT {columns} {}", from(&nums)))
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(parent_id)
            .fetch_all(&self.pool)
            .await?;
        rows.sort_by_cached_key(|row| nums.iter().position(|n| *n == row.get::<i64, _>("version_num")));
        Ok(rows)
    }

    /// The first of `ids` whose bodies fit in `max_bytes` together (one at least).
    /// `from(ids)` is the statement's `FROM … WHERE`, the owner `$1` and `$2` and the IDs
    /// bound from `$3`; `key` names the ID's column in it.
    async fn ids_that_fit(
        &self,
        owner: Owner<'_>,
        ids: &[String],
        key: &str,
        from: impl Fn(&[String]) -> String,
        max_bytes: usize,
    ) -> Result<Vec<String>, RecordError> {
        let sql = format!("SELECT {key} AS k, CAST(octet_length(v.body) AS BIGINT) AS n {}", from(ids));
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in ids {
            query = query.bind(id);
        }
        let sizes: HashMap<String, i64> =
            query.fetch_all(&self.pool).await?.iter().map(|row| (row.get("k"), row.get("n"))).collect();
        Ok(fitting(ids, |id| sizes.get(id).copied(), max_bytes))
    }

    /// The first of `nums` (versions of `parent_id`, bound as `$3` after the owner) whose
    /// bodies fit in `max_bytes` together (one at least); `from(nums)` is the statement's
    /// `FROM … WHERE` with the numbers inline and `v.version_num` their column.
    async fn versions_that_fit(
        &self,
        owner: Owner<'_>,
        parent_id: &str,
        nums: &[i64],
        from: impl Fn(&[i64]) -> String,
        max_bytes: usize,
    ) -> Result<Vec<i64>, RecordError> {
        let sql =
            format!("SELECT v.version_num AS k, CAST(octet_length(v.body) AS BIGINT) AS n {}", from(nums));
        let sizes: HashMap<i64, i64> = sqlx::query(&sql)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(parent_id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| (row.get("k"), row.get("n")))
            .collect();
        Ok(fitting(nums, |num| sizes.get(num).copied(), max_bytes))
    }
}
