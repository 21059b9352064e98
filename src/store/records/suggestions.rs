//! Merge suggestions as stored.

use super::{RecordError, Records};
use crate::ids;
use sqlx::Row;

/// The orders open suggestions are listed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OpenOrder {
    /// Best score first.
    Score,
    /// Score closest to 0.5 first.
    Uncertain,
    /// Newest (largest ID) first.
    Recent,
}

#[derive(Clone, Debug)]
pub struct StoredSuggestion {
    pub id: String,
    pub bucket_id: String,
    pub entity_a: String,
    pub entity_b: String,
    pub score: f64,
    pub signals: serde_json::Value,
    pub status: String,
    pub decided_by: Option<String>,
    /// Decided with the scores hidden (the dashboard's blind mode).
    pub blind: bool,
}

pub struct NewSuggestion<'a> {
    pub account_id: &'a str,
    pub environment: &'a str,
    pub bucket_id: &'a str,
    pub entity_a: &'a str,
    pub entity_b: &'a str,
    pub score: f64,
    pub signals: &'a serde_json::Value,
    /// `open`, or `accepted` for a pair merged automatically.
    pub status: &'a str,
}

/// Suggestions one INSERT writes at most (7 parameters each: far under SQLite's 32,766 and
/// PostgreSQL's 65,535). One statement a suggestion was most of a large refresh's time.
pub const SUGGESTIONS_PER_STATEMENT: usize = 500;

const COLUMNS: &str = "id, bucket_id, entity_a, entity_b, score, signals, status, decided_by, blind";

fn read(row: sqlx::any::AnyRow) -> StoredSuggestion {
    StoredSuggestion {
        id: row.get("id"),
        bucket_id: row.get("bucket_id"),
        entity_a: row.get("entity_a"),
        entity_b: row.get("entity_b"),
        score: row.get("score"),
        signals: serde_json::from_str(&row.get::<String, _>("signals")).unwrap_or_default(),
        status: row.get("status"),
        decided_by: row.get("decided_by"),
        blind: row.get::<i64, _>("blind") != 0,
    }
}

