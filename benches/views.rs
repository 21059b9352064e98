//! Views: `POST /v3/views/table-data` (a page of 50, filtered) and
//! `POST /v3/views/aggregation-data` (a 20-group aggregation) over 100,000 output events of
//! two functions, p50/p99 through the API, beside the plain SQL that reads the same rows
//! straight from the database in the same run: from `event_outputs`, the copy canon reads
//! (the limit), and from the events' own bodies. On SQLite, then on PostgreSQL
//! when `CANON_BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test) answers
//! (`CANON_BENCH_SKIP_SQLITE=1` for PostgreSQL alone).
//! Goal: p99 ≤ 100 ms for both. Each side runs three untimed reads first.

mod common;

use canon::store::records::events::NewEvent;
use canon::store::records::Owner;
use futures::StreamExt;
use serde_json::{json, Value};
use sqlx::Row;
use std::time::{Duration, Instant};

const EVENTS: usize = 100_000;
const RUNS: usize = 60;
/// Runs before the timed ones, each side alike: the first reads fill the caches.
const WARMUP: usize = 3;
const GROUPS: usize = 20;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    sqlx::any::install_default_drivers();
    if std::env::var_os("CANON_BENCH_SKIP_SQLITE").is_none() {
        run(None).await?;
    }
    let admin = std::env::var("CANON_BENCH_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    match common::BenchDatabase::create(&admin, "canon_bench_views").await {
        Ok(database) => {
            let result = run(Some(database.url.clone())).await;
            // The database is dropped whatever the run did: 100,000 events each time add up.
            database.remove().await;
            result?;
        }
        Err(err) => println!("views on PostgreSQL: skipped ({err})"),
    }
    Ok(())
}

/// One database: load, then time canon and the plain SQL.
async fn run(database_url: Option<String>) -> anyhow::Result<()> {
    let mut sqlite_file = None;
    let postgres = database_url.is_some();
    let records = match &database_url {
        Some(url) => common::RecordStore::Postgres(url.clone()),
        None => common::RecordStore::Sqlite,
    };
    let bench = common::start_with(records, |config| {
        sqlite_file = Some(config.data_dir.join("canon.sqlite"));
    })
    .await?;
    let url = match &database_url {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", sqlite_file.expect("data dir").display()),
    };
    let schema = json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string"}, "total": {"type": "number"}, "vendor": {"type": "string"}}});
    let mut ids = Vec::new();
    for name in ["invoices", "receipts"] {
        let body = json!({"functionName": name, "type": "extract", "outputSchema": schema});
        let created: Value = bench.post("/v3/functions", &body).send().await?.json().await?;
        ids.push(created["function"]["functionID"].as_str().unwrap_or_default().to_string());
    }
    let loading = Instant::now();
    let owner = bench.tenant.owner();
    let now = canon::ids::now_millis();
    futures::stream::iter(0..EVENTS)
        .map(|n| record(&bench, owner, &ids, n, now))
        .buffer_unordered(if postgres { 16 } else { 1 })
        .collect::<Vec<anyhow::Result<()>>>()
        .await
        .into_iter()
        .collect::<anyhow::Result<()>>()?;
    let loaded = loading.elapsed();
    if postgres {
        // Statistics and the visibility map, as autovacuum leaves them within a minute of
        // such a load (without statistics PostgreSQL plans for one row and sorts 50,000 on
        // disk), and no autovacuum working beside the timed runs.
        let pool = sqlx::AnyPool::connect(&url).await?;
        sqlx::query("VACUUM ANALYZE events, event_outputs").execute(&pool).await?;
        pool.close().await;
    }

    let view = json!({
        "name": "bench", "functions": [{"name": "invoices"}, {"name": "receipts"}],
        "columns": [{"name": "number", "valueSchemaPath": ["invoiceNumber"], "displayOrderIndex": 0},
                    {"name": "total", "valueSchemaPath": ["total"], "displayOrderIndex": 1},
                    {"name": "vendor", "valueSchemaPath": ["vendor"], "displayOrderIndex": 2}],
        "filters": [{"columnName": "total", "filterType": "greater_than_number", "number": 50}],
        "aggregations": [{"name": "per vendor", "function": "sum", "aggregateColumnName": "total", "groupByColumnName": "vendor"}],
        "timeWindow": {"start": canon::ids::millis_rfc3339(now - 3_600_000), "end": canon::ids::millis_rfc3339(now + 3_600_000)},
        "limit": 50, "offset": 1000
    });
    let mut table = Vec::new();
    let mut groups = Vec::new();
    for run in 0..WARMUP + RUNS {
        let started = Instant::now();
        let response = bench.post("/v3/views/table-data", &view).send().await?;
        anyhow::ensure!(response.status() == 200, "table-data answered {}", response.status());
        let body: Value = response.json().await?;
        anyhow::ensure!(body["rows"].as_array().map(Vec::len) == Some(50), "a page of 50");
        let table_time = started.elapsed();
        let started = Instant::now();
        let response = bench.post("/v3/views/aggregation-data", &view).send().await?;
        anyhow::ensure!(response.status() == 200, "aggregation-data answered {}", response.status());
        let body: Value = response.json().await?;
        let count = body["aggregations"][0]["groups"].as_array().map(Vec::len);
        anyhow::ensure!(count == Some(GROUPS), "{GROUPS} groups, got {count:?}");
        if run >= WARMUP {
            table.push(table_time);
            groups.push(started.elapsed());
        }
    }
    let outputs = plain_sql(&url, postgres, Source::Outputs, owner, &ids, now).await?;
    let events = plain_sql(&url, postgres, Source::Events, owner, &ids, now).await?;
    let backend = if postgres { "PostgreSQL" } else { "SQLite" };
    println!(
        "views on {backend}: {EVENTS} output events of 2 functions (loaded in {:.1} s), {RUNS} runs each",
        loaded.as_secs_f64()
    );
    report("table-data, page of 50 (filtered)", &mut table, &mut outputs.0.clone(), &mut events.0.clone());
    report("aggregation-data, 20 groups", &mut groups, &mut outputs.1.clone(), &mut events.1.clone());
    bench.stop().await;
    Ok(())
}

