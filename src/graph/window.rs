//! Paging through time-ordered IDs in windows: IDs are `<prefix>_<ULID>`, so an ID range
//! `[from, to)` is a creation-time range that the engines answer from the ID index without
//! touching the rest of the tenant. A page is filled from consecutive windows that start
//! small and double while they come back (nearly) empty, so a dense tenant needs one small
//! window and a sparse one a few more.

use super::entities::str_col;
use super::{GraphService, Tenant};
use crate::error::ServiceResult;
use crate::store::graph::Params;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use ulid::Ulid;

/// First window width. The engine reads and sorts every row of a window before the page's
/// limit applies, so a narrow first window keeps dense data cheap (a 1,000,000-entity tenant
/// seeded at ~10k/s: a 100 ms window held 1,259 entities and took 3 ms; 10 ms, 0.9 ms), and
/// sparse data pays a few more empty windows as they double.
const FIRST_WINDOW_MS: u64 = 10;

pub struct IdWindows {
    prefix: &'static str,
    from: String,
    from_ms: u64,
    width_ms: u64,
    end_ms: u64,
}

impl IdWindows {
    /// Windows over IDs after `cursor` (or from `start_ms` without one) up to now.
    pub fn new(prefix: &'static str, cursor: Option<&str>, start_ms: u64) -> Self {
        let end_ms = chrono::Utc::now().timestamp_millis().max(0) as u64 + 1_000;
        let (from, from_ms) = match cursor.and_then(|c| Some((c, timestamp(prefix, c)?))) {
            Some((cursor, ms)) => (cursor.to_string(), ms),
            None => (bound(prefix, start_ms), start_ms),
        };
        Self { prefix, from, from_ms, width_ms: FIRST_WINDOW_MS, end_ms }
    }

    /// The next `[from, to)` to query, or None once past now.
    pub fn next_window(&mut self) -> Option<(String, String)> {
        if self.from_ms > self.end_ms {
            return None;
        }
        let to_ms = self.from_ms.saturating_add(self.width_ms);
        let window = (self.from.clone(), bound(self.prefix, to_ms));
        self.from = window.1.clone();
        self.from_ms = to_ms;
        Some(window)
    }

    /// Says what the last window gave: a window that gave less than half of what is still
    /// needed doubles the next one; one that gave more keeps its width (dense data stays in
    /// small windows, which the engine sorts quickly).
    pub fn found(&mut self, rows: usize, still_needed: usize) {
        if rows * 2 < still_needed {
            self.width_ms = self.width_ms.saturating_mul(2);
        }
    }
}

/// Where each tenant's IDs of a kind (`ent`, `rel`) begin: the creation time of the first one,
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
pub struct DataStarts(Mutex<HashMap<(String, String, &'static str), u64>>);

impl DataStarts {
    pub fn get(&self, tenant: &Tenant, prefix: &'static str) -> Option<u64> {
        let starts = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        starts.get(&(tenant.account_id.clone(), tenant.environment.as_str().to_string(), prefix)).copied()
    }

    pub fn remember(&self, tenant: &Tenant, prefix: &'static str, ms: u64) {
        let mut starts = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        starts.insert((tenant.account_id.clone(), tenant.environment.as_str().to_string(), prefix), ms);
    }
}

impl GraphService {
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
        if let Some(start) = self.data_starts.get(tenant, prefix) {
            return Ok(start);
        }
        let began = chrono::Utc::now().timestamp_millis().max(0) as u64;
        let tenant_start = self.tenant_start_ms(tenant).await?;
        let mut windows = IdWindows::new(prefix, None, tenant_start);
        while let Some((from, to)) = windows.next_window() {
            let mut params = unfiltered.clone();
            params.insert("from".into(), Value::String(from));
            params.insert("to".into(), Value::String(to));
            params.insert("limit".into(), Value::from(1));
            let rows = self.run(tenant, query, params).await?;
            if let Some(first) = rows.first().and_then(|row| timestamp(prefix, &str_col(row, id_column))) {
                self.data_starts.remember(tenant, prefix, first);
                return Ok(first);
            }
            windows.found(0, 1);
        }
        Ok(began.saturating_sub(1_000).max(tenant_start))
    }
}

/// The smallest ID of a millisecond.
fn bound(prefix: &str, ms: u64) -> String {
    format!("{prefix}_{}", Ulid::from_parts(ms.min((1 << 48) - 1), 0))
}

/// The creation time in an ID, if it is one of `prefix`.
pub fn timestamp(prefix: &str, id: &str) -> Option<u64> {
    let ulid = id.strip_prefix(prefix)?.strip_prefix('_')?;
    Ulid::from_string(ulid).ok().map(|u| u.timestamp_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_contiguous_doubling_and_end_after_now() {
        let start = chrono::Utc::now().timestamp_millis() as u64 - 10_000;
        let mut windows = IdWindows::new("ent", None, start);
        let (a_from, a_to) = windows.next_window().unwrap();
        windows.found(0, 10);
        let (b_from, b_to) = windows.next_window().unwrap();
        assert_eq!(a_to, b_from, "no gap, no overlap");
        assert!(a_from < a_to && b_from < b_to);
        assert_eq!(
            timestamp("ent", &b_to).unwrap() - timestamp("ent", &b_from).unwrap(),
            2 * FIRST_WINDOW_MS
        );
        assert!(windows.take_while_count() < 20, "ten seconds take few windows");
    }

    #[test]
    fn a_cursor_starts_the_first_window_at_itself() {
        let id = format!("ent_{}", Ulid::new());
        let mut windows = IdWindows::new("ent", Some(&id), 0);
        assert_eq!(windows.next_window().unwrap().0, id);
    }

    impl IdWindows {
        fn take_while_count(&mut self) -> usize {
            std::iter::from_fn(|| self.next_window().inspect(|_| self.found(0, 10))).count()
        }
    }
}
