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
//! term frequency's u), so one word never decides a pair on its own. Below the "very similar"
//! name level the bits a rare word adds are scaled by the share of the names the shared words
//! cover ([`coverage`]): a rare word is strong evidence when it is most of a name, weak when
//! the names around it differ.
//!
//! Attribute values get Splink's own adjustment: two records that hold the same value (after
//! the comparison's normalisation: case, spaces, punctuation of an identifier) add
//! log2(u / share), where share is the share of the type's records with a value that hold
//! this one and u is the chance two such records agree at random (the sum of the squared
//! shares): a shared rare city says more than a shared capital, a switchboard number that
//! fifty records carry less than a direct line. Also clamped to [`MAX_BITS`].
//!
//! Everything here is symmetric (a shared word is shared both ways; ties go to the word
//! that sorts first) and deterministic (counts, not samples).

use super::comparisons::Field;
use super::noise;
use super::record::{Record, FUNCTION_WORDS};
use crate::graph::duplicates::jaro_winkler;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// The adjustment never moves a name's weight by more than this, in bits.
pub const MAX_BITS: f64 = 4.0;
/// An attribute value's adjustment never moves a weight by more than this, in bits. A value's
/// share counts a person's own duplicates (nine records of one person make its ID look
/// common, and their agreement weighed 1.5 bits less), and an attribute's u is already
/// estimated among the candidate pairs at the pair's name level: with 4 bits, a rare author
/// and a rare imprint added 5 bits to two books of one series (books-dev all fields, with the
/// other changes: F1 0.57 at 4 bits, 0.68 at 1; Febrl2/3 unchanged or better).
pub const VALUE_MAX_BITS: f64 = 1.0;

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
    /// How much of the names the shared words cover (see [`coverage`]).
    pub coverage: f64,
}

/// What the explanation says of the adjustment.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TermFrequency {
    /// The rarest word both names carry (the name's adjustment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub word: Option<String>,
    /// The value both records hold, as compared (an attribute's adjustment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
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
        let (mine, theirs) = (words(a), words(b));
        let covered = coverage(&mine, &theirs);
        mine.intersection(&theirs)
            .map(|word| SharedWord { word: word.to_string(), share: self.share(word), coverage: covered })
            // BTreeSet order: equal shares go to the word that sorts first, both ways round.
            .min_by(|x, y| x.share.total_cmp(&y.share))
    }
}

/// How many of a type's records hold each value of each compared field.
#[derive(Clone, Debug, Default)]
pub struct ValueCounts {
    /// Per field: records with a value, and the count of each value (as compared).
    fields: Vec<(usize, HashMap<String, u32>)>,
}

/// The value two records share on a field and the share of records holding it.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedValue {
    pub value: String,
    pub share: f64,
}

impl ValueCounts {
    /// Counts each field's values over these records (in the comparison's form).
    pub fn of(records: &[Record], fields: &[Field]) -> Self {
        let fields = fields
            .iter()
            .map(|field| {
                let mut counts: HashMap<String, u32> = HashMap::new();
                let mut holders = 0;
                for value in records.iter().filter_map(|r| field.kind.key(r.attributes.get(&field.key)?)) {
                    holders += 1;
                    *counts.entry(value).or_default() += 1;
                }
                (holders, counts)
            })
            .collect();
        ValueCounts { fields }
    }

    /// Per field, the value both records hold (`None`: a value missing, or not the same).
    pub fn shared(&self, a: &Record, b: &Record, fields: &[Field]) -> Vec<Option<SharedValue>> {
        fields
            .iter()
            .zip(&self.fields)
            .map(|(field, (holders, counts))| {
                let x = field.kind.key(a.attributes.get(&field.key)?)?;
                let y = field.kind.key(b.attributes.get(&field.key)?)?;
                let count = *counts.get(&x).filter(|_| x == y)?;
                Some(SharedValue { value: x, share: f64::from(count) / (*holders).max(1) as f64 })
            })
            .collect()
    }

    /// Per field, the chance two records with a value hold the same one: the sum of the
    /// squared shares (`None`: no record holds one).
    pub fn agreement(&self) -> Vec<Option<f64>> {
        self.fields
            .iter()
            .map(|(holders, counts)| {
                let n = *holders as f64;
                // Summed in a fixed order: a map's order would move the last bits run to run.
                let mut counts: Vec<u32> = counts.values().copied().collect();
                counts.sort_unstable();
                (*holders > 0).then(|| counts.iter().map(|&c| (f64::from(c) / n).powi(2)).sum::<f64>())
            })
            .collect()
    }
}

