//! Pages read whole within a byte bound: the sizes of their bodies (`v.body`) are asked
//! first (`octet_length`, which neither engine answers by reading the value), and only the
//! keys whose bodies fit are read.

use super::filters::fitting;
use super::{Owner, RecordError, Records};
use sqlx::Row;
use std::collections::HashMap;

impl Records {
    /// The first of `ids` whose bodies fit in `max_bytes` together (one at least).
    /// `from(ids)` is the statement's `FROM … WHERE`, the owner `$1` and `$2` and the IDs
    /// bound from `$3`; `key` names the ID's column in it.
    pub(super) async fn ids_that_fit(
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
    pub(super) async fn versions_that_fit(
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