impl Records {
    /// Stores a pair unless it was seen before (whatever its status): `true` when new.
    pub async fn insert_suggestion(&self, new: NewSuggestion<'_>) -> Result<bool, RecordError> {
        let now = ids::now_millis();
        let done = sqlx::query(
            "INSERT INTO merge_suggestions (id, account_id, environment, bucket_id, entity_a, entity_b, score, signals, \
             status, decided_by, decided_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $9 = 'open' THEN NULL ELSE 'auto-merge' END, \
             CASE WHEN $9 = 'open' THEN NULL ELSE $10 END, $10) \
             ON CONFLICT (account_id, environment, entity_a, entity_b) DO NOTHING",
        )
        .bind(ids::new_id("msg"))
        .bind(new.account_id)
        .bind(new.environment)
        .bind(new.bucket_id)
        .bind(new.entity_a)
        .bind(new.entity_b)
        .bind(new.score)
        .bind(new.signals.to_string())
        .bind(new.status)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// [`Records::insert_suggestion`] for many pairs of one tenant, [`SUGGESTIONS_PER_STATEMENT`]
    /// a statement: whether each was new, in order. A pair seen before (or twice here) is
    /// left as it was.
    pub async fn insert_suggestions(&self, batch: &[NewSuggestion<'_>]) -> Result<Vec<bool>, RecordError> {
        let mut fresh = Vec::with_capacity(batch.len());
        for chunk in batch.chunks(SUGGESTIONS_PER_STATEMENT) {
            fresh.extend(self.insert_suggestion_chunk(chunk).await?);
        }
        Ok(fresh)
    }

    async fn insert_suggestion_chunk(&self, chunk: &[NewSuggestion<'_>]) -> Result<Vec<bool>, RecordError> {
        let Some(first) = chunk.first() else { return Ok(Vec::new()) };
        // $1 account, $2 environment, $3 now; then 7 per row.
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let p = |k: usize| format!("${}", 4 + i * 7 + k);
                let status = p(6);
                format!(
                    "({}, $1, $2, {}, {}, {}, {}, {}, {status}, CASE WHEN {status} = 'open' THEN NULL ELSE 'auto-merge' END, \
                     CASE WHEN {status} = 'open' THEN NULL ELSE $3 END, $3)",
                    p(0),
                    p(1),
                    p(2),
                    p(3),
                    p(4),
                    p(5)
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO merge_suggestions (id, account_id, environment, bucket_id, entity_a, entity_b, score, signals, \
             status, decided_by, decided_at, created_at) VALUES {} \
             ON CONFLICT (account_id, environment, entity_a, entity_b) DO NOTHING RETURNING entity_a, entity_b",
            values.join(", ")
        );
        let mut query =
            sqlx::query(&sql).bind(first.account_id).bind(first.environment).bind(ids::now_millis());
        for new in chunk {
            debug_assert!(new.account_id == first.account_id && new.environment == first.environment);
            query = query
                .bind(ids::new_id("msg"))
                .bind(new.bucket_id)
                .bind(new.entity_a)
                .bind(new.entity_b)
                .bind(new.score)
                .bind(new.signals.to_string())
                .bind(new.status);
        }
        let rows = query.fetch_all(&mut *self.write().await?).await?;
        let inserted: std::collections::HashSet<(String, String)> =
            rows.into_iter().map(|row| (row.get("entity_a"), row.get("entity_b"))).collect();
        // A pair twice in one chunk: only its first row counts as new.
        let mut seen = std::collections::HashSet::new();
        Ok(chunk
            .iter()
            .map(|new| {
                let key = (new.entity_a.to_string(), new.entity_b.to_string());
                inserted.contains(&key) && seen.insert(key)
            })
            .collect())
    }

    /// Every pair of the tenant stored, whatever its status: the pairs a refresh will not
    /// record again (`(entity_a, entity_b)`, the older entity first).
    pub async fn suggestion_pairs(
        &self,
        account_id: &str,
        environment: &str,
    ) -> Result<std::collections::HashSet<(String, String)>, RecordError> {
        let rows = sqlx::query(
            "SELECT entity_a, entity_b FROM merge_suggestions WHERE account_id = $1 AND environment = $2",
        )
        .bind(account_id)
        .bind(environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|row| (row.get("entity_a"), row.get("entity_b"))).collect())
    }

    /// At most `limit` open suggestions of a tenant (of `bucket`, or all) in `order`, after
    /// the suggestion `after` (by its place in that order: it need not be open any more).
    #[allow(clippy::too_many_arguments)]
    pub async fn open_suggestions_after(
        &self,
        account_id: &str,
        environment: &str,
        bucket_id: Option<&str>,
        order: OpenOrder,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredSuggestion>, RecordError> {
        // The order, and "after the cursor" against the cursor's own row `k` (a cursor that
        // no longer exists joins nothing: an empty page).
        let (sort, beyond) = match order {
            OpenOrder::Score => {
                ("s.score DESC, s.id", "(s.score < k.score OR (s.score = k.score AND s.id > k.id))")
            }
            OpenOrder::Uncertain => (
                "ABS(s.score - 0.5), s.id",
                "(ABS(s.score - 0.5) > ABS(k.score - 0.5) \
                 OR (ABS(s.score - 0.5) = ABS(k.score - 0.5) AND s.id > k.id))",
            ),
            OpenOrder::Recent => ("s.id DESC", "s.id < k.id"),
        };
        let (join, condition) = match after {
            Some(_) => (" JOIN merge_suggestions k ON k.id = $4", format!(" AND {beyond}")),
            None => ("", String::new()),
        };
        let columns = COLUMNS.split(", ").map(|c| format!("s.{c} AS {c}")).collect::<Vec<_>>().join(", ");
        let sql = format!(
            "SELECT {columns} FROM merge_suggestions s{join} WHERE s.account_id = $1 AND s.environment = $2 \
             AND s.status = 'open' AND ($3 = '' OR s.bucket_id = $3){condition} ORDER BY {sort} LIMIT {limit}"
        );
        let mut query =
            sqlx::query(&sql).bind(account_id).bind(environment).bind(bucket_id.unwrap_or_default());
        if let Some(after) = after {
            query = query.bind(after);
        }
        Ok(query.fetch_all(&self.pool).await?.into_iter().map(read).collect())
    }

    pub async fn suggestion(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
    ) -> Result<Option<StoredSuggestion>, RecordError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM merge_suggestions WHERE id = $1 AND account_id = $2 AND environment = $3"
        ))
        .bind(id)
        .bind(account_id)
        .bind(environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(read))
    }

