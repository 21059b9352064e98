//! Duplicate detection: which pairs of entities may be one, and how sure we are.
//!
//! Candidate pairs come from blocking ([`crate::graph::resolution::blocking`]). Each pair
//! gets name signals in 0..1 (name similarity by Jaro-Winkler, overlap of surface-form
//! tokens, and the cosine of name embeddings when an embedder is available) and a weighted
//! score, the name's evidence in the resolution model ([`crate::graph::resolution::model`]).
//! Every signal is symmetric: scoring (a, b) and (b, a) gives the same numbers.

/// What the detector knows of an entity.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub entity_id: String,
    pub bucket_id: String,
    pub type_name: String,
    pub normalized: String,
    /// Normalised surface forms (including the canonical name).
    pub forms: Vec<String>,
}

/// Characters of an entity's surface forms its comparisons read: its normalised name, then
/// its other forms shortest first, while they fit (the name at least). The name signals
/// compare every form with every form and every word with every word, and nothing bounds how
/// many synonyms an entity gathers (1,000 a request, any number over time): measured
/// (release), two entities with 1,000 forms each took 0.5 s for their one pair, quadratically
/// more with more.
pub const COMPARED_FORM_CHARS: usize = 1_000;

/// `forms` as comparisons read them (see [`COMPARED_FORM_CHARS`]), in a deterministic order.
pub fn compared_forms(normalized: &str, mut forms: Vec<String>) -> Vec<String> {
    forms.sort_by(|a, b| (a != normalized, a.len(), a).cmp(&(b != normalized, b.len(), b)));
    forms.dedup();
    let mut chars = 0;
    let kept = forms
        .iter()
        .take_while(|form| {
            chars += form.chars().count();
            chars <= COMPARED_FORM_CHARS
        })
        .count();
    forms.truncate(kept.max(1));
    forms
}

#[derive(Clone, Debug, PartialEq)]
pub struct Signals {
    pub name_similarity: f64,
    pub shared_surface_forms: f64,
    pub embedding_similarity: Option<f64>,
}

impl Signals {
    /// Letters first; meaning can only add evidence. A typo embeds far from the right
    /// spelling (so on the Febrl sets a plain weighted sum with the cosine lost recall: F1
    /// 0.80 to 0.70 on dataset1), while two spellings of one meaning score high by cosine.
    pub fn score(&self) -> f64 {
        let lexical = 0.65 * self.name_similarity + 0.35 * self.shared_surface_forms;
        match self.embedding_similarity {
            Some(cosine) => lexical
                .max(0.45 * self.name_similarity + 0.25 * self.shared_surface_forms + 0.30 * cosine.max(0.0)),
            None => lexical,
        }
    }
}

/// Two tokens this similar count as the same word (typos, plurals).
const SAME_TOKEN: f64 = 0.9;

/// The signals of one pair (without embeddings): the best Jaro-Winkler between any of their
/// names, and the share of words their surface forms have in common, typos forgiven.
pub fn signals(a: &Candidate, b: &Candidate) -> Signals {
    forms_signals(&a.normalized, &a.forms, &b.normalized, &b.forms)
}

/// The signals of two names given as a name and its surface forms (see [`signals`]).
pub fn forms_signals<S: AsRef<str>>(a: &str, a_forms: &[S], b: &str, b_forms: &[S]) -> Signals {
    let tokens = |forms: &[S]| -> Vec<String> {
        let mut tokens: Vec<String> =
            forms.iter().flat_map(|f| f.as_ref().split_whitespace()).map(String::from).collect();
        tokens.sort();
        tokens.dedup();
        tokens
    };
    let (ta, tb) = (tokens(a_forms), tokens(b_forms));
    // Both directions count, over both lists: the share is the same whichever side comes
    // first ('cha cha cha' / 'cha cha chas' once scored 0.81 one way and 0.99 the other).
    let matched = |from: &[String], into: &[String]| {
        from.iter().filter(|x| into.iter().any(|y| jaro_winkler(x, y) >= SAME_TOKEN)).count()
    };
    let total = ta.len() + tb.len();
    let shared = if total == 0 { 0.0 } else { (matched(&ta, &tb) + matched(&tb, &ta)) as f64 / total as f64 };
    let name = a_forms
        .iter()
        .flat_map(|fa| b_forms.iter().map(move |fb| jaro_winkler(fa.as_ref(), fb.as_ref())))
        .fold(jaro_winkler(a, b), f64::max);
    Signals { name_similarity: name, shared_surface_forms: shared.min(1.0), embedding_similarity: None }
}

