//! Gazetteer matching: which known entities (by canonical name or synonym) a text names.
//! Word n-grams of the text are normalised like names and looked up as resolution keys
//! under each of the tenant's entity types, so a match is exactly what bulk seeding would
//! have resolved the same surface to.

use super::columns::str_col;
use super::entities::resolution_key;
use super::normalize::normalize;
use super::{queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::pagination::{Cursor, PageRequest};
use crate::params;
use std::collections::HashMap;

/// Longest name, in words, looked for in a text.
const MAX_WORDS: usize = 5;
/// Keys per lookup statement.
const KEYS_PER_LOOKUP: usize = 2_000;

/// A known entity named in a text.
#[derive(Clone, Debug, PartialEq)]
pub struct GazetteerMatch {
    pub entity_id: String,
    pub type_name: String,
    /// The words of the text that named it.
    pub surface: String,
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

    /// Known entities of `bucket_id` that `text` names, each once (longest surface first).
    pub async fn entities_named_in(
        &self,
        tenant: &Tenant,
        bucket_id: &str,
        text: &str,
    ) -> ServiceResult<Vec<GazetteerMatch>> {
        let page = PageRequest { limit: 200, cursor: Cursor::First };
        let types = self.list_entity_types(tenant, &page, None).await?.entity_types;
        let surfaces = ngrams(text);
        let mut wanted: HashMap<String, (String, String)> = HashMap::new();
        for entity_type in &types {
            for surface in &surfaces {
                let normalized = normalize(surface);
                if normalized.len() < 2 {
                    continue;
                }
                let key = resolution_key(tenant, bucket_id, &entity_type.name, &normalized);
                wanted.entry(key).or_insert_with(|| (entity_type.name.clone(), surface.clone()));
            }
        }
        let keys: Vec<&String> = wanted.keys().collect();
        let mut matches: Vec<GazetteerMatch> = Vec::new();
        for chunk in keys.chunks(KEYS_PER_LOOKUP) {
            let rows =
                self.run(tenant, queries::ENTITY_KEYS_LOOKUP, params! { "keys" => chunk.to_vec() }).await?;
            for row in rows {
                let (type_name, surface) = wanted[&str_col(&row, "key")].clone();
                matches.push(GazetteerMatch { entity_id: str_col(&row, "entityID"), type_name, surface });
            }
        }
        matches.sort_by(|a, b| b.surface.len().cmp(&a.surface.len()).then(a.entity_id.cmp(&b.entity_id)));
        matches.dedup_by(|a, b| a.entity_id == b.entity_id);
        Ok(matches)
    }
}

/// Every run of 1 to [`MAX_WORDS`] consecutive words of the text, as written.
fn ngrams(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut grams = Vec::new();
    for start in 0..words.len() {
        for length in 1..=MAX_WORDS.min(words.len() - start) {
            let gram = words[start..start + length].join(" ");
            grams.push(gram.trim_matches(|c: char| !c.is_alphanumeric()).to_string());
        }
    }
    grams.sort();
    grams.dedup();
    grams
}

#[cfg(test)]
mod tests {
    use super::ngrams;

    #[test]
    fn ngrams_cover_runs_of_words_without_edge_punctuation() {
        let grams = ngrams("Paid to ACME Corp.");
        assert!(grams.contains(&"ACME Corp".to_string()));
        assert!(grams.contains(&"Paid to ACME Corp".to_string()));
        assert!(grams.contains(&"Paid".to_string()));
    }
}
