//! Paging through time-ordered IDs in windows: IDs are `<prefix>_<ULID>`, so an ID range
//! `[from, to)` is a creation-time range that the engines answer from the ID index without
//! touching the rest of the tenant. A page is filled from consecutive windows.
//!
//! The engine reads and sorts every row of a window before the page's limit applies (about
//! 1.6 µs a row on FalkorDB, against ~0.3 ms for a statement's round trip), so a window
//! should hold a few pages' worth of rows, not thousands: IDs minted together share a
//! millisecond (a seed job mints thousands in a few), so windows are measured in ULID units,
//! finer than a millisecond (the 80 random bits spread one millisecond's IDs evenly). The
//! first window is sized from the densest stretch seen in this tenant's IDs so far
//! ([`WindowMemo`]); an empty window doubles the next, a partly filled one sizes the next
//! from the density it saw (at most four times wider). After an empty window, entity walks
//! ask where IDs were next minted ([`super::id_blocks`]) and skip the quiet time between.
//!
//! A page reads a bounded part of the tenant ([`PageScan`]): past it, the page ends short,
//! with the cursor of where its scan stopped, so a filter that matches nothing (a fully
//! reviewed queue) no longer reads every row after the cursor in one request. A page may so
//! hold fewer rows than its `limit`, none even, and still say more may follow: the next page
//! goes on from there, and every row is still listed once.

use super::columns::str_col;
use super::id_blocks::Gap;
use super::id_keys::{id_key, timestamp, ulid_of};
use super::{GraphService, Tenant};
use crate::error::ServiceResult;
use crate::params;
use crate::store::graph::{Params, Row};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use ulid::Ulid;

/// How much of a tenant's rows one page may read before it ends short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageScan {
    /// FalkorDB: the time a page's windows may take together, checked between windows (the
    /// first window always runs). Its index hands out no order, so time is what it can bound.
    pub time: Duration,
    /// Neo4j: the tenant's rows (entities or edges, in ID order) one page's statement reads.
    pub rows: usize,
}

/// A second of windows on FalkorDB (~600,000 rows at 1.6 µs); 100,000 rows on Neo4j (tens of
/// milliseconds). A page whose filter matches often never comes near either.
pub const PAGE_SCAN: PageScan = PageScan { time: Duration::from_secs(1), rows: 100_000 };

/// A page's rows in ID order, and where its scan stopped when it stopped the page short.
pub(crate) struct PageRows {
    /// `limit` rows and, when more follow, one or two more; fewer when the scan stopped.
    pub rows: Vec<Row>,
    /// The cursor the next page goes on from when the scan bound ended this one short.
    pub resume: Option<String>,
}

impl PageRows {
    /// The page's first `limit` rows, and the next page's cursor: the last row's ID when more
    /// rows are in hand, where the scan stopped when it ended the page short, else none.
    pub fn into_page(mut self, limit: usize, id_column: &str) -> (Vec<Row>, Option<String>) {
        if self.rows.len() > limit {
            self.rows.truncate(limit);
            let next = self.rows.last().map(|row| str_col(row, id_column));
            return (self.rows, next);
        }
        (self.rows, self.resume)
    }
}

/// One millisecond in ULID units (below it, 80 random bits).
const MS: u128 = 1 << 80;
/// First window width when nothing is known of the tenant's density.
const FIRST_WINDOW: u128 = 10 * MS;
/// Rows a window aims at, as a multiple of the rows still wanted: a narrower window saves
/// little (a row costs far less than a round trip) and risks one more.
const AIM: f64 = 4.0;
/// Growth after an empty window, and the most after a partly filled one: a window that grows
/// faster overshoots into whatever dense stretch follows a sparse one (seen: a window grown
/// 37-fold after 5 rows read a seed's 15,000 rows, 52 ms).
const EMPTY_GROWTH: u128 = 2;
const MAX_GROWTH: f64 = 4.0;

pub struct IdWindows {
    prefix: &'static str,
    from: u128,
    width: u128,
    end: u128,
    /// The last window handed out, to read the density of what it gave.
    last: (u128, u128),
    /// The densest stretch this walk saw, in rows per ULID unit.
    densest: f64,
    /// The first window's width, which a walk resumes with after skipping a quiet time.
    first_width: u128,
}

