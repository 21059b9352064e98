//! Storage of parsed documents and their items (sections, entities, relationships), and the
//! full-text index `grep` reads.
//!
//! The index is a trigram index in both dialects: SQLite FTS5 with `tokenize='trigram'`
//! (an external-content table kept by triggers) and PostgreSQL `pg_trgm` (a GIN index on
//! `document_items.text`). Why trigrams and not words (`to_tsvector`, FTS5's default
//! tokenizer): `grep` is a substring search, like the tool it is named for — "INV-00" must
//! find "INV-0042" and "rp" must not need a whole word — and a word index can only answer
//! whole words or prefixes. A trigram index answers any substring of three characters or
//! more, and narrows regular expressions through the literals they require (the service
//! passes them here); shorter patterns fall back to reading the tenant's items in ID order.
//! The service checks every candidate itself (case, the exact regular expression), so the
//! index only ever narrows.

use super::filters::{contains_pattern, Filter};
use super::Owner;
use super::{Dialect, RecordError, Records};
use futures::TryStreamExt;
use sqlx::any::AnyRow;
use sqlx::Row;

/// A parsed document as stored.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DocumentRow {
    /// The run's transformation ID (`tr_…`).
    pub id: String,
    pub reference_id: String,
    pub call_id: String,
    pub function_id: String,
    pub function_name: String,
    pub input_type: String,
    pub file_name: Option<String>,
    pub bucket_id: Option<String>,
    pub memory_linked: bool,
    pub page_count: i64,
    pub section_count: i64,
    pub created_at: i64,
}

/// One searchable item of a document.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ItemRow {
    pub id: String,
    pub document_id: String,
    /// `sections`, `entities` or `relationships`.
    pub scope: String,
    pub position: i64,
    pub label: String,
    /// A section's type (heading, paragraph, table, list); an entity's type; a relation's.
    pub item_type: String,
    pub page: Option<i64>,
    pub entity_id: Option<String>,
    pub text: String,
}

const DOC_COLUMNS: &str = "id, reference_id, call_id, function_id, function_name, input_type, file_name, \
                           bucket_id, memory_linked, page_count, section_count, created_at";
const ITEM_COLUMNS: &str = "id, document_id, scope, position, label, item_type, page, entity_id, text";

fn document(row: &AnyRow) -> DocumentRow {
    DocumentRow {
        id: row.get("id"),
        reference_id: row.get("reference_id"),
        call_id: row.get("call_id"),
        function_id: row.get("function_id"),
        function_name: row.get("function_name"),
        input_type: row.get("input_type"),
        file_name: row.get("file_name"),
        bucket_id: row.get("bucket_id"),
        memory_linked: row.get::<i64, _>("memory_linked") != 0,
        page_count: row.get("page_count"),
        section_count: row.get("section_count"),
        created_at: row.get("created_at"),
    }
}

fn item(row: &AnyRow) -> ItemRow {
    ItemRow {
        id: row.get("id"),
        document_id: row.get("document_id"),
        scope: row.get("scope"),
        position: row.get("position"),
        label: row.get("label"),
        item_type: row.get("item_type"),
        page: row.get("page"),
        entity_id: row.get("entity_id"),
        text: row.get("text"),
    }
}

/// Which items a search reads.
#[derive(Clone, Debug, Default)]
pub struct ItemQuery<'a> {
    /// Only this document.
    pub document_id: Option<&'a str>,
    /// Only these scopes (none: all).
    pub scopes: &'a [String],
    /// A literal every match contains (any case): the index narrows by it when it has three
    /// characters or more.
    pub literal: Option<&'a str>,
    /// Items after this ID.
    pub after: Option<&'a str>,
    pub limit: u32,
}

/// Filters of a document listing.
#[derive(Clone, Debug, Default)]
pub struct DocumentQuery<'a> {
    pub function_name: Option<&'a str>,
    /// Substring of the referenceID, any case.
    pub search: Option<&'a str>,
    /// Created at or after (epoch milliseconds).
    pub since_ms: Option<i64>,
    pub after: Option<&'a str>,
    pub limit: u32,
}

impl Records {
    /// Creates the dialect's full-text index when it is missing (idempotent; run after the
    /// migrations). Without the `pg_trgm` extension (a server where canon may not create
    /// it) grep still answers, by reading items in order; a warning says so.
    pub async fn ensure_search_index(&self) -> Result<(), RecordError> {
        match self.dialect {
            Dialect::Sqlite => {
                for statement in [
                    "CREATE VIRTUAL TABLE IF NOT EXISTS document_items_fts USING fts5(text, \
                     content='document_items', content_rowid='rowid', tokenize='trigram')",
                    "CREATE TRIGGER IF NOT EXISTS document_items_fts_insert AFTER INSERT ON document_items \
                     BEGIN INSERT INTO document_items_fts(rowid, text) VALUES (new.rowid, new.text); END",
                    "CREATE TRIGGER IF NOT EXISTS document_items_fts_delete AFTER DELETE ON document_items \
                     BEGIN INSERT INTO document_items_fts(document_items_fts, rowid, text) \
                     VALUES ('delete', old.rowid, old.text); END",
                ] {
                    sqlx::query(statement).execute(&mut *self.write().await?).await?;
                }
            }
            Dialect::Postgres => {
                if let Err(err) = sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                    .execute(&mut *self.write().await?)
                    .await
                {
                    tracing::warn!(error = %err, "pg_trgm unavailable: grep reads documents without an index");
                    return Ok(());
                }
                sqlx::query(
                    "CREATE INDEX IF NOT EXISTS document_items_trgm ON document_items \
                     USING gin (text gin_trgm_ops)",
                )
                .execute(&mut *self.write().await?)
                .await?;
            }
        }
        Ok(())
    }

