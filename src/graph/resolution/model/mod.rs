//! The Fellegi–Sunter model: each compared field lands on a comparison level, each level
//! has m (how often true matches land there) and u (how often non-matches do), and the
//! match weight of a pair is the prior's log-odds plus log2(m/u) summed over the fields.
//! The probability is 1 / (1 + 2^-weight).
//!
//! The name is compared on a continuous score (Jaro-Winkler over every surface form, shared
//! words, and the cosine of embeddings when there is an embedder; see
//! [`crate::graph::duplicates`]) that lands on one of [`NAME_LEVELS`]. The name is one field
//! among the others, with or without attributes: its weight is log2(m/u) of its level, m and
//! u estimated from the tenant's own names on every refresh (a type with no compared
//! attribute used to score on a fixed calibrated name score that nothing it saw could move;
//! it still does below [`LEARN_NAMES_FROM`] names, too few to estimate from), plus the
//! rare-word adjustment of [`super::rarity`].

use super::comparisons::{Field, Kind};
use super::rarity::{self, SharedValue, SharedWord, TermFrequency};
pub use super::record::Record;
use super::record::FUNCTION_WORDS;
use crate::graph::duplicates::{self, Signals};
use serde::Serialize;
use std::collections::BTreeMap;

/// A compared pair for estimation: the name level as evidence (`None` when blocking chose
/// the pair on the name alone: no evidence about m then), the name level as compared, one
/// level per field (`None`: missing, or no evidence because blocking chose the pair for
/// that field alone), and a label.
#[derive(Clone, Debug, PartialEq)]
pub struct Vector {
    pub name: Option<usize>,
    pub compared_name: usize,
    /// The name's score as compared (which of a record's pairs is its best).
    pub name_score: f64,
    pub levels: Vec<Option<usize>>,
    /// The two records (indexes into the records estimated from); `None` for a label.
    pub pair: Option<(usize, usize)>,
    /// `Some(true)`: a person said match; `Some(false)`: said not.
    pub label: Option<bool>,
}

/// Name levels (for the explanation and for estimating the prior), lowest first, with the
/// lower bound of each.
pub const NAME_LEVELS: &[(&str, f64)] =
    &[("different", 0.0), ("weak", 0.7), ("similar", 0.8), ("very similar", 0.9), ("equal", 0.97)];
/// A name whose core (see [`super::names::core_name`]) equals the other's scores at least
/// this: a suggestion, and a merge only with agreeing attributes.
pub const SAME_CORE: f64 = 0.93;
/// Names with the same words in another order score at least this ("equal"): a given name
/// and a surname swapped, 'smith john' for 'john smith', scored on letters 0.67 ("different"),
/// and a person's swapped records were never merged (Febrl1 names only: 36 more true pairs,
/// none wrong; chosen on Febrl1).
pub const SAME_WORDS: f64 = 0.97;
/// Name probabilities are clamped to this distance from 0 and 1 (±10 bits at most).
const CLAMP: f64 = 0.001;
/// The name level ("very similar") from which a rare word two names share adds its bits
/// whatever else the names say. Below it, names alike only in part that share a rare word are
/// as often two things of one project as one thing: 'TIMBER: a native system for querying
/// XML' / 'TIMBER: a native XML database' took 3.3 bits and merged (DBLP-ACM names: 4 wrong
/// automatic merges at the "weak" level; 1 left, 'DMDW 99' / 'DMDW 03', whose differing
/// words are numbers). There the bits are scaled by the share of the names the shared words
/// cover ([`rarity::coverage`]): a company name whose only word is the rare one ('sanofi' /
/// 'sanofi 54 rue la boetie') keeps them all, TIMBER's titles three quarters, two titles
/// sharing one word of five a fifth. Splink adjusts its exact level only. Chosen with
/// `RESOLUTION_QUICK=1` on books-dev (all fields: auto F1 0.684 -> 0.696, merges+suggestions
/// 0.636 -> 0.661; names: auto unchanged, merges+suggestions 0.744 -> 0.759) and
/// companies-dev (auto unchanged, merges+suggestions 0.522 -> 0.520), over no rare-word
/// bits below "similar" (companies-dev merges+suggestions 0.413), the scaling below
/// "similar" only or at every level, its square, and all-or-nothing on a full cover. The
/// cost elsewhere: Febrl1 names 0.848 -> 0.846, Febrl4 names 0.754 -> 0.753.
pub const RARE_WORD_COVERED_BELOW: usize = 3;
/// Names of a type from which a name with no compared attribute learns its own weights.
pub const LEARN_NAMES_FROM: usize = 100;
/// Default m and u of the name levels, before any estimate.
pub const NAME_M: [f64; 5] = [0.02, 0.05, 0.13, 0.3, 0.5];
pub const NAME_U: [f64; 5] = [0.95, 0.035, 0.01, 0.004, 0.001];

