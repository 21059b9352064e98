//! Rare words count more: a term-frequency adjustment of the name's weight, as Splink makes
//! one for an exact match on a column (log2(u / tf(value)) added to the level's weight),
//! applied to the words two names share.
//!
//! Word shares come from the tenant's own names of the type (the share of its names that
//! carry a word). For a pair, the evidence is the rarest word both names carry: sharing
//! "sanofi" (one name in ten thousand) says far more than sharing "france" (one in five).
//! Its information, log2(1 / share), is compared with the mean information of the rarest
//! shared word among the candidate pairs at the same name level; the difference is the
//! adjustment in bits. Over a level's candidate pairs the adjustments average zero, so the
//! level's m/u keeps its meaning: pairs sharing a rarer word than usual rise, pairs sharing
//! only common words fall. Clamped to [`MAX_BITS`] either way (as Splink floors a
//! term frequency's u), so one word never decides a pair on its own.
//!
//! Everything here is symmetric (a shared word is shared both ways; ties go to the word
//! that sorts first) and deterministic (counts, not samples).

use super::model::Record;
use super::noise;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// The adjustment never moves a name's weight by more than this, in bits.
pub const MAX_BITS: f64 = 4.0;

/// How many of a type's names carry each word.
#[derive(Clone, Debug, Default)]
pub struct WordCounts {
    names: usize,
    counts: HashMap<String, u32>,
}

/// The rarest word two names share, and the share of the type's names that carry it.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedWord {
    pub word: String,
    pub share: f64,
}

/// What the explanation says of the adjustment.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TermFrequency {
    /// The rarest word both names carry.
    pub word: String,
    /// The share of the type's names that carry it.
    pub share: f64,
    /// Bits added to the name's weight (negative: a commoner word than such pairs share).
    pub bits: f64,
}

impl WordCounts {
    /// Counts the name words of these records, each word once per record.
    pub fn of(records: &[Record]) -> Self {
        let mut counts: HashMap<String, u32> = HashMap::new();
        for record in records {
            for word in words(record) {
                *counts.entry(word.to_string()).or_default() += 1;
            }
        }
        WordCounts { names: records.len(), counts }
    }

    /// The share of names that carry `word` (at least one name's worth).
    pub fn share(&self, word: &str) -> f64 {
        let count = self.counts.get(word).copied().unwrap_or(0).max(1);
        f64::from(count) / self.names.max(1) as f64
    }

    /// The rarest name word both records carry; `None` when they share none or nothing was
    /// counted.
    pub fn rarest_shared(&self, a: &Record, b: &Record) -> Option<SharedWord> {
        if self.names == 0 {
            return None;
        }
        let theirs = words(b);
        words(a)
            .intersection(&theirs)
            .map(|word| SharedWord { word: word.to_string(), share: self.share(word) })
            // BTreeSet order: equal shares go to the word that sorts first, both ways round.
            .min_by(|x, y| x.share.total_cmp(&y.share))
    }
}

/// Information of a shared word, in bits.
pub fn information(share: f64) -> f64 {
    -share.max(f64::MIN_POSITIVE).log2()
}

/// Mean information of the rarest shared word, per name level, over the pairs that share one:
/// the centre each level's adjustment is measured from (`None`: no pair at the level shares a
/// word).
pub fn baselines<'a>(
    levels: usize,
    pairs: impl Iterator<Item = (usize, Option<&'a SharedWord>)>,
) -> Vec<Option<f64>> {
    let mut sums = vec![(0.0, 0usize); levels];
    for (level, shared) in pairs {
        if let Some(shared) = shared {
            sums[level].0 += information(shared.share);
            sums[level].1 += 1;
        }
    }
    sums.into_iter().map(|(sum, n)| (n > 0).then(|| sum / n as f64)).collect()
}

/// The adjustment of a pair whose rarest shared word is `shared`, at a level centred on
/// `baseline`.
pub fn adjustment(shared: &SharedWord, baseline: f64) -> f64 {
    (information(shared.share) - baseline).clamp(-MAX_BITS, MAX_BITS)
}

/// The distinct words of a record's names that can tell it apart: not numbers, postcodes,
/// street words, countries or legal forms (see [`noise`]).
fn words(record: &Record) -> BTreeSet<&str> {
    record
        .candidate
        .forms
        .iter()
        .flat_map(|form| form.split_whitespace())
        .filter(|word| noise::kind(word) == noise::Kind::Name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::resolution::model::tests::record;

    #[test]
    fn the_rarest_shared_word_is_found_both_ways_round() {
        let records = vec![
            record("1", "sanofi paris", &[]),
            record("2", "sanofi aventis paris", &[]),
            record("3", "total paris", &[]),
            record("4", "orange paris", &[]),
        ];
        let counts = WordCounts::of(&records);
        let shared = counts.rarest_shared(&records[0], &records[1]).unwrap();
        assert_eq!(shared, SharedWord { word: "sanofi".into(), share: 0.5 });
        assert_eq!(counts.rarest_shared(&records[1], &records[0]), Some(shared));
        assert_eq!(counts.rarest_shared(&records[2], &records[3]).unwrap().word, "paris");
        assert_eq!(WordCounts::default().rarest_shared(&records[0], &records[1]), None);
    }

    #[test]
    fn a_postcode_street_or_country_is_never_the_rare_word_two_names_share() {
        let mut records = vec![
            record("1", "sanofi 54 rue la boetie 75008 france", &[]),
            record("2", "sanofi 54 rue la boetie 75008 paris france", &[]),
            record("3", "hermes 24 rue du faubourg 75008 paris france", &[]),
        ];
        for i in 0..10 {
            records.push(record(&format!("f{i}"), &format!("filler{i} la sanofi"), &[]));
        }
        let counts = WordCounts::of(&records);
        // "75008" and "54" are rarer than "sanofi" here, but an address is not a name.
        assert_eq!(counts.rarest_shared(&records[0], &records[1]).unwrap().word, "boetie");
        // Two companies at one postcode in one country share no name word, "paris" aside.
        assert_eq!(counts.rarest_shared(&records[1], &records[2]).unwrap().word, "paris");
    }

    #[test]
    fn a_rarer_word_than_the_levels_usual_adds_bits_and_a_commoner_one_takes_them() {
        let rare = SharedWord { word: "sanofi".into(), share: 0.001 };
        let common = SharedWord { word: "france".into(), share: 0.25 };
        let centre = baselines(2, [(1, Some(&rare)), (1, Some(&common)), (0, None)].into_iter());
        assert_eq!(centre[0], None);
        let centre = centre[1].unwrap();
        assert!(adjustment(&rare, centre) > 0.0 && adjustment(&common, centre) < 0.0);
        assert!((adjustment(&rare, centre) + adjustment(&common, centre)).abs() < 1e-9, "centred");
        let unique = SharedWord { word: "x".into(), share: 1e-9 };
        assert_eq!(adjustment(&unique, centre), MAX_BITS);
    }
}