/// A short name or an acronym: resolved by exact key or declared synonym only, never merged
/// automatically.
pub fn is_short(normalized: &str) -> bool {
    let compact: String = normalized.chars().filter(|c| !c.is_whitespace()).collect();
    compact.chars().count() <= 4 || (!normalized.contains(' ') && compact.chars().count() <= 5)
}

/// Jaro-Winkler similarity of two strings, 0..1.
pub fn jaro_winkler(a: &str, b: &str) -> f64 {
    // The greedy matching below is not exactly symmetric: always match the same way round.
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let range = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut b_used = vec![false; b.len()];
    let mut a_matches = Vec::new();
    for (i, ca) in a.iter().enumerate() {
        let lo = i.saturating_sub(range);
        let hi = (i + range + 1).min(b.len());
        if let Some(j) = (lo..hi).find(|&j| !b_used[j] && b[j] == *ca) {
            b_used[j] = true;
            a_matches.push(*ca);
        }
    }
    let m = a_matches.len();
    if m == 0 {
        return 0.0;
    }
    let b_matches: Vec<char> = b.iter().zip(&b_used).filter(|(_, used)| **used).map(|(c, _)| *c).collect();
    let transpositions = a_matches.iter().zip(&b_matches).filter(|(x, y)| x != y).count() / 2;
    let m = m as f64;
    let jaro = (m / a.len() as f64 + m / b.len() as f64 + (m - transpositions as f64) / m) / 3.0;
    let prefix = a.iter().zip(&b).take(4).take_while(|(x, y)| x == y).count() as f64;
    jaro + prefix * 0.1 * (1.0 - jaro)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, name: &str, type_name: &str) -> Candidate {
        Candidate {
            entity_id: id.into(),
            bucket_id: "b".into(),
            type_name: type_name.into(),
            normalized: name.into(),
            forms: vec![name.into()],
        }
    }

    #[test]
    fn comparisons_read_the_name_and_the_shortest_forms_that_fit() {
        let forms = |n: usize| (0..n).map(|i| format!("acme form {i:05}")).collect::<Vec<_>>();
        let mut many = forms(10_000);
        many.push("acme".into());
        let kept = compared_forms("acme", many);
        assert_eq!(kept[0], "acme");
        assert_eq!(kept.iter().map(|f| f.chars().count()).sum::<usize>(), 4 + 66 * 15);
        assert_eq!(kept, compared_forms("acme", kept.iter().rev().cloned().collect()), "in any order read");
        // An entity's few forms are all read.
        assert_eq!(compared_forms("b", vec!["c d".into(), "b".into()]), ["b", "c d"]);
    }

    #[test]
    fn jaro_winkler_matches_the_textbook_values() {
        assert!((jaro_winkler("martha", "marhta") - 0.9611).abs() < 1e-3);
        assert!((jaro_winkler("dixon", "dicksonx") - 0.8133).abs() < 1e-3);
        assert_eq!(jaro_winkler("same", "same"), 1.0);
        assert_eq!(jaro_winkler("abc", "xyz"), 0.0);
    }

    #[test]
    fn typos_score_high_and_other_names_low_the_same_both_ways() {
        let all = [
            candidate("1", "jonathan smith", "Person"),
            candidate("2", "jonathon smith", "Person"),
            candidate("3", "jonathan smith", "Company"),
            candidate("4", "acme widgets", "Company"),
            candidate("5", "cha cha cha", "Company"),
            candidate("6", "cha cha chas", "Company"),
        ];
        let close = signals(&all[0], &all[1]);
        let far = signals(&all[2], &all[3]);
        assert!(close.score() > 0.8, "{close:?}");
        assert!(far.score() < 0.6, "{far:?}");
        for a in &all {
            for b in &all {
                assert_eq!(signals(a, b), signals(b, a), "{} / {}", a.normalized, b.normalized);
            }
        }
    }

    #[test]
    fn an_embedding_can_raise_a_score_but_never_lower_it() {
        let lexical =
            Signals { name_similarity: 0.97, shared_surface_forms: 1.0, embedding_similarity: None };
        let far = Signals { embedding_similarity: Some(0.2), ..lexical.clone() };
        let near =
            Signals { name_similarity: 0.7, shared_surface_forms: 0.5, embedding_similarity: Some(0.95) };
        assert_eq!(far.score(), lexical.score());
        assert!(near.score() > Signals { embedding_similarity: None, ..near.clone() }.score());
    }

    #[test]
    fn short_names_and_acronyms_are_recognised() {
        assert!(is_short("ibm") && is_short("nasa") && is_short("a b") && is_short("bmw"));
        assert!(!is_short("acme widgets") && !is_short("globex"));
    }
}
