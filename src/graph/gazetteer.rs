//! Gazetteer matching: which known entities (by canonical name or synonym) a text names.
//! Word n-grams of the text are normalised like names and looked up as resolution keys
//! under each of the tenant's entity types, so a match is exactly what bulk seeding would
//! have resolved the same surface to.
//!
//! A document is the tenant's input and may be 32 MiB of text: the n-grams are read in text
//! order, each distinct one once, and reading stops at [`GAZETTEER_LOOKUPS`] keys (n-grams ×
//! entity types), [`GAZETTEER_BYTES`] of n-grams or [`GAZETTEER_WORDS`] words, whichever comes
//! first. Before these
//! bounds every n-gram of the whole text was held at once and looked up under every type
//! (tens of millions of strings for a long text, gigabytes with a few types). Names past the
//! bound are not linked from the text; the function's annotated fields still are.

use super::columns::str_col;
use super::entities::resolution_key;
use super::normalize::normalize;
use super::{queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::pagination::{Cursor, PageRequest};
use crate::params;
use std::collections::{HashMap, HashSet, VecDeque};

/// Longest name, in words, looked for in a text.
const MAX_WORDS: usize = 5;
/// Longest name, in characters (as a canonical name or synonym may be).
const MAX_NAME_CHARS: usize = 500;
/// Keys per lookup statement.
const KEYS_PER_LOOKUP: usize = 2_000;
/// Keys (distinct n-grams × the tenant's entity types) one text is looked up by at most:
/// 100 statements. With one type, the first ~40,000 words of a text.
pub const GAZETTEER_LOOKUPS: usize = 200_000;
/// Bytes of distinct n-grams (as written and normalised) one text's lookup holds at most.
pub const GAZETTEER_BYTES: usize = 16 * 1024 * 1024;
/// Words of a text read at most (each starts up to five n-grams to normalise): a text of one
/// word repeated has few distinct n-grams and would otherwise be read whole.
pub const GAZETTEER_WORDS: usize = 200_000;

/// A known entity named in a text.
#[derive(Clone, Debug, PartialEq)]
pub struct GazetteerMatch {
    pub entity_id: String,
    pub type_name: String,
    /// The words of the text that named it.
    pub surface: String,
}

/// A distinct n-gram of the text: as written, normalised, where it first starts (in words)
/// and how many words it has.
#[derive(Debug, PartialEq)]
struct Gram {
    surface: String,
    normalized: String,
    start: usize,
    words: usize,
}

impl GraphService {
    /// Whether mentions of this transformation were recorded already.
    pub async fn transformation_linked(
        &self,
        tenant: &Tenant,
        transformation_id: &str,
    ) -> ServiceResult<bool> {
        let rows = self
            .run(tenant, queries::MENTION_LINKED, params! { "transformationID" => transformation_id })
            .await?;
        Ok(rows.first().and_then(|row| row.get("linked")).and_then(serde_json::Value::as_i64).unwrap_or(0)
            > 0)
    }

    /// Known entities of `bucket_id` that `text` names, each once, in the order the text first
    /// names them (the longer surface where two start at one word), within the bounds above.
    pub async fn entities_named_in(
        &self,
        tenant: &Tenant,
        bucket_id: &str,
        text: &str,
    ) -> ServiceResult<Vec<GazetteerMatch>> {
        let page = PageRequest { limit: 200, cursor: Cursor::First };
        let types = self.list_entity_types(tenant, &page, None).await?.entity_types;
        if types.is_empty() {
            return Ok(Vec::new());
        }
        let most = GAZETTEER_LOOKUPS / types.len();
        // Normalising is CPU work (up to a million n-grams): it must not hold an async worker.
        let grams =
            crate::cpu::blocking(|| ngrams(words_prefix(text, GAZETTEER_WORDS), most, GAZETTEER_BYTES));
        // (gram, type) pairs in order, a statement's worth at a time: only its keys are held.
        let pairs = grams.len() * types.len();
        let mut found: Vec<(usize, usize, String)> = Vec::new();
        for first in (0..pairs).step_by(KEYS_PER_LOOKUP) {
            let mut wanted: HashMap<String, (usize, usize)> = HashMap::with_capacity(KEYS_PER_LOOKUP);
            for pair in first..pairs.min(first + KEYS_PER_LOOKUP) {
                let (g, t) = (pair / types.len(), pair % types.len());
                wanted
                    .insert(resolution_key(tenant, bucket_id, &types[t].name, &grams[g].normalized), (g, t));
            }
            let keys: Vec<&String> = wanted.keys().collect();
            let rows = self.run(tenant, queries::ENTITY_KEYS_LOOKUP, params! { "keys" => keys }).await?;
            for row in rows {
                if let Some(&(g, t)) = wanted.get(&str_col(&row, "key")) {
                    found.push((g, t, str_col(&row, "entityID")));
                }
            }
        }
        found.sort_by(|a, b| {
            let (a_gram, b_gram) = (&grams[a.0], &grams[b.0]);
            (a_gram.start, b_gram.words, &a.2).cmp(&(b_gram.start, a_gram.words, &b.2))
        });
        let mut seen = HashSet::new();
        Ok(found
            .into_iter()
            .filter(|(_, _, entity_id)| seen.insert(entity_id.clone()))
            .map(|(g, t, entity_id)| GazetteerMatch {
                entity_id,
                type_name: types[t].name.clone(),
                surface: grams[g].surface.clone(),
            })
            .collect())
    }
}

/// The distinct runs of 1 to [`MAX_WORDS`] consecutive words of the text (as written, edge
/// punctuation trimmed; each kept where it first starts), in text order, until `most` of them
/// or `bytes` of them are held. A run too long or too short to be a name is skipped.
fn ngrams(text: &str, most: usize, bytes: usize) -> Vec<Gram> {
    let mut grams = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut held = 0;
    let mut window: VecDeque<&str> = VecDeque::with_capacity(MAX_WORDS);
    let mut words = text.split_whitespace().enumerate();
    // Each word starts the runs of the words after it; the window holds what they need.
    while let Some((start, first)) = words.next() {
        window.clear();
        window.push_back(first);
        let mut ahead = words.clone();
        while window.len() < MAX_WORDS {
            match ahead.next() {
                Some((_, word)) => window.push_back(word),
                None => break,
            }
        }
        let mut surface = String::new();
        for (length, word) in window.iter().enumerate() {
            if length > 0 {
                surface.push(' ');
            }
            surface.push_str(word);
            let gram = surface.trim_matches(|c: char| !c.is_alphanumeric());
            if gram.chars().count() > MAX_NAME_CHARS {
                break;
            }
            let normalized = normalize(gram);
            if normalized.len() < 2 || seen.contains(&normalized) {
                continue;
            }
            held += gram.len() + 2 * normalized.len();
            if grams.len() >= most || held > bytes {
                return grams;
            }
            seen.insert(normalized.clone());
            grams.push(Gram { surface: gram.to_string(), normalized, start, words: length + 1 });
        }
    }
    grams
}

/// The text up to the end of its first `words` words.
fn words_prefix(text: &str, words: usize) -> &str {
    match text.split_whitespace().nth(words) {
        // The (words + 1)th word starts inside `text`: cut just before it.
        Some(next) => &text[..next.as_ptr() as usize - text.as_ptr() as usize],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surfaces(grams: &[Gram]) -> Vec<&str> {
        grams.iter().map(|g| g.surface.as_str()).collect()
    }

    #[test]
    fn ngrams_cover_runs_of_words_without_edge_punctuation() {
        let grams = ngrams("Paid to ACME Widgets.", usize::MAX, usize::MAX);
        assert!(surfaces(&grams).contains(&"ACME Widgets"));
        assert!(surfaces(&grams).contains(&"Paid to ACME Widgets"));
        assert!(surfaces(&grams).contains(&"Paid"));
        // "ACME Corp" is the name "ACME" (legal forms end no key): kept as first written.
        let grams = ngrams("ACME Corp.", usize::MAX, usize::MAX);
        assert_eq!(surfaces(&grams), vec!["ACME", "Corp"]);
    }

    #[test]
    fn ngrams_come_in_text_order_each_name_once_where_it_first_starts() {
        let grams = ngrams("acme paid ACME. Acme", usize::MAX, usize::MAX);
        let acme: Vec<(&str, usize, usize)> = grams
            .iter()
            .filter(|g| g.normalized == "acme")
            .map(|g| (g.surface.as_str(), g.start, g.words))
            .collect();
        assert_eq!(acme, vec![("acme", 0, 1)]);
        let starts: Vec<usize> = grams.iter().map(|g| g.start).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    }

    #[test]
    fn ngrams_stop_at_their_count_and_bytes_and_skip_what_cannot_be_a_name() {
        let text = (0..1_000).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(ngrams(&text, 7, usize::MAX).len(), 7);
        let held = ngrams(&text, usize::MAX, 200);
        let bytes: usize = held.iter().map(|g| g.surface.len() + 2 * g.normalized.len()).sum();
        assert!(bytes <= 200 && !held.is_empty(), "{bytes}");
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(surfaces(&ngrams(&format!("{long} ab"), usize::MAX, usize::MAX)), vec!["ab"]);
    }

    #[test]
    fn a_words_prefix_ends_after_its_last_word() {
        assert_eq!(words_prefix("one two  three four", 2), "one two  ");
        assert_eq!(words_prefix("one two", 5), "one two");
        assert_eq!(words_prefix("  one", 0), "  ");
    }
}