/// canon's p50/p99 beside the plain SQL over the same copy canon reads (the limit) and over
/// the events' own bodies.
fn report(what: &str, canon: &mut [Duration], outputs: &mut [Duration], events: &mut [Duration]) {
    let p = |d: &mut [Duration]| {
        (common::ms(common::percentile(d, 0.5)), common::ms(common::percentile(d, 0.99)))
    };
    let ((c50, c99), (o50, o99), (e50, e99)) = (p(canon), p(outputs), p(events));
    println!(
        "  {what:<36} canon p50 {c50} ms p99 {c99} ms (goal p99 <= 100 ms) | plain SQL on the outputs copy \
         p50 {o50} ms p99 {o99} ms, on event bodies p50 {e50} ms p99 {e99} ms"
    );
}

async fn record(
    bench: &common::Bench,
    owner: Owner<'_>,
    ids: &[String],
    n: usize,
    now: i64,
) -> anyhow::Result<()> {
    let (function_id, function_name) =
        if n.is_multiple_of(2) { (&ids[0], "invoices") } else { (&ids[1], "receipts") };
    let id = canon::ids::new_ksuid();
    let content = json!({"invoiceNumber": format!("INV-{n}"), "total": (n % 100) as f64 + 0.5,
                         "vendor": format!("vendor-{}", n % GROUPS)});
    let body = json!({"eventID": id, "eventType": "extract", "createdAt": canon::ids::millis_rfc3339(now),
                      "functionID": function_id, "functionName": function_name, "functionVersionNum": 1,
                      "transformedContent": content});
    let key = format!("bench-{n}");
    let event = NewEvent {
        id: &id,
        event_type: "extract",
        body: &body,
        call_id: "wc_bench",
        function_call_id: &key,
        workflow_id: "wf_bench",
        workflow_name: "bench",
        function_id,
        function_name,
        function_version_num: 1,
        reference_id: "",
        intermediate: false,
        dedupe_key: &key,
        now,
    };
    bench.app.state.records.record_pipeline_event(owner, event).await?;
    Ok(())
}

