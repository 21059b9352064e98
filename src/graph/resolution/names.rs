//! The name a comparison sees: the normalised name with words that do not tell two
//! entities apart dropped (a leading "the", trade words such as "restaurant", a
//! parenthesised qualifier such as "(new york)", legal suffixes anywhere at the end).

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
}