impl IdWindows {
    /// Windows over IDs after `cursor` (or from `start_ms` without one) up to now, the first
    /// sized to hold about `wanted` rows at `density` (rows per ULID unit, see [`WindowMemo`]).
    pub fn new(
        prefix: &'static str,
        cursor: Option<&str>,
        start_ms: u64,
        density: Option<f64>,
        wanted: usize,
    ) -> Self {
        let end = u128::from(chrono::Utc::now().timestamp_millis().max(0) as u64 + 1_000) * MS;
        let from = match cursor.and_then(|c| ulid_of(prefix, c)) {
            Some(at) => at,
            None => u128::from(start_ms) * MS,
        };
        let width = match density {
            Some(d) if d > 0.0 => ((AIM * wanted.max(1) as f64 / d) as u128).clamp(1, FIRST_WINDOW),
            _ => FIRST_WINDOW,
        };
        Self { prefix, from, width, end, last: (from, from), densest: 0.0, first_width: width }
    }

    /// The next `[from, to)` to query, or None once past now.
    pub fn next_window(&mut self) -> Option<(String, String)> {
        if self.from > self.end {
            return None;
        }
        let to = self.from.saturating_add(self.width);
        self.last = (self.from, to);
        let window = (id(self.prefix, self.from), id(self.prefix, to));
        self.from = to;
        Some(window)
    }

    /// Says what the last window gave: `rows` of the `asked` (the statement's limit), the last
    /// of them `last_id`. A full window tells the density up to its last row; a partly filled
    /// one sizes the next to hold what is still wanted (at most [`MAX_GROWTH`] times wider); an
    /// empty one doubles the next.
    pub fn found(&mut self, rows: usize, asked: usize, last_id: Option<&str>) {
        let (from, to) = self.last;
        let span = if rows >= asked {
            last_id.and_then(|l| ulid_of(self.prefix, l)).map_or(to - from, |l| l.saturating_sub(from) + 1)
        } else {
            to - from
        };
        if rows > 0 {
            self.densest = self.densest.max(rows as f64 / span.max(1) as f64);
        }
        if rows == 0 {
            self.width = self.width.saturating_mul(EMPTY_GROWTH);
        } else if rows < asked {
            let growth = (AIM * (asked - rows) as f64 / rows as f64).clamp(1.0, MAX_GROWTH);
            self.width = ((self.width as f64) * growth) as u128;
        }
    }

    /// The millisecond where the next window starts, and the one where the walk ends.
    fn next_ms(&self) -> (u64, u64) {
        ((self.from / MS) as u64, (self.end / MS) as u64 + 1)
    }

    /// Moves the walk past a quiet time: to millisecond `ms` (past the end when None), with
    /// the first window's width when `narrow` (the IDs there may be dense), else the width it
    /// has grown to.
    fn resume_at(&mut self, ms: Option<u64>, narrow: bool) {
        self.from = match ms {
            Some(ms) => (u128::from(ms) * MS).max(self.from),
            None => self.end + 1,
        };
        if narrow {
            self.width = self.first_width;
        }
    }

    /// A cursor for a page going on where this walk stopped: just before the next window (the
    /// last window read ends there; a row with this very ID, in that window, was read). None
    /// once past now.
    fn resume_cursor(&self) -> Option<String> {
        (self.from <= self.end).then(|| id(self.prefix, self.from.saturating_sub(1)))
    }

    /// The densest stretch this walk saw (rows per ULID unit), for [`WindowMemo::observe`].
    pub fn densest(&self) -> Option<f64> {
        (self.densest > 0.0).then_some(self.densest)
    }
}

