//! Candidate pairs by blocking: records pair up only when they share a bucket, an effective
//! type (another type is never a duplicate) and at least one key:
//!
//! - a word of a surface form (3 letters or more),
//! - the Soundex code of such a word (catches typos that change letters, not sounds),
//! - the core name (see [`super::names::core_name`]),
//! - the exact value of an `exact`, `identifier` or `date` attribute (letters and digits
//!   only), as Splink blocks on a birth date,
//! - a neighbour within [`WINDOW`] in sorted-name order and in sorted-core order (catches a
//!   typo in the first letters).
//!
//! A key shared by more than [`MAX_BLOCK`] records is too common to tell anything and pairs
//! nothing, so the pairs grow with the records, never with their square. A record pairs with
//! at most [`MAX_PARTNERS`] others by its keys, the smallest blocks (the rarest keys) first:
//! names of hundreds of words each shared by 50 records (a tenant's own data) gave each record
//! thousands of partners, tens of millions of pairs held at once in one refresh.

use super::comparisons::{Field, Kind};
use super::model::Record;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Sorted-order neighbours compared with each record.
pub const WINDOW: usize = 6;
/// Blocks larger than this pair nothing.
pub const MAX_BLOCK: usize = 50;
/// Partners one record takes by its keys at most (its sorted-order neighbours come besides):
/// about what twenty keys in blocks of fifty give, so real names stay under it.
pub const MAX_PARTNERS: usize = 1_000;

/// Why a pair is a candidate, as a bit set of the key families that proposed it:
/// [`BY_NAME`] (a word, Soundex code, core or sorted neighbour of the names) and, for the
/// k-th field, `1 << (k + 1)` (its exact value; fields past the 62nd share the last bit).
pub type Reasons = u64;
pub const BY_NAME: Reasons = 1;

/// The reason bit of the k-th field.
pub fn by_field(k: usize) -> Reasons {
    1 << (k + 1).min(63)
}

/// Candidate pairs (indexes into `records`, smaller first), each once, sorted.
pub fn candidate_pairs(records: &[Record], fields: &[Field]) -> Vec<(usize, usize)> {
    candidate_pairs_with_reasons(records, fields).into_iter().map(|(pair, _)| pair).collect()
}

/// [`candidate_pairs`] with the reasons each was proposed for.
pub fn candidate_pairs_with_reasons(records: &[Record], fields: &[Field]) -> Vec<((usize, usize), Reasons)> {
    pairs_within(records, fields, MAX_PARTNERS)
}

fn pairs_within(records: &[Record], fields: &[Field], max_partners: usize) -> Vec<((usize, usize), Reasons)> {
    let mut groups: BTreeMap<(&str, String), Vec<usize>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        groups
            .entry((r.candidate.bucket_id.as_str(), r.candidate.type_name.to_lowercase()))
            .or_default()
            .push(i);
    }
    let mut pairs: BTreeMap<(usize, usize), Reasons> = BTreeMap::new();
    for members in groups.values() {
        for sort_key in [|r: &Record| r.candidate.normalized.clone(), |r: &Record| r.core.clone()] {
            let mut sorted = members.clone();
            sorted.sort_by_key(|&i| (sort_key(&records[i]), i));
            for (n, &i) in sorted.iter().enumerate() {
                for &j in sorted.iter().skip(n + 1).take(WINDOW) {
                    *pairs.entry((i.min(j), i.max(j))).or_default() |= BY_NAME;
                }
            }
        }
        let mut blocks: BTreeMap<String, (Reasons, Vec<usize>)> = BTreeMap::new();
        for &i in members {
            for (key, reason) in keys(&records[i], fields) {
                blocks.entry(key).or_insert_with(|| (reason, Vec::new())).1.push(i);
            }
        }
        let mut blocks: Vec<(&String, &(Reasons, Vec<usize>))> =
            blocks.iter().filter(|(_, (_, b))| b.len() > 1 && b.len() <= MAX_BLOCK).collect();
        blocks.sort_by_key(|(key, (_, block))| (block.len(), *key));
        let mut partners: HashMap<usize, usize> = HashMap::new();
        for (_, (reason, block)) in blocks {
            for (n, &i) in block.iter().enumerate() {
                for &j in &block[n + 1..] {
                    let pair = (i.min(j), i.max(j));
                    if let Some(known) = pairs.get_mut(&pair) {
                        *known |= reason;
                        continue;
                    }
                    let room = |r: &usize| partners.get(r).copied().unwrap_or(0) < max_partners;
                    if room(&i) && room(&j) {
                        pairs.insert(pair, *reason);
                        *partners.entry(i).or_default() += 1;
                        *partners.entry(j).or_default() += 1;
                    }
                }
            }
        }
    }
    pairs.into_iter().collect()
}

/// The blocking keys of one record (each once), with the family each belongs to.
fn keys(record: &Record, fields: &[Field]) -> BTreeMap<String, Reasons> {
    let mut keys = BTreeMap::new();
    for word in record.candidate.forms.iter().flat_map(|f| f.split_whitespace()) {
        if word.chars().count() >= 3 {
            keys.insert(format!("w:{word}"), BY_NAME);
            if let Some(code) = soundex(word) {
                keys.insert(format!("s:{code}"), BY_NAME);
            }
        }
    }
    if !record.core.is_empty() {
        keys.insert(format!("c:{}", record.core), BY_NAME);
    }
    for (k, field) in fields.iter().enumerate() {
        if !matches!(field.kind, Kind::Exact | Kind::Identifier | Kind::Date { .. }) {
            continue;
        }
        if let Some(value) = record.attributes.get(&field.key) {
            // A date by its digits: "1928-07-14" and "19280714" are one key.
            let value: String =
                value.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
            if !value.is_empty() {
                keys.insert(format!("a:{}:{value}", field.key), by_field(k));
            }
        }
    }
    keys
}

