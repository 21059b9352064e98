//! The name a comparison sees: the normalised name with words that do not tell two
//! entities apart dropped (a leading "the", trade words such as "restaurant", a
//! parenthesised qualifier such as "(new york)", legal suffixes anywhere at the end).

use super::noise::{self, Kind};
use crate::graph::duplicates;
use crate::graph::legal_forms;
use crate::graph::normalize::normalize;

/// Trade words that qualify a name rather than distinguish it.
const QUALIFIERS: &[&str] =
    &["the", "restaurant", "restaurants", "restaurante", "ristorante", "cafe", "bistro"];

/// The core of a name as written: parenthesised and bracketed parts removed, normalised,
/// qualifier and legal words dropped (never every word).
pub fn core_name(text: &str) -> String {
    let mut depth = 0usize;
    let stripped: String = text
        .chars()
        .filter(|c| match c {
            '(' | '[' => {
                depth += 1;
                false
            }
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                false
            }
            _ => depth == 0,
        })
        .collect();
    let normalized = normalize(&stripped);
    let normalized = if normalized.is_empty() { normalize(text) } else { normalized };
    let words: Vec<&str> = normalized.split_whitespace().collect();
    let kept: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !QUALIFIERS.contains(w) && !legal_forms::ignored_in_comparison(w))
        .collect();
    if kept.is_empty() {
        normalized
    } else {
        kept.join(" ")
    }
}

/// Two one-word names that differ: a small spelling difference between single words
/// ('zarela' / 'zarzuela', 'march' / 'marichu') is as likely another name as a typo, so
/// the name alone never merges them automatically.
pub fn one_word_variants(a: &str, b: &str) -> bool {
    let single = |s: &str| s.split_whitespace().count() == 1;
    single(a) && single(b) && a != b
}

/// A type whose names carry addresses: at least this share of its names hold a postcode, a
/// street word or a country (registry-dev: 0.59; companies, DBLP-ACM titles, books and Febrl
/// names: 0.01-0.07). Only there are names compared on their heads too (see [`head`]): a
/// title's words after a number or a country word ('Data mining in China') are its subject.
pub const ADDRESSED_NAMES: f64 = 0.2;

/// Whether a type's names carry addresses ([`ADDRESSED_NAMES`]).
pub fn carry_addresses<'a>(names: impl Iterator<Item = &'a str>) -> bool {
    let (mut total, mut addressed) = (0usize, 0usize);
    for name in names {
        total += 1;
        addressed += usize::from(
            name.split_whitespace()
                .any(|word| matches!(noise::kind(word), Kind::Postcode | Kind::Street | Kind::Country)),
        );
    }
    total > 0 && addressed as f64 >= ADDRESSED_NAMES * total as f64
}

/// The words of a name before its address or legal form, when it has more: 'sanofi 54 rue la
/// boetie 75008 france' -> 'sanofi', 'cisco corp 2309 hayes light apt 588' -> 'cisco'.
/// Exports put the name first; what follows differs between records of one organisation (one
/// with its street, one with its city, one with neither) and joins unrelated ones (a country,
/// a city). `None` when nothing would be cut, or nothing left (a name that starts so).
pub fn head(normalized: &str) -> Option<String> {
    let words: Vec<&str> = normalized.split_whitespace().collect();
    let kinds: Vec<Kind> = words.iter().map(|word| noise::kind(word)).collect();
    let country =
        |at: usize| words.get(at + 1).is_some_and(|next| noise::is_two_word_country(words[at], next));
    let cut = (0..words.len())
        .find(|&at| kinds[at] != Kind::Name || names_its_street(&kinds, at) || country(at))?;
    (cut > 0).then(|| words[..cut].join(" "))
}

/// Whether the word at `at` is the street of the house number after it, written as in most
/// of Europe ('proofpoint kyarapad 152 4706xb'): the number ends the name or a postcode or a
/// country follows it. (Where the number comes first, as in 'cable wireless 83 yvonne knolls',
/// the street's name follows it; and a name's first word is never its street.)
fn names_its_street(kinds: &[Kind], at: usize) -> bool {
    at > 0
        && kinds.get(at + 1) == Some(&Kind::Number)
        && matches!(kinds.get(at + 2), None | Some(Kind::Postcode | Kind::Country))
}