/// m and u per level of one attribute. u depends on the name's level: among non-matches
/// whose names look alike (two books of one series), an attribute agrees far more often
/// than among those whose names differ, so an agreement that comes with a like name is
/// weaker evidence (see [`super::em`]). m does not: a true match's attributes agree or not
/// whatever its name looks like.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldModel {
    pub field: Field,
    pub m: Vec<f64>,
    /// u by name level (one row per [`NAME_LEVELS`]), then by the field's level.
    pub u: Vec<Vec<f64>>,
    /// u whatever the name: what the attribute says with the name left out.
    pub u_any: Vec<f64>,
}

impl FieldModel {
    /// Bits of evidence at a level, with the name at `name_level`: log2(m/u).
    pub fn weight(&self, level: usize, name_level: usize) -> f64 {
        (self.m[level] / self.u[name_level][level]).log2()
    }

    /// Bits of evidence at a level with the name left out: log2(m/u_any).
    pub fn weight_any(&self, level: usize) -> f64 {
        (self.m[level] / self.u_any[level]).log2()
    }
}

/// The model of one tenant's entity type (or of all its types when no schema says more).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Share of candidate pairs that are matches.
    pub prior: f64,
    /// m and u of the name levels (the name's weight when attributes are compared).
    pub name_m: Vec<f64>,
    pub name_u: Vec<f64>,
    /// Bits added to a calibrated name's weight at each name level, learnt from labels (a
    /// learnt name moves through m and u instead, where the labels take part).
    pub name_shift: Vec<f64>,
    /// Whether the name weighs by its levels' estimated m and u when no attribute is
    /// compared: the type has [`LEARN_NAMES_FROM`] names at least.
    pub names_learnt: bool,
    /// Per name level, the mean information (bits) of the rarest word the level's candidate
    /// pairs share: where [`rarity::adjustment`] is centred. Empty (no adjustment) until a
    /// run has counted the type's words.
    pub name_rarity: Vec<Option<f64>>,
    pub fields: Vec<FieldModel>,
    /// Per field, the chance two of the type's records agree on a value at random, from
    /// which a shared value's adjustment is measured (see [`rarity::value_adjustment`]).
    /// Empty (no adjustment) until a run has counted the type's values.
    pub value_agreement: Vec<Option<f64>>,
}

/// A pair compared: the name signals and one level per field (`None`: a value missing).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub signals: Signals,
    pub same_core: bool,
    /// The names carry the same words in another order ('smith john' / 'john smith').
    pub same_words: bool,
    /// The names carry the same words, two at least, apart from function words ('for', 'in',
    /// 'and'): one catalogue drops them from titles ('Hyper-Programming Java' /
    /// 'Hyper-Programming in Java').
    pub same_content: bool,
    pub levels: Vec<Option<usize>>,
    /// The rarest word both names carry, when the type's words were counted.
    pub shared_word: Option<SharedWord>,
    /// Per field, the value both records hold, when the type's values were counted (empty
    /// otherwise).
    pub shared_values: Vec<Option<SharedValue>>,
    /// The score of the names' heads, when the type's names carry addresses (see
    /// [`super::names::head_score`]).
    pub head_score: Option<f64>,
}

