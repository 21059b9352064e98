//! What resolution reads of an entity, and the words a name's words are read without: below
//! both the model and the rarity of words, which each need them.

use crate::graph::duplicates::Candidate;
use std::collections::BTreeMap;

/// What resolution knows of an entity.
#[derive(Clone, Debug)]
pub struct Record {
    pub candidate: Candidate,
    /// The core of the canonical name as written.
    pub core: String,
    /// Attribute values as text, by key.
    pub attributes: BTreeMap<String, String>,
}

/// Words that join a title's words rather than name anything.
pub(crate) const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "und", "with",
];