/// Heads this short (an acronym, 'ibm', 'air' of 'air france') never score as "very similar"
/// on their own: many organisations share them.
const SHORT_HEAD_AT_MOST: f64 = 0.89;

/// The name score of two names' heads (a name without one is its own head), `None` when
/// neither has a head: Jaro-Winkler and shared words as over whole names, at most
/// [`SHORT_HEAD_AT_MOST`] when either head is short. Symmetric.
pub fn head_score(a: &str, head_a: Option<&str>, b: &str, head_b: Option<&str>) -> Option<f64> {
    if head_a.is_none() && head_b.is_none() {
        return None;
    }
    let (a, b) = (head_a.unwrap_or(a), head_b.unwrap_or(b));
    let score = duplicates::forms_signals(a, &[a], b, &[b]).score();
    Some(if duplicates::is_short(a) || duplicates::is_short(b) {
        score.min(SHORT_HEAD_AT_MOST)
    } else {
        score
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualifiers_articles_cities_and_legal_suffixes_do_not_count() {
        assert_eq!(core_name("The Palm Restaurant"), "palm");
        assert_eq!(core_name("Palm (New York)"), "palm");
        assert_eq!(core_name("Acme Holdings Ltd."), "acme");
        assert_eq!(core_name("Restaurant"), "restaurant", "never every word");
        assert_eq!(core_name("(only brackets)"), "only brackets");
    }

    #[test]
    fn one_word_names_that_differ_are_variants() {
        assert!(one_word_variants("zarela", "zarzuela"));
        assert!(one_word_variants("march", "marichu"));
        assert!(!one_word_variants("zarela", "zarela"));
        assert!(!one_word_variants("zarela cafe", "zarzuela"));
    }

    #[test]
    fn a_names_head_is_what_comes_before_its_address_or_legal_form() {
        assert_eq!(head("sanofi 54 rue la boetie 75008 france").as_deref(), Some("sanofi"));
        assert_eq!(head("cisco corp 2309 hayes light apt 588").as_deref(), Some("cisco"));
        assert_eq!(head("deutsche bank frankfurt germany").as_deref(), Some("deutsche bank frankfurt"));
        assert_eq!(head("jio oulu"), None, "nothing to cut");
        assert_eq!(head("7 eleven"), None, "nothing before");
        assert_eq!(head("proofpoint kyarapad 152 4706xb").as_deref(), Some("proofpoint"), "street, number");
        assert_eq!(head("dell grangatan 63").as_deref(), Some("dell"), "a one-word street name");
        assert_eq!(
            head("cable wireless 83 yvonne knolls").as_deref(),
            Some("cable wireless"),
            "number, street"
        );
        assert_eq!(head("kyarapad 152").as_deref(), Some("kyarapad"), "a first word is never a street");
        assert_eq!(
            head("unilever boston united states").as_deref(),
            Some("unilever boston"),
            "a two-word country"
        );
        assert_eq!(head("united utilities"), None, "'united' alone is a name word");
    }

    #[test]
    fn names_are_compared_on_their_heads_only_where_they_carry_addresses() {
        let registry =
            ["sanofi 54 rue la boetie 75008 france", "sanofi paris", "total energies", "orange sa"];
        assert!(carry_addresses(registry.into_iter()));
        let titles = [
            "data mining in china",
            "xml databases",
            "efficient joins",
            "stream processing",
            "query plans",
            "indexes",
        ];
        assert!(!carry_addresses(titles.into_iter()), "one title of six names a country");
        assert!(!carry_addresses(std::iter::empty()));

        let (a, b) = ("sanofi 54 rue la boetie 75008 france", "sanofi paris");
        let whole = duplicates::forms_signals(a, &[a], b, &[b]).score();
        let heads = head_score(a, head(a).as_deref(), b, head(b).as_deref()).unwrap();
        assert!(heads >= 0.8 && heads > whole + 0.1, "whole {whole}, heads {heads}");
        assert_eq!(head_score(b, head(b).as_deref(), a, head(a).as_deref()), Some(heads), "symmetric");
        assert_eq!(head_score("sanofi paris", None, "total energies", None), None);
        let short = head_score("ibm sa braga", Some("ibm"), "ibm 6181 pt", Some("ibm")).unwrap();
        assert!(short < 0.9, "an acronym's heads are never very similar alone: {short}");
    }
}
