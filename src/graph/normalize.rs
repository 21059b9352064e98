//! Name normalisation for entity resolution: two surface forms are the same name when they
//! normalise to the same text. NFKC, lower case, punctuation as spaces, whitespace folded,
//! and trailing legal suffixes (Inc, LLC, Ltd, GmbH, …) dropped.

use unicode_normalization::UnicodeNormalization;

/// The normalised form of a name; empty when nothing but punctuation is left.
pub fn normalize(name: &str) -> String {
    let folded: String =
        name.nfkc().flat_map(char::to_lowercase).map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    // "L.L.C." became "l l c": join runs of single letters back into one word first.
    let mut words: Vec<String> = Vec::new();
    let mut letters = String::new();
    for word in folded.split_whitespace() {
        if word.chars().count() == 1 && word.chars().all(char::is_alphabetic) {
            letters.push_str(word);
            continue;
        }
        if !letters.is_empty() {
            words.push(std::mem::take(&mut letters));
        }
        words.push(word.to_string());
    }
    if !letters.is_empty() {
        words.push(letters);
    }
    while words.len() > 1 && words.last().is_some_and(|w| super::legal_forms::ends_a_key(w)) {
        words.pop();
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn case_whitespace_and_punctuation_do_not_matter() {
        assert_eq!(normalize("  ACME   Widgets, "), "acme widgets");
        assert_eq!(normalize("acme-widgets"), "acme widgets");
    }

    #[test]
    fn legal_suffixes_are_dropped_but_never_the_whole_name() {
        for name in [
            "Acme Inc.",
            "ACME, Inc",
            "Acme LLC",
            "Acme L.L.C.",
            "Acme Ltd",
            "Acme GmbH",
            "Acme Corp.",
            "Acme Co. Ltd.",
        ] {
            assert_eq!(normalize(name), "acme", "{name}");
        }
        assert_eq!(normalize("Limited"), "limited");
        assert_eq!(normalize("Inc"), "inc");
    }

    #[test]
    fn compatibility_forms_fold_under_nfkc() {
        assert_eq!(normalize("ＡＣＭＥ"), "acme");
        assert_eq!(normalize("ﬁnance"), "finance");
        assert_eq!(normalize("Straße"), "straße");
    }

    #[test]
    fn acronyms_keep_their_letters() {
        assert_eq!(normalize("I.B.M."), "ibm");
        assert_eq!(normalize("IBM"), "ibm");
        assert_ne!(normalize("IBM"), normalize("International Business Machines"));
    }

    #[test]
    fn punctuation_alone_normalises_to_nothing() {
        assert_eq!(normalize("!!! ..."), "");
    }
}
