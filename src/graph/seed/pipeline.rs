//! Writing a seed's prepared rows: 500 a statement, each statement split into waves in
//! which no two rows share a key, with one wave kept in flight ahead of the engine when it
//! commutes with the one being written.

use super::{homonyms, Prepared, SeedRowResult, WaveResult};
use crate::error::ServiceResult;
use crate::graph::{GraphService, Tenant};
use futures::future::Either;
use std::collections::{HashMap, HashSet};

/// Rows per Cypher statement.
const CHUNK: usize = 500;

impl GraphService {
    /// Writes `prepared` and sets each row's result in `results` (by row index).
    pub(super) async fn write_rows(
        &self,
        tenant: &Tenant,
        prepared: Vec<Prepared>,
        results: &mut [Option<SeedRowResult>],
    ) -> ServiceResult<()> {
        let mut prepared = prepared.into_iter();
        let mut in_flight: Option<InFlight<'_>> = None;
        let mut keep = |written: HashMap<usize, SeedRowResult>| {
            for (index, result) in written {
                results[index] = Some(result);
            }
        };
        loop {
            let chunk: Vec<Prepared> = prepared.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            for wave in waves(chunk) {
                let keys = WaveKeys::of(&wave);
                let writing = Box::pin(self.seed_wave(tenant, wave));
                in_flight = Some(match in_flight.take() {
                    Some(before) if before.keys.commutes_with(&keys) => {
                        match futures::future::select(before.writing, writing).await {
                            Either::Left((written, writing)) => {
                                keep(written?);
                                InFlight { keys, writing }
                            }
                            Either::Right((written, before)) => {
                                keep(written?);
                                keep(before.await?);
                                continue;
                            }
                        }
                    }
                    Some(before) => {
                        keep(before.writing.await?);
                        InFlight { keys, writing }
                    }
                    None => InFlight { keys, writing },
                });
            }
        }
        if let Some(last) = in_flight {
            keep(last.writing.await?);
        }
        Ok(())
    }
}

/// The hashes of a wave's keys, and whether none of its rows needs a lookup.
///
/// A seed keeps a second wave in flight while the first is written when neither needs a
/// lookup (no synonyms, no compared attributes: the write's MERGE on the row's key decides)
/// and they share no key: the engine then finds the next statement waiting when it finishes
/// one, where it sat idle while the seed read the answer and built the next (2.25 s of a
/// 12.65 s seed of 100,000 rows on FalkorDB, with two seed jobs). Such waves commute: each row
/// creates or joins the entity its own key names, whichever statement the engine runs first.
/// (Two rows whose different names already name one entity may add the same missing
/// attribute; the engine's order then decides whose value it keeps, as between two clients.)
/// A collision of hashes only makes a wave wait for the one before.
struct WaveKeys {
    hashes: HashSet<u64>,
    without_lookup: bool,
}

impl WaveKeys {
    fn of(wave: &[Prepared]) -> Self {
        use std::hash::BuildHasher;
        let state = std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        let without_lookup = wave.iter().all(homonyms::resolved_in_write);
        // A wave that needs a lookup commutes with none: its keys are not hashed.
        let hashes = if without_lookup {
            wave.iter().flat_map(Prepared::keys).map(|key| state.hash_one(key)).collect()
        } else {
            HashSet::new()
        };
        Self { hashes, without_lookup }
    }

    /// Whether a wave with these keys may be written while `other`'s write is in flight.
    fn commutes_with(&self, other: &WaveKeys) -> bool {
        self.without_lookup && other.without_lookup && self.hashes.is_disjoint(&other.hashes)
    }
}

/// A wave sent to the engine and not answered yet.
struct InFlight<'a> {
    keys: WaveKeys,
    writing: futures::future::BoxFuture<'a, WaveResult>,
}

/// Splits a chunk into waves in which no two rows share a key, keeping row order: a row goes
/// one wave after the last earlier row it shares a key with.
fn waves(chunk: Vec<Prepared>) -> Vec<Vec<Prepared>> {
    let mut last_wave_of_key: HashMap<&str, usize> = HashMap::new();
    let wave_of: Vec<usize> = chunk
        .iter()
        .map(|prepared| {
            let keys = prepared.keys();
            let wave = keys
                .clone()
                .filter_map(|k| last_wave_of_key.get(k.as_str()))
                .map(|w| w + 1)
                .max()
                .unwrap_or(0);
            for key in keys {
                last_wave_of_key.insert(key, wave);
            }
            wave
        })
        .collect();
    drop(last_wave_of_key);
    let mut waves: Vec<Vec<Prepared>> = Vec::new();
    for (prepared, wave) in chunk.into_iter().zip(wave_of) {
        if waves.len() <= wave {
            waves.resize_with(wave + 1, Vec::new);
        }
        waves[wave].push(prepared);
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn row(key: &str, synonym_keys: &[&str], compared: &[(&str, &str)]) -> Prepared {
        Prepared {
            index: 0,
            new_id: String::new(),
            canonical: key.into(),
            key: key.into(),
            synonym_keys: synonym_keys.iter().map(|k| k.to_string()).collect(),
            fields: Arc::new(Vec::new()),
            compared: compared.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            params: serde_json::Map::new(),
        }
    }

    #[test]
    fn bare_waves_with_no_key_in_common_may_be_in_flight_together() {
        let first = WaveKeys::of(&[row("a", &[], &[]), row("b", &[], &[])]);
        assert!(WaveKeys::of(&[row("c", &[], &[])]).commutes_with(&first));
        assert!(first.commutes_with(&WaveKeys::of(&[row("c", &[], &[])])));
    }

    #[test]
    fn a_wave_repeating_a_name_of_the_wave_in_flight_waits_for_it() {
        let first = WaveKeys::of(&[row("a", &[], &[]), row("b", &[], &[])]);
        assert!(!WaveKeys::of(&[row("c", &[], &[]), row("b", &[], &[])]).commutes_with(&first));
    }

    #[test]
    fn a_wave_that_needs_a_lookup_waits_and_is_waited_for() {
        let bare = WaveKeys::of(&[row("a", &[], &[])]);
        let with_synonym = WaveKeys::of(&[row("b", &["c"], &[])]);
        let compared = WaveKeys::of(&[row("d", &[], &[("city", "Paris")])]);
        for needs_lookup in [&with_synonym, &compared] {
            assert!(!needs_lookup.commutes_with(&bare));
            assert!(!bare.commutes_with(needs_lookup));
        }
    }
}