/// American Soundex of an ASCII-letter word; `None` for anything else.
pub fn soundex(word: &str) -> Option<String> {
    let code = |c: char| match c {
        'b' | 'f' | 'p' | 'v' => '1',
        'c' | 'g' | 'j' | 'k' | 'q' | 's' | 'x' | 'z' => '2',
        'd' | 't' => '3',
        'l' => '4',
        'm' | 'n' => '5',
        'r' => '6',
        'h' | 'w' => '-',
        _ => '0',
    };
    let mut chars = word.chars();
    let first = chars.next().filter(char::is_ascii_alphabetic)?;
    if !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut out = String::from(first.to_ascii_uppercase());
    let mut last = code(first.to_ascii_lowercase());
    for c in chars.map(|c| c.to_ascii_lowercase()) {
        let d = code(c);
        if d == '-' {
            continue;
        }
        if d != '0' && d != last {
            out.push(d);
        }
        last = d;
        if out.len() == 4 {
            break;
        }
    }
    while out.len() < 4 {
        out.push('0');
    }
    Some(out)
}

/// Share of the true pairs that blocking found (1 when there are none).
pub fn recall(pairs: &[(usize, usize)], truth: &HashSet<(usize, usize)>) -> f64 {
    if truth.is_empty() {
        return 1.0;
    }
    pairs.iter().filter(|p| truth.contains(p)).count() as f64 / truth.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::resolution::model::tests::record;

    #[test]
    fn soundex_matches_the_textbook_codes() {
        assert_eq!(soundex("robert").as_deref(), Some("R163"));
        assert_eq!(soundex("rupert").as_deref(), Some("R163"));
        assert_eq!(soundex("ashcraft").as_deref(), Some("A261"));
        assert_eq!(soundex("tymczak").as_deref(), Some("T522"));
        assert_eq!(soundex("x1"), None);
    }

    #[test]
    fn typos_shared_words_and_shared_identifiers_pair_up_but_other_types_never_do() {
        let mut all = vec![
            record("1", "jonathan smith", &[]),
            record("2", "jonathon smith", &[]),
            record("3", "acme widgets", &[("phone", "555-0100")]),
            record("4", "totally different", &[("phone", "5550100")]),
        ];
        let mut other = record("5", "jonathan smith", &[]);
        other.candidate.type_name = "Person".into();
        all.push(other);
        // Enough filler that sorted-order neighbours alone would not pair 3 and 4.
        for i in 0..40 {
            all.push(record(&format!("f{i}"), &format!("filler {i:02} name"), &[]));
        }
        let fields = vec![Field { key: "phone".into(), kind: Kind::Identifier }];
        let pairs = candidate_pairs(&all, &fields);
        assert!(pairs.contains(&(0, 1)));
        assert!(pairs.contains(&(2, 3)), "the phone is a key");
        assert!(!pairs.contains(&(0, 4)) && !pairs.contains(&(1, 4)), "types differ");
        assert!(pairs.len() < all.len() * (all.len() - 1) / 2, "never all pairs");
        let truth: HashSet<(usize, usize)> = [(0, 1), (2, 3)].into_iter().collect();
        assert_eq!(recall(&pairs, &truth), 1.0);
    }

    #[test]
    fn a_record_takes_its_partners_from_its_rarest_keys_first_up_to_the_bound() {
        // Record 0 shares "zephyr" with record 1 only, and "common" with 40 others.
        let mut all = vec![record("0", "zephyr common", &[]), record("1", "zephyr other", &[])];
        for i in 0..40 {
            all.push(record(&format!("c{i}"), &format!("common kin{i:02}"), &[]));
        }
        let partners =
            |pairs: &[((usize, usize), Reasons)]| pairs.iter().filter(|((a, _), _)| *a == 0).count();
        let free = pairs_within(&all, &[], usize::MAX);
        let bounded = pairs_within(&all, &[], 5);
        assert!(partners(&free) > 40, "every sharer of a word: {}", partners(&free));
        let zero: Vec<usize> = bounded.iter().filter(|((a, _), _)| *a == 0).map(|((_, b), _)| *b).collect();
        assert!(zero.contains(&1), "the rarest key's partner is kept: {zero:?}");
        assert!(zero.len() <= 5 + 4 * WINDOW, "five by keys, the sorted neighbours besides: {zero:?}");
    }

    #[test]
    fn a_shared_birth_date_pairs_names_that_share_nothing() {
        let mut all = vec![
            record("1", "harry reid", &[("born", "1928-07-14")]),
            record("2", "william rei d", &[("born", "19280714")]),
        ];
        for i in 0..40 {
            all.push(record(&format!("f{i}"), &format!("m filler {i:02}"), &[("born", "1990-01-01")]));
        }
        let born = vec![Field { key: "born".into(), kind: Kind::Date { tolerance_days: 0.0 } }];
        let pairs = candidate_pairs_with_reasons(&all, &born);
        let reid = pairs.iter().find(|(p, _)| *p == (0, 1)).expect("paired by the birth date");
        assert_eq!(reid.1, by_field(0), "by the date alone");
    }
}
