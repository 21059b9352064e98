//! Legal-form words ("Inc", "GmbH", "Oyj"…): the one list that normalisation, name
//! comparison and the noise classifier each read their own way.
//!
//! They differ on purpose: a resolution key drops only a *trailing* form, and keeps the
//! forms added after keys were first stored (dropping them would change stored keys); a
//! comparison ignores the unambiguous forms wherever they stand, never the short ones that
//! are real words inside names ("AS Roma", "SE Asia"); the noise classifier weighs every
//! form it knows as a legal word.

/// Forms that name nothing else.
const UNAMBIGUOUS: &[&str] = &[
    "inc",
    "incorporated",
    "llc",
    "llp",
    "ltd",
    "limited",
    "gmbh",
    "ag",
    "plc",
    "corp",
    "corporation",
    "co",
    "company",
    "sa",
    "sas",
    "sarl",
    "srl",
    "spa",
    "bv",
    "nv",
];

/// Short forms that are also words inside names: a legal form only at the end of one.
const SHORT: &[&str] = &["lp", "oy", "ab", "as", "kk", "pty", "pte", "kg", "se"];

/// National forms that resolution keys keep (they were added after keys were stored).
const NATIONAL: &[&str] =
    &["oyj", "asa", "kgaa", "mbh", "bhd", "sdn", "nyrt", "zrt", "doo", "sro", "ltda", "cv", "sab"];

/// Words that say a company belongs to a group: discounted when comparing names, kept in
/// keys ("Acme Group" need not be "Acme").
const GROUP: &[&str] = &["group", "holding", "holdings"];

/// Whether a normalised word at the end of a name is a legal form a resolution key drops.
pub fn ends_a_key(word: &str) -> bool {
    UNAMBIGUOUS.contains(&word) || SHORT.contains(&word)
}

/// Whether a normalised word counts for nothing when two names are compared.
pub fn ignored_in_comparison(word: &str) -> bool {
    UNAMBIGUOUS.contains(&word) || GROUP.contains(&word)
}

/// Whether the noise classifier weighs a normalised word as a legal form. "as" is not one
/// there: as a word inside a long, noisy name it is far more often English.
pub fn is_legal_word(word: &str) -> bool {
    ignored_in_comparison(word) || NATIONAL.contains(&word) || (SHORT.contains(&word) && word != "as")
}
