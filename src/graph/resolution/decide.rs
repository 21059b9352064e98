//! What a refresh does with its scored pairs, without I/O: which pairs the names' meaning
//! could still change and whose names to embed for them, the cosines joining the score, the
//! guard on names that are no evidence, and each pair's decision. The service's refresh and
//! the resolution benchmark's offline mode both run these, so the benchmark predicts what the
//! service does.

use super::model::{Explanation, Model, Record};
use super::names;
use super::pairs::ScoredPair;
use crate::graph::duplicates;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Names a refresh embeds at most. MiniLM embedded ~520 short names a second on two cores
/// (50,000 in 96 s); at a million entities nearly every name is in some pair meaning could
/// lift, and embedding them all took longer than everything else in the refresh. Past the
/// budget, pairs are compared by letters only (and the log says how many).
pub const MEANING_BUDGET: usize = 50_000;

/// Names a refresh embeds at most for pairs whose decision meaning cannot change (suggested
/// either way: the cosine only rescores them). A tenant with fewer embeds them all, as
/// before; at a million entities these were most of the names embedded.
pub const SCORE_ONLY_BUDGET: usize = 5_000;

/// The probabilities at which a pair merges automatically and is suggested.
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    pub auto_merge: f64,
    pub suggest: f64,
}

/// Short names, acronyms and one-word spelling variants are no evidence a machine should
/// merge on: such a pair merges automatically only when its attributes alone make it sure
/// ('green' / 'emma green' with the same birth date, ID and address), else it waits for a
/// person.
pub fn guarded(model: &Model, records: &[Record], pair: &ScoredPair, auto_merge: f64) -> bool {
    let (na, nb) = (&records[pair.a].candidate.normalized, &records[pair.b].candidate.normalized);
    (duplicates::is_short(na) || duplicates::is_short(nb) || names::one_word_variants(na, nb))
        && model.without_name(&pair.comparison) < auto_merge
}

/// The scored pairs whose names' cosine could change them (by index into `scored`), each
/// with whether meaning can change its decision (lift it to a suggestion or an automatic
/// merge) rather than only rescore it: not those already merging on letters (meaning only
/// adds), nor those `stored` says were recorded before (a refresh never records a pair twice).
pub fn meaning_wanted(
    records: &[Record],
    models: &BTreeMap<String, Model>,
    scored: &[ScoredPair],
    stored: impl Fn(&ScoredPair) -> bool,
    thresholds: Thresholds,
) -> Vec<(usize, bool)> {
    scored
        .iter()
        .enumerate()
        .filter(|(_, p)| p.explanation.probability < thresholds.auto_merge && !stored(p))
        .map(|(k, p)| {
            let model = &models[&p.type_key];
            let decides = p.explanation.probability < thresholds.suggest
                || (!guarded(model, records, p, thresholds.auto_merge)
                    && model.best_case(&p.comparison) >= thresholds.auto_merge);
            (k, decides)
        })
        .collect()
}

/// The records whose names a refresh embeds, and how many wanted pairs did not fit.
/// `wanted` holds pairs by index in `scored` and whether meaning can change their decision:
/// those come first, likeliest first, while the names number at most `budget`; then the
/// others, likeliest first, while they number at most `score_only`. A name already chosen
/// costs nothing again. Equal scores keep pair order, so the same data embeds the same names.
pub fn names_to_embed(
    scored: &[ScoredPair],
    wanted: &[(usize, bool)],
    budget: usize,
    score_only: usize,
) -> (Vec<usize>, usize) {
    let mut likeliest: Vec<(&ScoredPair, bool)> = wanted.iter().map(|&(k, d)| (&scored[k], d)).collect();
    likeliest.sort_by(|(x, dx), (y, dy)| {
        dy.cmp(dx).then_with(|| y.explanation.probability.total_cmp(&x.explanation.probability))
    });
    let mut chosen = BTreeSet::new();
    let mut over_budget = 0;
    for (pair, decides) in likeliest {
        let new = [pair.a, pair.b].iter().filter(|i| !chosen.contains(*i)).count();
        if chosen.len() + new > if decides { budget } else { score_only } {
            over_budget += 1;
            continue;
        }
        chosen.extend([pair.a, pair.b]);
    }
    (chosen.into_iter().collect(), over_budget)
}

/// Sets the cosine of the two names' embeddings (unit vectors, by record) on the wanted pairs
/// whose both names were embedded.
pub fn add_cosines(scored: &mut [ScoredPair], wanted: &[(usize, bool)], vectors: &HashMap<usize, &Vec<f32>>) {
    for &(k, _) in wanted {
        let pair = &mut scored[k];
        if let (Some(a), Some(b)) = (vectors.get(&pair.a), vectors.get(&pair.b)) {
            // Unit vectors: the dot product is the cosine.
            let cosine: f64 = a.iter().zip(b.iter()).map(|(x, y)| f64::from(x * y)).sum();
            pair.comparison.signals.embedding_similarity = Some(cosine);
        }
    }
}