    /// Decides an open suggestion (`blind`: with the scores hidden); `false` if it was no
    /// longer open.
    pub async fn decide_suggestion(
        &self,
        id: &str,
        status: &str,
        by: &str,
        blind: bool,
    ) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "UPDATE merge_suggestions SET status = $1, decided_by = $2, decided_at = $3, blind = $4 \
             WHERE id = $5 AND status = 'open'",
        )
        .bind(status)
        .bind(by)
        .bind(ids::now_millis())
        .bind(i64::from(blind))
        .bind(id)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Dismisses these suggestions at once (those still open): how many were.
    pub async fn dismiss_suggestions(
        &self,
        ids: &[String],
        account_id: &str,
        environment: &str,
        by: &str,
        blind: bool,
    ) -> Result<u64, RecordError> {
        let mut dismissed = 0;
        for chunk in ids.chunks(1_000) {
            let rows: Vec<serde_json::Value> = chunk.iter().map(|id| serde_json::json!([id])).collect();
            let done = sqlx::query(&format!(
                "UPDATE merge_suggestions SET status = 'dismissed', decided_by = $2, decided_at = $3, blind = $4 \
                 WHERE account_id = $5 AND environment = $6 AND status = 'open' \
                 AND id IN (SELECT e.value ->> 0 FROM {})",
                super::json_params::json_rows(self.dialect, 1)
            ))
            .bind(serde_json::Value::Array(rows).to_string())
            .bind(by)
            .bind(ids::now_millis())
            .bind(i64::from(blind))
            .bind(account_id)
            .bind(environment)
            .execute(&mut *self.write().await?)
            .await?;
            dismissed += done.rows_affected();
        }
        Ok(dismissed)
    }

    /// Opens a decided suggestion again (the undo of a decision); `false` if it was open.
    pub async fn reopen_suggestion(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
    ) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "UPDATE merge_suggestions SET status = 'open', decided_by = NULL, decided_at = NULL, blind = 0 \
             WHERE id = $1 AND account_id = $2 AND environment = $3 AND status <> 'open'",
        )
        .bind(id)
        .bind(account_id)
        .bind(environment)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Pairs a person decided (accepted or dismissed, not merged automatically), oldest
    /// first: the labels resolution learns from.
    pub async fn decided_suggestions(
        &self,
        account_id: &str,
        environment: &str,
    ) -> Result<Vec<StoredSuggestion>, RecordError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM merge_suggestions WHERE account_id = $1 AND environment = $2 \
             AND status IN ('accepted', 'dismissed') AND decided_by <> 'auto-merge' ORDER BY id"
        ))
        .bind(account_id)
        .bind(environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(read).collect())
    }

    /// Records a person's decision on a pair (a manual merge: `accepted`; an unmerge:
    /// `dismissed`), replacing what was stored for it: a label, and never suggested again.
    pub async fn record_decision(&self, new: NewSuggestion<'_>, by: &str) -> Result<(), RecordError> {
        let now = ids::now_millis();
        sqlx::query(
            "INSERT INTO merge_suggestions (id, account_id, environment, bucket_id, entity_a, entity_b, score, signals, \
             status, decided_by, decided_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) \
             ON CONFLICT (account_id, environment, entity_a, entity_b) DO UPDATE SET status = $9, decided_by = $10, \
             decided_at = $11, signals = $8, blind = 0",
        )
        .bind(ids::new_id("msg"))
        .bind(new.account_id)
        .bind(new.environment)
        .bind(new.bucket_id)
        .bind(new.entity_a)
        .bind(new.entity_b)
        .bind(new.score)
        .bind(new.signals.to_string())
        .bind(new.status)
        .bind(by)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }
}