/// `sql` with the scope's values bound.
fn bound<'q>(
    sql: &'q str,
    owner: Owner<'_>,
    ids: &[String],
    now: i64,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    // Planned for its own values each run, as canon's statements are (a kept statement goes
    // to a generic plan without parallel workers from its sixth run on).
    sqlx::query(sql)
        .persistent(false)
        .bind(owner.account_id.to_string())
        .bind(owner.environment.to_string())
        .bind(ids[0].clone())
        .bind(ids[1].clone())
        .bind(now - 3_600_000)
        .bind(now + 3_600_000)
}

/// Where the plain SQL reads: the copy of each output canon keeps for views, or the events'
/// own bodies (the record of truth the copy is written beside).
#[derive(Clone, Copy)]
enum Source {
    Outputs,
    Events,
}

/// The same two reads as hand-written SQL on a connection of its own.
async fn plain_sql(
    url: &str,
    postgres: bool,
    source: Source,
    owner: Owner<'_>,
    ids: &[String],
    now: i64,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let pool = sqlx::any::AnyPoolOptions::new().max_connections(1).connect(url).await?;
    // JSON values come back as text (the Any driver reads no jsonb).
    let (doc, at, table, id, not_error) = match (source, postgres) {
        (Source::Outputs, true) => ("e.content", "{", "event_outputs", "event_id", ""),
        (Source::Outputs, false) => ("e.content", "$", "event_outputs", "event_id", ""),
        (Source::Events, true) => {
            ("CAST(e.body AS JSONB)", "{transformedContent,", "events", "id", " AND e.event_type <> 'error'")
        }
        (Source::Events, false) => {
            ("e.body", "$.transformedContent", "events", "id", " AND e.event_type <> 'error'")
        }
    };
    let field = |name: &str| {
        if postgres {
            format!("({doc} #> '{at}{name}}}')")
        } else {
            format!("({doc} -> '{at}.{name}')")
        }
    };
    let (total, number, vendor) = (field("total"), field("invoiceNumber"), field("vendor"));
    let text = |value: &str| if postgres { format!("CAST({value} AS TEXT)") } else { value.to_string() };
    let numeric = if postgres {
        format!("CAST({total} AS DOUBLE PRECISION)")
    } else {
        format!("json_extract({doc}, '{at}.total')")
    };
    let scope = format!(
        "e.account_id = $1 AND e.environment = $2 AND e.function_id IN ($3, $4) \
         AND e.created_at >= $5 AND e.created_at < $6{not_error}"
    );
    let count = format!("SELECT COUNT(*) AS n FROM {table} e WHERE {scope} AND {numeric} > 50");
    let page = format!(
        "SELECT e.{id}, {} AS a, {} AS b, {} AS c FROM {table} e WHERE {scope} AND {numeric} > 50 \
         ORDER BY e.created_at, e.{id} LIMIT 50 OFFSET 1000",
        text(&number),
        text(&total),
        text(&vendor)
    );
    let grouped = format!(
        "SELECT {} AS g, SUM({numeric}) AS v FROM {table} e WHERE {scope} AND {numeric} > 50 \
         GROUP BY 1 ORDER BY 2 DESC LIMIT 200",
        text(&vendor)
    );
    let bind = |sql| bound(sql, owner, ids, now);
    let (mut table, mut groups) = (Vec::new(), Vec::new());
    for run in 0..WARMUP + RUNS {
        let started = Instant::now();
        let n: i64 = bind(&count).fetch_one(&pool).await?.get("n");
        let rows = bind(&page).fetch_all(&pool).await?;
        anyhow::ensure!(n > 0 && rows.len() == 50, "plain page");
        let table_time = started.elapsed();
        let started = Instant::now();
        let rows = bind(&grouped).fetch_all(&pool).await?;
        anyhow::ensure!(rows.len() == GROUPS, "plain groups");
        if run >= WARMUP {
            table.push(table_time);
            groups.push(started.elapsed());
        }
    }
    pool.close().await;
    Ok((table, groups))
}