/// A scored pair's final explanation (scored again where the names' cosine joined) and
/// whether it merges automatically; `None` below the suggestion threshold.
pub fn decide(
    models: &BTreeMap<String, Model>,
    records: &[Record],
    pair: &ScoredPair,
    thresholds: Thresholds,
) -> Option<(Explanation, bool)> {
    let model = &models[&pair.type_key];
    // Scored once on letters already; again only where the names' cosine joined.
    let explanation = match pair.comparison.signals.embedding_similarity {
        Some(_) => model.score(&pair.comparison),
        None => pair.explanation.clone(),
    };
    let score = explanation.probability;
    if score < thresholds.suggest {
        return None;
    }
    let automatic = score >= thresholds.auto_merge && !guarded(model, records, pair, thresholds.auto_merge);
    Some((explanation, automatic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::duplicates::Signals;
    use crate::graph::resolution::model::Comparison;

    fn pair(a: usize, b: usize, probability: f64) -> ScoredPair {
        let signals = Signals { name_similarity: 0.9, shared_surface_forms: 0.5, embedding_similarity: None };
        ScoredPair {
            a,
            b,
            type_key: "company".into(),
            comparison: Comparison {
                signals,
                same_core: false,
                same_words: false,
                same_content: false,
                levels: vec![],
                shared_word: None,
                shared_values: vec![],
                head_score: None,
            },
            explanation: Explanation { probability, match_weight: 0.0, prior_weight: 0.0, fields: vec![] },
        }
    }

    #[test]
    fn the_embedding_budget_goes_to_pairs_meaning_can_decide_then_the_likeliest() {
        let scored =
            [pair(0, 1, 0.70), pair(2, 3, 0.90), pair(4, 5, 0.60), pair(1, 6, 0.85), pair(7, 8, 0.70)];
        // (4,5) is the only pair meaning can decide: first, whatever its score; then (2,3) at
        // 0.90 and (1,6) at 0.85; the 0.70 pairs do not fit four more names.
        let wanted = [(0, false), (1, false), (2, true), (3, false), (4, false)];
        let (names, over) = names_to_embed(&scored, &wanted, 100, 6);
        assert_eq!(names, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(over, 2);
        // A name already chosen costs nothing again: (0,1) adds only 0.
        let (names, over) = names_to_embed(&scored, &wanted, 100, 7);
        assert_eq!(names, vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(over, 1);
        // The decisive pair's own budget is apart from the others'.
        let (names, over) = names_to_embed(&scored, &wanted, 1, 100);
        assert_eq!(names, vec![0, 1, 2, 3, 6, 7, 8]);
        assert_eq!(over, 1);
        // A pair not wanted (already stored, or merging on letters) is never embedded.
        let (names, over) = names_to_embed(&scored, &wanted[..2], 100, 100);
        assert_eq!(names, vec![0, 1, 2, 3]);
        assert_eq!(over, 0);
    }

    #[test]
    fn a_sure_pair_of_one_word_spellings_waits_for_a_person_and_meaning_rescores_a_pair() {
        use crate::graph::resolution::model::{compare, tests::record};
        // Names alone, shifted so that any like pair scores near 1.
        let model = Model { name_shift: vec![20.0; 5], ..Model::with_defaults(&[]) };
        let models = BTreeMap::from([("company".to_string(), model.clone())]);
        let thresholds = Thresholds { auto_merge: 0.95, suggest: 0.8 };
        let records = vec![
            record("1", "zarela", &[]),
            record("2", "zarzuela", &[]),
            record("3", "globex corporation", &[]),
            record("4", "globex corporaton", &[]),
        ];
        let scored = |a: usize, b: usize| {
            let comparison = compare(&records[a], &records[b], &[]);
            let explanation = model.score(&comparison);
            ScoredPair { a, b, type_key: "company".into(), comparison, explanation }
        };
        let (spellings, globex) = (scored(0, 1), scored(2, 3));
        assert!(spellings.explanation.probability >= 0.95 && globex.explanation.probability >= 0.95);
        assert_eq!(decide(&models, &records, &spellings, thresholds).map(|(_, auto)| auto), Some(false));
        assert_eq!(decide(&models, &records, &globex, thresholds).map(|(_, auto)| auto), Some(true));
        // A cosine set after scoring is scored again; without one the explanation stands.
        let mut stale = scored(2, 3);
        stale.explanation.probability = 0.85;
        let kept = decide(&models, &records, &stale, thresholds).expect("suggested").0;
        assert_eq!(kept.probability, 0.85);
        stale.comparison.signals.embedding_similarity = Some(1.0);
        let (rescored, auto) = decide(&models, &records, &stale, thresholds).expect("merged");
        assert!(rescored.probability >= 0.95 && auto, "{rescored:?}");
    }
}