impl Comparison {
    /// The name's probability on its own (symmetric: every input is).
    pub fn name_score(&self) -> f64 {
        let mut score = self.signals.score().max(self.head_score.unwrap_or(0.0));
        if self.same_words {
            score = score.max(SAME_WORDS);
        }
        if self.same_content {
            score = score.max(SAME_WORDS);
        }
        if self.same_core {
            score.max(SAME_CORE)
        } else {
            score
        }
    }

    pub fn name_level(&self) -> usize {
        name_level(self.name_score())
    }

    /// Whether the names' heads scored higher than the whole names (see
    /// [`super::names::head_score`]).
    pub fn on_heads(&self) -> bool {
        self.head_score.is_some_and(|heads| heads > self.signals.score())
    }
}

pub fn name_level(score: f64) -> usize {
    NAME_LEVELS.iter().rposition(|(_, floor)| score >= *floor).unwrap_or(0)
}

/// Compares two records on the name and on each field (in the fields' order).
pub fn compare(a: &Record, b: &Record, fields: &[Field]) -> Comparison {
    Comparison {
        signals: duplicates::signals(&a.candidate, &b.candidate),
        same_core: !a.core.is_empty() && a.core == b.core,
        same_words: sorted_words(&a.candidate.normalized) == sorted_words(&b.candidate.normalized),
        same_content: {
            let (x, y) = (content_words(&a.candidate.normalized), content_words(&b.candidate.normalized));
            x.len() >= 2 && x == y
        },
        levels: levels(fields, &a.attributes, &b.attributes),
        shared_word: None,
        shared_values: Vec::new(),
        head_score: None,
    }
}

/// A name's distinct words but function words, sorted.
fn content_words(text: &str) -> Vec<&str> {
    let mut words: Vec<&str> = text.split_whitespace().filter(|w| !FUNCTION_WORDS.contains(w)).collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// A name's words in sorted order (Splink's token-sort comparison).
fn sorted_words(text: &str) -> Vec<&str> {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    words.sort_unstable();
    words
}

/// One level per field (`None`: a value missing on either side).
fn levels(
    fields: &[Field],
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Vec<Option<usize>> {
    fields
        .iter()
        .map(|f| match (a.get(&f.key), b.get(&f.key)) {
            (Some(x), Some(y)) => f.kind.level(x, y),
            _ => None,
        })
        .collect()
}

/// Whether a seeded row whose name (or synonym) already names an entity joins that entity:
/// yes unless their compared attributes speak against it. The name counts as equal (it
/// normalised to the same key) and the attributes are weighed with the kinds' default m and
/// u, since a seed has no estimate of its own; the pair joins when its probability reaches
/// [`SEED_JOIN`]. Without compared attributes on both sides it always joins, as before
/// attributes were compared. Symmetric, like every comparison.
pub fn seed_joins(
    fields: &[Field],
    row: &BTreeMap<String, String>,
    entity: &BTreeMap<String, String>,
) -> bool {
    let model = Model::with_defaults(fields);
    let equal = NAME_LEVELS.len() - 1;
    let attributes: f64 = model
        .fields
        .iter()
        .zip(levels(fields, row, entity))
        .filter_map(|(field, level)| level.map(|l| field.weight(l, equal)))
        .sum();
    logit2(1.0 - CLAMP) + attributes >= logit2(SEED_JOIN)
}

/// The probability at which a seeded row joins the entity its name names: the default
/// automatic-merge threshold, so a seed merges what a refresh would.
pub const SEED_JOIN: f64 = 0.95;

/// One field's part of a score.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldWeight {
    /// `name`, or the attribute key.
    pub field: String,
    /// `name`, or the comparison kind.
    pub kind: String,
    /// The level's name (`different` … `equal`).
    pub level: String,
    /// Bits of evidence: positive for a match, negative against.
    pub weight: f64,
    /// The level's m and u (absent for the name when it is the only field: it is scored
    /// continuously then). An attribute's u is the one at the pair's name level: how often
    /// non-matches whose names compare like these agree like this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub u: Option<f64>,
    /// The rare-word adjustment (included in `weight`): for the name, the rarest word both
    /// names carry, the share of the type's names that carry it; for an attribute, the value
    /// both records hold and the share of records holding it; and the bits it adds or takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_frequency: Option<TermFrequency>,
    /// For the name: its level is that of the names' heads, the words before an address or
    /// legal form ('sanofi' of 'sanofi 54 rue la boetie 75008 france'), which scored higher
    /// than the whole names (see [`super::names::head`]). Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compared_on_heads: bool,
}

/// A score with its reasons.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub probability: f64,
    /// Prior plus every field's weight, in bits.
    pub match_weight: f64,
    /// The prior's log-odds, in bits.
    pub prior_weight: f64,
    pub fields: Vec<FieldWeight>,
}