/// The adjustment of an agreement on a value held by `share` of the records, on a field
/// whose values agree at random with chance `agreement`: log2(agreement / share).
pub fn value_adjustment(share: f64, agreement: f64) -> f64 {
    (agreement.max(f64::MIN_POSITIVE).log2() + information(share)).clamp(-VALUE_MAX_BITS, VALUE_MAX_BITS)
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

/// Two words this alike count as one (a typo, a plural), as the name's signals count them.
const SAME_WORD: f64 = 0.9;

/// The share of a name's content words (function words aside) the other name carries too,
/// typos forgiven, for the name better covered: 1 when one name's words all stand in the
/// other ('Online query processing' / 'Online query processing: a tutorial'; 'sanofi' /
/// 'sanofi 54 rue la boetie'), 0.75 for 'TIMBER: a native system for querying XML' against
/// 'TIMBER: a native XML database' (3 of the second's 4). Below the "very similar" name level
/// a rare word's bits are scaled by it (see [`super::model::RARE_WORD_COVERED_BELOW`]).
/// Symmetric.
pub fn coverage(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> f64 {
    fn content<'a>(words: &BTreeSet<&'a str>) -> Vec<&'a str> {
        words.iter().copied().filter(|w| !FUNCTION_WORDS.contains(w)).collect()
    }
    let (a, b) = (content(a), content(b));
    let covered = |from: &[&str], into: &[&str]| {
        if from.is_empty() {
            return 0.0;
        }
        let found = from.iter().filter(|x| into.iter().any(|y| jaro_winkler(x, y) >= SAME_WORD)).count();
        found as f64 / from.len() as f64
    };
    covered(&a, &b).max(covered(&b, &a))
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
        assert_eq!(shared, SharedWord { word: "sanofi".into(), share: 0.5, coverage: 1.0 });
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
    fn a_shared_rare_city_adds_bits_and_a_shared_common_one_takes_them() {
        let field =
            vec![Field { key: "city".into(), kind: crate::graph::resolution::comparisons::Kind::Exact }];
        let mut records: Vec<Record> =
            (0..18).map(|i| record(&format!("p{i}"), "x", &[("city", "Paris")])).collect();
        records.push(record("a", "x", &[("city", "Quimper ")]));
        records.push(record("b", "x", &[("city", "quimper")]));
        records.push(record("c", "x", &[]));
        let counts = ValueCounts::of(&records, &field);
        let agreement = counts.agreement()[0].unwrap();
        let rare = counts.shared(&records[18], &records[19], &field)[0].clone().unwrap();
        let common = counts.shared(&records[0], &records[1], &field)[0].clone().unwrap();
        assert_eq!(rare, SharedValue { value: "quimper".into(), share: 0.1 });
        assert_eq!(counts.shared(&records[19], &records[18], &field)[0], Some(rare.clone()), "symmetric");
        assert_eq!(counts.shared(&records[0], &records[18], &field)[0], None, "not shared");
        assert_eq!(counts.shared(&records[0], &records[20], &field)[0], None, "missing");
        assert_eq!(value_adjustment(rare.share, agreement), VALUE_MAX_BITS, "held to the bound");
        assert!(value_adjustment(common.share, agreement) < 0.0);
        assert!(value_adjustment(common.share, agreement) >= -VALUE_MAX_BITS);
    }

    #[test]
    fn coverage_is_the_share_of_the_better_covered_names_words_the_other_carries() {
        let records = [
            record("1", "TIMBER: a native system for querying XML", &[]),
            record("2", "TIMBER: a native XML database", &[]),
            record("3", "Sanofi", &[]),
            record("4", "sanofi 54 rue la boetie 75008 france", &[]),
            record("5", "Online query processing", &[]),
            record("6", "Online querry processing: a tutorial", &[]),
        ];
        let of = |i: usize, j: usize| coverage(&words(&records[i]), &words(&records[j]));
        assert_eq!(of(0, 1), 0.75, "timber, native and xml of the second's four");
        assert_eq!(of(0, 1), of(1, 0), "symmetric");
        assert_eq!(of(2, 3), 1.0, "the address is not the name");
        assert_eq!(of(4, 5), 1.0, "a typo forgiven, 'a' is no content");
        let counts = WordCounts::of(&records);
        assert_eq!(counts.rarest_shared(&records[0], &records[1]).unwrap().coverage, 0.75);
    }

    #[test]
    fn a_rarer_word_than_the_levels_usual_adds_bits_and_a_commoner_one_takes_them() {
        let rare = SharedWord { word: "sanofi".into(), share: 0.001, coverage: 1.0 };
        let common = SharedWord { word: "france".into(), share: 0.25, coverage: 1.0 };
        let centre = baselines(2, [(1, Some(&rare)), (1, Some(&common)), (0, None)].into_iter());
        assert_eq!(centre[0], None);
        let centre = centre[1].unwrap();
        assert!(adjustment(&rare, centre) > 0.0 && adjustment(&common, centre) < 0.0);
        assert!((adjustment(&rare, centre) + adjustment(&common, centre)).abs() < 1e-9, "centred");
        let unique = SharedWord { word: "x".into(), share: 1e-9, coverage: 1.0 };
        assert_eq!(adjustment(&unique, centre), MAX_BITS);
    }
}