/// What is kept of each tenant's IDs of a kind (`ent`, `rel`), per process: the densest
/// stretch seen (rows per ULID unit, the first window's size; it only grows, so a first
/// window never holds many more rows than wanted, and a sparse stretch pays a few more
/// windows), and where they begin: the creation time of the first one,
/// found once per process and kept. A first page walks windows from there, not from the
/// tenant's start: windows doubling across the quiet time before the first entity land on a
/// wide window of dense data, which the engine reads and sorts whole (seen: first pages of a
/// 1,000,000-entity review queue at 24–28 ms, other pages at 4–5 ms).
///
/// A kept start stays a lower bound: IDs are minted from the clock when an entity or a
/// relation is created, so later ones are larger. (An ID minted by a process whose clock is
/// behind the first one's by more than the gap is the exception, and only at a tenant's
/// very beginning.)
#[derive(Default)]
pub struct WindowMemo(Mutex<HashMap<(String, String, &'static str), Kept>>);

#[derive(Clone, Copy, Default)]
struct Kept {
    start: Option<u64>,
    densest: Option<f64>,
    /// Since when every ID has its block ([`super::id_blocks`]).
    blocks_since: Option<u64>,
}

impl WindowMemo {
    fn key(tenant: &Tenant, prefix: &'static str) -> (String, String, &'static str) {
        (tenant.account_id.clone(), tenant.environment.as_str().to_string(), prefix)
    }

    fn kept(&self, tenant: &Tenant, prefix: &'static str) -> Kept {
        let memo = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        memo.get(&Self::key(tenant, prefix)).copied().unwrap_or_default()
    }

    fn update(&self, tenant: &Tenant, prefix: &'static str, change: impl FnOnce(&mut Kept)) {
        let mut memo = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        change(memo.entry(Self::key(tenant, prefix)).or_default());
    }

    pub fn start(&self, tenant: &Tenant, prefix: &'static str) -> Option<u64> {
        self.kept(tenant, prefix).start
    }

    pub fn remember_start(&self, tenant: &Tenant, prefix: &'static str, ms: u64) {
        self.update(tenant, prefix, |kept| kept.start = Some(ms));
    }

    pub fn density(&self, tenant: &Tenant, prefix: &'static str) -> Option<f64> {
        self.kept(tenant, prefix).densest
    }

    pub fn blocks_since(&self, tenant: &Tenant) -> Option<u64> {
        self.kept(tenant, "ent").blocks_since
    }

    pub fn remember_blocks_since(&self, tenant: &Tenant, ms: u64) {
        self.update(tenant, "ent", |kept| kept.blocks_since = Some(ms));
    }

    /// Keeps what a walk of windows saw, when it was denser than anything before.
    pub fn observe(&self, tenant: &Tenant, prefix: &'static str, windows: &IdWindows) {
        if let Some(seen) = windows.densest() {
            self.update(tenant, prefix, |kept| {
                kept.densest = Some(kept.densest.map_or(seen, |d| d.max(seen)))
            });
        }
    }
}

/// One page of a query over time-ordered IDs (the review queue, the knowledge graph's edges).
pub(crate) struct WindowedPage<'a> {
    pub prefix: &'static str,
    /// The statement a window runs.
    pub query: &'static str,
    /// The same page in one statement, on an engine whose index hands IDs out in order
    /// ([`crate::store::graph::CypherEngine::orders_by_index`]): `query`'s filters after
    /// `$after`, `ORDER BY` the ID, `LIMIT $limit`.
    pub ordered: &'static str,
    /// The column holding each row's ID.
    pub id_column: &'static str,
    /// The query's parameters with every filter off (to find where the tenant's rows begin).
    pub unfiltered: Params,
    /// The page's own parameters; each window adds `from`, `to` and `limit`.
    pub filters: Params,
    pub cursor: Option<&'a str>,
    /// Creation time (ms) the page's `since` filter starts at, 0 without one.
    pub since_ms: u64,
    pub limit: usize,
}

impl GraphService {
    /// A page's rows in ID order after its cursor (the cursor's own row left out), from
    /// consecutive windows until more than `limit` are in hand, the windows pass now, or the
    /// page's scan time ([`PageScan::time`]) is spent: the caller keeps `limit` and tells from
    /// the rest, or from where the scan stopped, whether more follow ([`PageRows::into_page`]).
    pub(crate) async fn windowed_rows(
        &self,
        tenant: &Tenant,
        page: WindowedPage<'_>,
    ) -> ServiceResult<PageRows> {
        if self.engine.orders_by_index() {
            return self.ordered_rows(tenant, page).await;
        }
        let WindowedPage { prefix, query, id_column, unfiltered, filters, cursor, since_ms, limit, .. } =
            page;
        let scan_began = Instant::now();
        let start = self
            .page_start_ms(tenant, cursor, prefix, query, unfiltered, id_column)
            .await?
            .max(since_ms.saturating_sub(1_000));
        let density = self.window_memo.density(tenant, prefix);
        let mut windows = IdWindows::new(prefix, cursor, start, density, limit + 2);
        let mut rows: Vec<Row> = Vec::new();
        let mut resume = None;
        let mut walk = WalkLog::new();
        let mut gaps = GapSkips::new(prefix);
        while rows.len() <= limit {
            let Some((from, to)) = windows.next_window() else { break };
            let asked = limit + 2 - rows.len();
            let began = walk.window(prefix, &from, &to);
            let found = self.run(tenant, query, in_window(&filters, from, to, asked)).await?;
            walk.found(began, found.len());
            windows.found(found.len(), asked, found.last().map(|row| str_col(row, id_column)).as_deref());
            if found.is_empty() {
                self.skip_quiet_time(tenant, &mut windows, &mut gaps, &mut walk).await?;
            }
            rows.extend(found.into_iter().filter(|row| Some(str_col(row, id_column).as_str()) != cursor));
            if rows.len() <= limit && scan_began.elapsed() >= self.page_scan.time {
                resume = windows.resume_cursor();
                break;
            }
        }
        self.window_memo.observe(tenant, prefix, &windows);
        walk.report(prefix, cursor.is_some());
        Ok(PageRows { rows, resume })
    }

    /// [`Self::windowed_rows`] in one statement: the rows after the cursor (and from a second
    /// before `since`), `limit` and one more, among at most [`PageScan::rows`] of the tenant's,
    /// when the engine reads IDs in index order. A page that comes back short asks where its
    /// scan stopped (none when the tenant's rows ended first) and is read again up to there
    /// (or to the end): rows deleted between the statements moved that point on, past rows the
    /// first read never saw, which the last reads.
    async fn ordered_rows(&self, tenant: &Tenant, page: WindowedPage<'_>) -> ServiceResult<PageRows> {
        let WindowedPage { prefix, ordered, id_column, mut filters, cursor, since_ms, limit, .. } = page;
        // Below every ID minted since then (IDs order as their creation times do).
        let floor = id(prefix, u128::from(since_ms.saturating_sub(1_000)) * MS);
        let after = cursor.map_or(floor.clone(), |cursor| cursor.to_string()).max(floor);
        let scan = self.page_scan.rows.max(1);
        // Above every ID of the prefix ('`' follows '_'), ULID or not.
        let every = format!("{prefix}`");
        filters.insert("after".into(), Value::String(after.clone()));
        filters.insert("until".into(), Value::String(every.clone()));
        filters.insert("limit".into(), Value::from(limit + 1));
        filters.insert("scan".into(), Value::from(scan));
        let rows = self.ordered_page(tenant, ordered, &filters, id_column).await?;
        if rows.len() > limit {
            return Ok(PageRows { rows, resume: None });
        }
        let scan_end = if prefix == "rel" {
            super::queries::RELATION_SCAN_END_ORDERED
        } else {
            super::queries::ENTITY_SCAN_END_ORDERED
        };
        let ended = self
            .run(tenant, scan_end, params! { "after" => after, "until" => every, "skip" => scan - 1 })
            .await?;
        let end = ended.first().map(|row| str_col(row, "scannedTo"));
        // Read again to there, or to the tenant's end when fewer than a scan's rows are left
        // now (rows deleted meanwhile may have brought it there: the first read may have
        // stopped at its bound short of rows that no read would see).
        filters.insert("until".into(), Value::String(end.clone().unwrap_or(every)));
        let rows = self.ordered_page(tenant, ordered, &filters, id_column).await?;
        Ok(PageRows { rows, resume: end })
    }

    /// One ordered page statement's rows, in ID order (the one-statement pages group their
    /// records; the others come in index order).
    async fn ordered_page(
        &self,
        tenant: &Tenant,
        ordered: &'static str,
        filters: &Params,
        id_column: &str,
    ) -> ServiceResult<Vec<Row>> {
        let mut rows = self.run(tenant, ordered, filters.clone()).await?;
        rows.sort_by_cached_key(|row| str_col(row, id_column));
        Ok(rows)
    }

    /// Where a page of `prefix` IDs starts its windows: 0 after a cursor (the windows start
    /// at the cursor); else the kept start, or, found the first time, the creation time of the
    /// first row `query` returns with `unfiltered` parameters (one row per window). When there
    /// is none yet, the walk has shown there is none before it began, so the page starts a
    /// second before that instead of walking the same empty windows again.
    pub(crate) async fn page_start_ms(
        &self,
        tenant: &Tenant,
        cursor: Option<&str>,
        prefix: &'static str,
        query: &'static str,
        unfiltered: Params,
        id_column: &str,
    ) -> ServiceResult<u64> {
        if cursor.is_some() {
            return Ok(0);
        }
        if let Some(start) = self.window_memo.start(tenant, prefix) {
            return Ok(start);
        }
        let began = chrono::Utc::now().timestamp_millis().max(0) as u64;
        let tenant_start = self.tenant_start_ms(tenant).await?;
        let mut windows = IdWindows::new(prefix, None, tenant_start, None, 1);
        let (mut gaps, mut unreported) = (GapSkips::new(prefix), WalkLog::new());
        while let Some((from, to)) = windows.next_window() {
            let rows = self.run(tenant, query, in_window(&unfiltered, from, to, 1)).await?;
            if let Some(first) = rows.first().and_then(|row| timestamp(prefix, &str_col(row, id_column))) {
                self.window_memo.remember_start(tenant, prefix, first);
                return Ok(first);
            }
            windows.found(0, 1, None);
            self.skip_quiet_time(tenant, &mut windows, &mut gaps, &mut unreported).await?;
        }
        Ok(began.saturating_sub(1_000).max(tenant_start))
    }
}

/// How a walk skips quiet times after empty windows ([`super::id_blocks`]; entity IDs only).
/// The first skip resumes with a narrow window (a burst may follow the quiet time); later ones
/// keep the grown width, and once the blocks show IDs where a window found no row (the
/// filters dropped them), the walk stops asking: there, a window per burst and a probe per
/// window would cost more than the doubling windows they replace.
struct GapSkips {
    asking: bool,
    skipped: bool,
}

impl GapSkips {
    fn new(prefix: &str) -> Self {
        Self { asking: prefix == "ent", skipped: false }
    }
}

impl GraphService {
    /// After an empty window: where IDs were next minted, and the walk moved there.
    async fn skip_quiet_time(
        &self,
        tenant: &Tenant,
        windows: &mut IdWindows,
        gaps: &mut GapSkips,
        walk: &mut WalkLog,
    ) -> ServiceResult<()> {
        if !gaps.asking {
            return Ok(());
        }
        let (at_ms, end_ms) = windows.next_ms();
        let resume = match self.next_minted(tenant, at_ms, end_ms).await? {
            Gap::NotKept => return Ok(()),
            Gap::Minted => {
                gaps.asking = false;
                return Ok(());
            }
            Gap::NoneUntil(ms) => Some(ms),
            Gap::NoneLeft => None,
        };
        walk.skipped(at_ms, resume);
        windows.resume_at(resume, !gaps.skipped);
        gaps.skipped = true;
        Ok(())
    }
}

/// Each window of one page's walk (its width, the rows it gave, its statement's time) and the
/// quiet times it skipped, kept only when debug logging is on:
/// `CANON_LOG=canon::graph::window=debug` shows why a page was slow. Seen so: a cursor at the
/// end of a burst of IDs doubled empty windows across the quiet time after it (0.5 → 120 ms
/// of IDs, ~0.2 ms each) until one landed on the next burst whole (5–8 ms at 1,000,000
/// entities: FalkorDB's range index scan reads every ID in the window, even for `LIMIT 1`
/// without `ORDER BY`, and not in ID order), which the blocks of minted IDs now skip.
struct WalkLog {
    started: Option<std::time::Instant>,
    windows: Vec<String>,
}

impl WalkLog {
    fn new() -> Self {
        let on = tracing::enabled!(target: "canon::graph::window", tracing::Level::DEBUG);
        Self { started: on.then(std::time::Instant::now), windows: Vec::new() }
    }

    /// A window is asked for; returns when, if logging.
    fn window(&self, prefix: &str, from: &str, to: &str) -> Option<(std::time::Instant, f64)> {
        self.started?;
        let width = match (ulid_of(prefix, from), ulid_of(prefix, to)) {
            (Some(from), Some(to)) => to.saturating_sub(from) as f64 / MS as f64,
            _ => 0.0,
        };
        Some((std::time::Instant::now(), width))
    }

    fn found(&mut self, began: Option<(std::time::Instant, f64)>, rows: usize) {
        if let Some((at, width)) = began {
            let ms = at.elapsed().as_secs_f64() * 1e3;
            self.windows.push(format!("{width:.3} ms wide: {rows} rows in {ms:.2} ms"));
        }
    }

    fn skipped(&mut self, from_ms: u64, to_ms: Option<u64>) {
        if self.started.is_some() {
            let to = to_ms.map_or("the end".to_string(), |ms| format!("{} ms on", ms - from_ms));
            self.windows.push(format!("no IDs minted until {to}"));
        }
    }

    fn report(&self, prefix: &str, after_cursor: bool) {
        if let Some(started) = self.started {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            tracing::debug!(target: "canon::graph::window", prefix, after_cursor, ms, windows = %self.windows.join(", "), "page walked");
        }
    }
}

/// A window's statement parameters: `params` with its bounds and how many rows it may give.
/// With them, the window's bounds as ID keys ([`super::id_keys`]), `to`'s rounded up.
pub fn in_window(params: &Params, from: String, to: String, limit: usize) -> Params {
    let mut params = params.clone();
    params.insert("fromKey".into(), Value::from(id_key(&from)));
    params.insert("toKey".into(), Value::from(id_key(&to).map(|k| k + 1)));
    params.insert("from".into(), Value::String(from));
    params.insert("to".into(), Value::String(to));
    params.insert("limit".into(), Value::from(limit));
    params
}

/// The ID at a position of the ULID space (a window's bound).
fn id(prefix: &str, at: u128) -> String {
    format!("{prefix}_{}", Ulid(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_contiguous_growing_while_empty_and_end_after_now() {
        let start = chrono::Utc::now().timestamp_millis() as u64 - 10_000;
        let mut windows = IdWindows::new("ent", None, start, None, 10);
        let (a_from, a_to) = windows.next_window().unwrap();
        windows.found(0, 10, None);
        let (b_from, b_to) = windows.next_window().unwrap();
        assert_eq!(a_to, b_from, "no gap, no overlap");
        assert!(a_from < a_to && b_from < b_to);
        let width = |from: &str, to: &str| ulid_of("ent", to).unwrap() - ulid_of("ent", from).unwrap();
        assert_eq!(width(&a_from, &a_to), FIRST_WINDOW);
        assert_eq!(width(&b_from, &b_to), EMPTY_GROWTH * FIRST_WINDOW);
        assert!(windows.take_while_count() < 20, "ten seconds take few windows");
    }

    #[test]
    fn a_dense_stretch_is_remembered_and_sizes_the_next_first_window_below_a_millisecond() {
        // 3,000 IDs minted within one millisecond, as a seed job mints them.
        let ms = chrono::Utc::now().timestamp_millis() as u64 - 5_000;
        let mut minted: Vec<u128> =
            (0..3_000).map(|_| u128::from(ms) * MS + u128::from(rand::random::<u64>()) * (1 << 16)).collect();
        minted.sort();
        let mut windows = IdWindows::new("ent", None, ms, None, 52);
        let (from, to) = windows.next_window().unwrap();
        let (from, to) = (ulid_of("ent", &from).unwrap(), ulid_of("ent", &to).unwrap());
        let inside: Vec<&u128> = minted.iter().filter(|&&m| m >= from && m < to).take(52).collect();
        assert_eq!(inside.len(), 52, "a 10 ms window holds all of them; the engine gives 52");
        windows.found(52, 52, Some(&id("ent", *inside[51])));
        let density = windows.densest().expect("a full window tells the density");

        let mut next = IdWindows::new("ent", Some(&id("ent", *inside[51])), 0, Some(density), 52);
        let (from, to) = next.next_window().unwrap();
        let (from, to) = (ulid_of("ent", &from).unwrap(), ulid_of("ent", &to).unwrap());
        assert!(to - from < MS, "narrower than a millisecond");
        let held = minted.iter().filter(|&&m| m >= from && m < to).count();
        assert!((52..=52 * 8).contains(&held), "holds a few pages' worth, not 3,000: {held}");
    }

    #[test]
    fn a_partly_filled_window_sizes_the_next_from_what_it_saw() {
        let mut windows = IdWindows::new("ent", None, 1_000, None, 52);
        windows.next_window();
        windows.found(13, 52, None);
        let (from, to) = windows.next_window().unwrap();
        let width = ulid_of("ent", &to).unwrap() - ulid_of("ent", &from).unwrap();
        // 39 more wanted at 13 per window: three windows' worth, aimed at four times that,
        // but never more than four times wider.
        assert_eq!(width, 4 * FIRST_WINDOW);
        windows.found(40, 52, None);
        let (from, to) = windows.next_window().unwrap();
        let next = ulid_of("ent", &to).unwrap() - ulid_of("ent", &from).unwrap();
        let ratio = next as f64 / (4 * FIRST_WINDOW) as f64;
        assert!((ratio - 1.2).abs() < 1e-9, "12 more at 40 a window, aimed at four times that: {ratio}");
    }

    #[test]
    fn a_cursor_starts_the_first_window_at_itself() {
        let id = format!("ent_{}", Ulid::new());
        let mut windows = IdWindows::new("ent", Some(&id), 0, None, 50);
        assert_eq!(windows.next_window().unwrap().0, id);
    }

    impl IdWindows {
        fn take_while_count(&mut self) -> usize {
            std::iter::from_fn(|| self.next_window().inspect(|_| self.found(0, 10, None))).count()
        }
    }
}