impl Model {
    /// A model with the kinds' default m and u, before any estimate.
    pub fn with_defaults(fields: &[Field]) -> Self {
        Model {
            prior: 0.05,
            name_m: NAME_M.to_vec(),
            name_u: NAME_U.to_vec(),
            name_shift: vec![0.0; NAME_LEVELS.len()],
            name_rarity: Vec::new(),
            value_agreement: Vec::new(),
            names_learnt: false,
            fields: fields
                .iter()
                .map(|f| FieldModel {
                    field: f.clone(),
                    m: f.kind.default_m(),
                    u: vec![default_u(&f.kind); NAME_LEVELS.len()],
                    u_any: default_u(&f.kind),
                })
                .collect(),
        }
    }

    /// The probability of a comparison, as [`Model::score`] gives it, without building the
    /// explanation: what a run computes for every candidate pair.
    pub fn probability(&self, comparison: &Comparison) -> f64 {
        let (name_weight, _, _, _) = self.name_weight(comparison);
        let name_level = comparison.name_level();
        // Summed in the explanation's order, so both give the same bits.
        let total = self
            .fields
            .iter()
            .zip(&comparison.levels)
            .enumerate()
            .filter_map(|(i, (model, level))| {
                level.map(|l| model.weight(l, name_level) + self.value_bits(i, comparison))
            })
            .fold(name_weight, |total, weight| total + weight);
        1.0 / (1.0 + (-total).exp2())
    }

    /// The rare-value adjustment of field `i` (see [`rarity::value_adjustment`]), when both
    /// records hold one value and the type's values were counted.
    fn value_bits(&self, i: usize, comparison: &Comparison) -> f64 {
        self.value_frequency(i, comparison).map_or(0.0, |t| t.bits)
    }

    fn value_frequency(&self, i: usize, comparison: &Comparison) -> Option<TermFrequency> {
        let shared = comparison.shared_values.get(i)?.as_ref()?;
        let agreement = (*self.value_agreement.get(i)?)?;
        Some(TermFrequency {
            word: None,
            value: Some(shared.value.clone()),
            share: round(shared.share),
            bits: rarity::value_adjustment(shared.share, agreement),
        })
    }

    /// The probability the prior and the attributes give with the name left out (each
    /// attribute weighed whatever the name: not at the pair's name level): what a pair whose
    /// name is no evidence (a short name, an acronym, a one-word spelling variant) has to
    /// reach on its own to merge automatically.
    pub fn without_name(&self, comparison: &Comparison) -> f64 {
        let total = self
            .fields
            .iter()
            .zip(&comparison.levels)
            .enumerate()
            .filter_map(|(i, (model, level))| {
                level.map(|l| model.weight_any(l) + self.value_bits(i, comparison))
            })
            .fold(logit2(self.prior), |total, weight| total + weight);
        1.0 / (1.0 + (-total).exp2())
    }

    /// The probability the pair would reach if the names' embeddings agreed fully (cosine
    /// 1): meaning only ever adds to the name's score, so a pair below a threshold here
    /// stays below it whatever the embedder says, and need not be embedded.
    pub fn best_case(&self, comparison: &Comparison) -> f64 {
        let signals = Signals { embedding_similarity: Some(1.0), ..comparison.signals.clone() };
        self.probability(&Comparison { signals, ..comparison.clone() })
    }