    /// Stores a parsed document with the function's output (JSON text) and its items, once
    /// per ID (a resumed call's second save changes nothing). The output is not part of
    /// [`DocumentRow`]: it may be tens of MiB and only `cat` shows it, so reads leave it and
    /// [`Records::document_output`] reads it alone.
    pub async fn save_document(
        &self,
        owner: Owner<'_>,
        doc: &DocumentRow,
        output: &str,
        items: &[ItemRow],
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let inserted = sqlx::query(
            "INSERT INTO documents (id, account_id, environment, reference_id, call_id, function_id, \
                 function_name, input_type, file_name, bucket_id, memory_linked, page_count, section_count, \
                 output, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(&doc.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&doc.reference_id)
        .bind(&doc.call_id)
        .bind(&doc.function_id)
        .bind(&doc.function_name)
        .bind(&doc.input_type)
        .bind(&doc.file_name)
        .bind(&doc.bucket_id)
        .bind(i64::from(doc.memory_linked))
        .bind(doc.page_count)
        .bind(doc.section_count)
        .bind(output)
        .bind(doc.created_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(false);
        }
        for item in items {
            sqlx::query(
                "INSERT INTO document_items (id, document_id, account_id, environment, scope, position, label, \
                     item_type, page, entity_id, text) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(&item.id)
            .bind(&doc.id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(&item.scope)
            .bind(item.position)
            .bind(&item.label)
            .bind(&item.item_type)
            .bind(item.page)
            .bind(&item.entity_id)
            .bind(&item.text)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// A page of documents in ID (creation) order.
    pub async fn list_documents(
        &self,
        owner: Owner<'_>,
        query: &DocumentQuery<'_>,
    ) -> Result<Vec<DocumentRow>, RecordError> {
        let mut filter = Filter::default();
        filter.eq("account_id", owner.account_id).eq("environment", owner.environment);
        if let Some(name) = query.function_name {
            filter.eq("function_name", name);
        }
        if let Some(search) = query.search {
            filter.contains("reference_id", search);
        }
        if let Some(since) = query.since_ms {
            filter.raw(&format!("created_at >= {since}"));
        }
        let cursor = match query.after {
            Some(id) => super::filters::Cursor::After(id.to_string()),
            None => super::filters::Cursor::First,
        };
        let sql = filter.page_sql(DOC_COLUMNS, "documents", "id", &cursor, true, query.limit);
        let rows = filter.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(rows.iter().map(document).collect())
    }

    /// The document with this ID, else the latest with this referenceID.
    pub async fn find_document(
        &self,
        owner: Owner<'_>,
        path: &str,
    ) -> Result<Option<DocumentRow>, RecordError> {
        let sql = format!(
            "SELECT {DOC_COLUMNS} FROM documents WHERE account_id = $1 AND environment = $2 \
             AND (id = $3 OR reference_id = $3) ORDER BY CASE WHEN id = $3 THEN 0 ELSE 1 END, id DESC LIMIT 1"
        );
        let row = sqlx::query(&sql)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(path)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(document))
    }

    /// A document's output (JSON text), if the document is the owner's.
    pub async fn document_output(&self, owner: Owner<'_>, id: &str) -> Result<Option<String>, RecordError> {
        let row = sqlx::query(
            "SELECT output FROM documents WHERE account_id = $1 AND environment = $2 AND id = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| row.get("output")))
    }

    /// Documents by ID (those that exist).
    pub async fn documents_by_ids(
        &self,
        owner: Owner<'_>,
        ids: &[String],
    ) -> Result<Vec<DocumentRow>, RecordError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut filter = Filter::default();
        filter.eq("account_id", owner.account_id).eq("environment", owner.environment).any_of("id", ids);
        let sql = format!("SELECT {DOC_COLUMNS} FROM documents {}", filter.where_clause());
        let rows = filter.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(rows.iter().map(document).collect())
    }

    /// Whether any document of the tenant was linked into the knowledge graph.
    pub async fn any_memory_linked(&self, owner: Owner<'_>) -> Result<bool, RecordError> {
        let row = sqlx::query(
            "SELECT id FROM documents WHERE account_id = $1 AND environment = $2 AND memory_linked = 1 LIMIT 1",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// The items of one scope of a document, in order: every one, or the first `limit`.
    pub async fn document_items(
        &self,
        owner: Owner<'_>,
        document_id: &str,
        scope: &str,
        limit: Option<u32>,
    ) -> Result<Vec<ItemRow>, RecordError> {
        let limit = limit.map(|n| format!(" LIMIT {n}")).unwrap_or_default();
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM document_items WHERE document_id = $1 AND account_id = $2 \
             AND environment = $3 AND scope = $4 ORDER BY id{limit}"
        );
        let rows = sqlx::query(&sql)
            .bind(document_id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(scope)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(item).collect())
    }

    /// The section of a document with this label (labels are unique within a document).
    pub async fn document_section(
        &self,
        owner: Owner<'_>,
        document_id: &str,
        label: &str,
    ) -> Result<Option<ItemRow>, RecordError> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM document_items WHERE document_id = $1 AND account_id = $2 \
             AND environment = $3 AND scope = 'sections' AND label = $4 ORDER BY id LIMIT 1"
        );
        let row = sqlx::query(&sql)
            .bind(document_id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(label)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(item))
    }

    /// How many items of each `(scope, type)` a document has.
    pub async fn document_item_counts(
        &self,
        owner: Owner<'_>,
        document_id: &str,
    ) -> Result<Vec<(String, String, i64)>, RecordError> {
        let rows = sqlx::query(
            "SELECT scope, item_type, COUNT(*) AS n FROM document_items WHERE document_id = $1 \
             AND account_id = $2 AND environment = $3 GROUP BY scope, item_type",
        )
        .bind(document_id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(|row| (row.get("scope"), row.get("item_type"), row.get("n"))).collect())
    }

    /// Candidate items of a search, in ID order: narrowed by the index when `literal` is
    /// long enough, never missing a match of it. Streamed, they stop once their texts pass
    /// `max_bytes` (one item at least; then `true`: the batch is cut, not the end).
    pub async fn search_items(
        &self,
        owner: Owner<'_>,
        query: &ItemQuery<'_>,
        max_bytes: usize,
    ) -> Result<(Vec<ItemRow>, bool), RecordError> {
        let mut filter = self.item_filter(owner, query);
        let cursor = match query.after {
            Some(id) => super::filters::Cursor::After(id.to_string()),
            None => super::filters::Cursor::First,
        };
        let sql = filter.page_sql(ITEM_COLUMNS, "document_items", "id", &cursor, true, query.limit);
        let mut rows = filter.bind(sqlx::query(&sql)).fetch(&self.pool);
        let (mut items, mut bytes) = (Vec::new(), 0);
        while let Some(row) = rows.try_next().await? {
            let found = item(&row);
            bytes += found.text.len();
            items.push(found);
            if bytes > max_bytes {
                return Ok((items, true));
            }
        }
        Ok((items, false))
    }

    /// How many items contain `query.literal` (any case), counted by the database.
    pub async fn count_items(&self, owner: Owner<'_>, query: &ItemQuery<'_>) -> Result<i64, RecordError> {
        let filter = self.item_filter(owner, query);
        let mut sql = format!("SELECT COUNT(*) AS n FROM document_items {}", filter.where_clause());
        if let Some(literal) = query.literal {
            // The index only narrows; LIKE decides (SQLite's LIKE folds ASCII case only, as
            // PostgreSQL's LOWER does not; both fold what agents search for).
            sql.push_str(&format!(
                " AND LOWER(text) LIKE {} ESCAPE '\\'",
                quoted(&contains_pattern(literal))
            ));
        }
        let row = filter.bind(sqlx::query(&sql)).fetch_one(&self.pool).await?;
        Ok(row.get::<i64, _>("n"))
    }

    fn item_filter(&self, owner: Owner<'_>, query: &ItemQuery<'_>) -> Filter {
        let mut filter = Filter::default();
        filter.eq("account_id", owner.account_id).eq("environment", owner.environment);
        if let Some(document_id) = query.document_id {
            filter.eq("document_id", document_id);
        }
        filter.any_of("scope", query.scopes);
        if let Some(literal) = query.literal.filter(|l| l.chars().count() >= 3) {
            let clause = match self.dialect {
                // A trigram phrase matches the literal as a substring, any case.
                Dialect::Sqlite => format!(
                    "rowid IN (SELECT rowid FROM document_items_fts WHERE document_items_fts MATCH {})",
                    quoted(&format!("\"{}\"", literal.replace('"', "\"\"")))
                ),
                Dialect::Postgres => format!("text ILIKE {} ESCAPE '\\'", quoted(&contains_pattern(literal))),
            };
            filter.raw(&clause);
        }
        filter
    }
}

/// A SQL string literal (quotes doubled). Used for the search literal, which goes into the
/// statement text because the filter numbers its own placeholders.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