    /// The name's weight (the prior and the rare-word adjustment included, in bits), its m
    /// and u when it is estimated, and the adjustment.
    fn name_weight(&self, comparison: &Comparison) -> (f64, Option<f64>, Option<f64>, Option<TermFrequency>) {
        let level = comparison.name_level();
        let term_frequency = self.term_frequency(comparison, level);
        let adjustment = term_frequency.as_ref().map_or(0.0, |t| t.bits);
        // The name learns like any field once there are names enough to learn from: m from
        // EM over the candidate pairs, u from random pairs, labels moving both (see
        // [`super::em`]). A small tenant's few names are mostly the pairs themselves (u of
        // "equal" from six pairs, one of them the duplicate, is 1/6): its name keeps the
        // calibrated score, which labels move by the shift.
        if self.fields.is_empty() && !self.names_learnt {
            let name = comparison.name_score().clamp(CLAMP, 1.0 - CLAMP);
            let weight = logit2(name) + self.name_shift.get(level).copied().unwrap_or(0.0);
            return (weight + adjustment, None, None, term_frequency);
        }
        let (m, u) = (self.name_m[level], self.name_u[level]);
        (logit2(self.prior) + (m / u).log2() + adjustment, Some(m), Some(u), term_frequency)
    }

    /// The rare-word adjustment of a pair at a name level (see [`rarity`]). Below
    /// [`RARE_WORD_COVERED_BELOW`] a rarer word than usual adds bits in proportion to how much
    /// of the names the shared words cover ([`rarity::coverage`]); a commoner one still takes
    /// them all.
    fn term_frequency(&self, comparison: &Comparison, level: usize) -> Option<TermFrequency> {
        let shared = comparison.shared_word.as_ref()?;
        let baseline = (*self.name_rarity.get(level)?)?;
        let mut bits = rarity::adjustment(shared, baseline);
        if bits > 0.0 && level < RARE_WORD_COVERED_BELOW {
            bits *= shared.coverage;
        }
        Some(TermFrequency { word: Some(shared.word.clone()), value: None, share: round(shared.share), bits })
    }

    /// The match weight and probability of a comparison, with the explanation.
    pub fn score(&self, comparison: &Comparison) -> Explanation {
        let prior_weight = logit2(self.prior);
        let name_level = comparison.name_level();
        let (name_weight, m, u, term_frequency) = self.name_weight(comparison);
        let (m, u) = (m.map(round), u.map(round));
        let term_frequency = term_frequency.map(|t| TermFrequency { bits: round(t.bits), ..t });
        let mut fields = vec![FieldWeight {
            field: "name".into(),
            kind: "name".into(),
            level: NAME_LEVELS[name_level].0.into(),
            weight: round(name_weight - prior_weight),
            m,
            u,
            term_frequency,
            compared_on_heads: comparison.on_heads(),
        }];
        let mut total = name_weight;
        for (i, (model, level)) in self.fields.iter().zip(&comparison.levels).enumerate() {
            let Some(level) = *level else { continue };
            let term_frequency = self.value_frequency(i, comparison);
            let weight = model.weight(level, name_level) + term_frequency.as_ref().map_or(0.0, |t| t.bits);
            total += weight;
            fields.push(FieldWeight {
                field: model.field.key.clone(),
                kind: model.field.kind.name().into(),
                level: model.field.kind.levels()[level].into(),
                weight: round(weight),
                m: Some(round(model.m[level])),
                u: Some(round(model.u[name_level][level])),
                term_frequency: term_frequency.map(|t| TermFrequency { bits: round(t.bits), ..t }),
                compared_on_heads: false,
            });
        }
        Explanation {
            probability: 1.0 / (1.0 + (-total).exp2()),
            match_weight: round(total),
            prior_weight: round(prior_weight),
            fields,
        }
    }
}

/// Default u: how often two unrelated records land on each level.
pub fn default_u(kind: &Kind) -> Vec<f64> {
    match kind {
        Kind::Exact => vec![0.95, 0.05],
        Kind::Fuzzy => vec![0.9, 0.07, 0.02, 0.01],
        Kind::Number { .. } | Kind::Date { .. } => vec![0.95, 0.04, 0.01],
        Kind::Identifier => vec![0.99, 0.009, 0.001],
    }
}

fn logit2(p: f64) -> f64 {
    (p / (1.0 - p)).log2()
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
pub(crate) mod tests;
