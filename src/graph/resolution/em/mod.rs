//! Estimating m, u and the prior from the tenant's own records, as Splink does, with one
//! step more for what Splink's model leaves out (the dependence of attributes on the name):
//!
//! - u of the name from pairs drawn at random — almost all of them non-matches — by a
//!   fixed-seed generator over the records in the order of their names, so the same data
//!   gives the same estimate; then from the candidate pairs that are surely not matches
//!   (see [`candidate_name_u`]), since the prior is estimated over the candidate pairs too;
//! - m and the prior by expectation–maximisation over the candidate pairs, u held fixed.
//!   The name takes part in the E step through its levels. The prior stays at most
//!   records / candidate pairs (about one match per record);
//! - u of each attribute *per name level*, from the candidate pairs that are surely not
//!   matches (see [`conditional_u`]), then m and the prior again with it. Among non-matches
//!   an attribute agrees far more often when the names look alike: two books of one series
//!   share title words, author and publisher. With one u from random pairs, where a shared
//!   author is rare, such an agreement weighed 7–10 bits on top of the like names, and
//!   every series became one entity (books: attributes made the result worse than names
//!   alone, and worse than Splink's);
//! - a field that alone put a pair among the candidates is no evidence about it (see
//!   [`super::pairs`]): it agrees by construction. Nor is the name of a pair blocked on the
//!   name alone evidence about the name's m.
//!
//! Labels: a pair a person decided (an accepted or dismissed suggestion) counts
//! [`LABEL_WEIGHT`] times with its known class: an accepted pair in the M step as a sure
//! match (raising m at its levels), a dismissed one as a sure non-match (raising u at its
//! levels, so the same agreement weighs less); the name's levels take part like a field's,
//! which is how labels move the name, with attributes or without (the name is then the
//! only field, its m estimated from the candidate pairs' name levels). Each estimate is smoothed
//! towards the kind's defaults (an attribute's u: towards the random pairs') by
//! [`PSEUDO_COUNTS`], so a small tenant keeps sensible weights.

use super::comparisons::Field;
use super::model::{
    compare, default_u, name_level, FieldModel, Model, Record, Vector, NAME_LEVELS, NAME_M, NAME_U,
};
use super::strangers::{alike_groups, apart, linked, pairs_within, partners};

/// Random pairs drawn for u. A name level strangers rarely reach rests on the few random
/// pairs that reach it, some of them true matches, and an agreeing level's u is never below
/// the random pairs' (see [`at_least_random`]): with 20,000 pairs, two or three DBLP-ACM
/// titles "similar" or "very similar" at random put u there at 1e-4, six times what 200,000
/// pairs measure (2.5e-5), and matches at those levels fell short of the automatic merge
/// (DBLP-ACM names: F1 0.946 -> 0.967). Chosen on the dev halves with `RESOLUTION_QUICK=1`:
/// books-dev names 0.740 -> 0.765, companies-dev 0.290 -> 0.309, books-dev all unchanged;
/// 1,000,000 pairs gave no more. The cost: 180,000 comparisons more per type and refresh.
pub const RANDOM_PAIRS: usize = 200_000;
/// EM rounds (Splink stops on convergence; a fixed count keeps refreshes reproducible).
const ROUNDS: usize = 25;
/// Weight of the defaults in every estimate, in pairs.
const PSEUDO_COUNTS: f64 = 10.0;
/// How many estimated pairs one labelled pair counts as.
pub const LABEL_WEIGHT: f64 = 5.0;

/// Estimates the model for these fields from the records and the candidate pairs' vectors.
/// `addressed`: the type's names carry addresses ([`super::names::carry_addresses`]).
pub fn estimate(records: &[Record], fields: &[Field], vectors: &[Vector], addressed: bool) -> Model {
    let defaults = Model::with_defaults(fields);
    let (random_name_u, random_field_u) = estimate_u(records, fields, vectors);
    // The name's u is that of the candidate pairs that are surely not matches, not of random
    // pairs: blocking chose the candidates for their like names, so
    // among them like names are common whether they match or not. Held to random pairs' u,
    // EM took that excess for matches (every "similar" candidate pair a match: Febrl's
    // names-only runs merged 10,000 pairs of 1,000 people, precision 0.04). The prior it
    // estimates is over the candidate pairs, and so is this u.
    // With attributes too: books' titles carry no evidence about the name's m (fuzzy
    // attributes block nothing, so every pair was chosen on its name), and held to random
    // pairs' u an equal title weighed 13 bits, a like one 12: two editions or two books of a
    // series with one author merged (books-dev, all fields: F1 0.51 against 0.76 on names
    // alone; with this and the two changes below 0.68).
    // A name with no compared attribute beside it: records in groups of like names (below).
    let groups = fields.is_empty().then(|| alike_groups(records.len(), vectors, addressed));
    let name_u = candidate_name_u(&random_name_u, records.len(), vectors, groups.as_deref());
    // Duplicates are a minority: about one duplicate per record at most, and a matching pair
    // takes two records, so at most half a matching pair per record. Without this
    // bound, pairs blocked together on a value rare at random (a suburb, a postcode) all
    // looked likely in the first E step and EM settled on "every pair matches" (prior 0.9,
    // each m the population's: a whole suburb merged into one entity on Febrl2). At one pair
    // per record (twice the bound), names-only runs sat at the bound and EM filled it with
    // weakly alike names of strangers: 14,854 pairs the model put at 0.13 held almost no match
    // (Febrl2 names, seeded: expected calibration error 0.061, now 0.030). Checked on
    // books-dev and companies-dev: unchanged but books-dev all fields, F1 0.682 -> 0.684.
    // Names alone: a company written eight ways has 28 matching pairs for 8 records, past
    // the bound; the pairs inside the groups of like names bound it too (see
    // [`alike_groups`]).
    let bound = groups.as_deref().map_or(0.0, pairs_within).max(0.5 * records.len() as f64);
    let ceiling = (bound / vectors.len().max(1) as f64).clamp(1e-4, 0.9);
    let unconditional: Vec<Vec<Vec<f64>>> =
        random_field_u.iter().map(|u| vec![u.clone(); NAME_LEVELS.len()]).collect();
    let first = rounds(&defaults, ceiling, &name_u, &unconditional, vectors);
    let (field_u, u_any) = conditional_u(&first, &name_u, &random_field_u, records.len(), vectors);
    let (prior, name_m, field_m) = rounds(&defaults, ceiling, &name_u, &field_u, vectors);
    let mut name_shift = vec![0.0; NAME_LEVELS.len()];
    for (level, shift) in name_shift.iter_mut().enumerate() {
        let count = |matched: bool| {
            vectors.iter().filter(|v| v.name == Some(level) && v.label == Some(matched)).count() as f64
        };
        *shift = ((1.0 + count(true)) / (1.0 + count(false))).log2();
    }
    Model {
        prior,
        name_m,
        name_u,
        name_shift,
        name_rarity: Vec::new(),
        value_agreement: Vec::new(),
        names_learnt: records.len() >= super::model::LEARN_NAMES_FROM,
        fields: fields
            .iter()
            .zip(field_m)
            .zip(field_u)
            .zip(u_any)
            .map(|(((field, m), u), u_any)| FieldModel {
                field: field.clone(),
                u: u.iter().map(|row| monotone_u(&m, row)).collect(),
                u_any: monotone_u(&m, &u_any),
                m,
            })
            .collect(),
    }
}

/// The prior, the name's m and each field's m: EM over the vectors, u held fixed
/// (`field_u`: [field][name level][level]).
fn rounds(
    defaults: &Model,
    ceiling: f64,
    name_u: &[f64],
    field_u: &[Vec<Vec<f64>>],
    vectors: &[Vector],
) -> (f64, Vec<f64>, Vec<Vec<f64>>) {
    let mut prior = defaults.prior.min(ceiling);
    let mut name_m = NAME_M.to_vec();
    let mut field_m: Vec<Vec<f64>> = defaults.fields.iter().map(|f| f.m.clone()).collect();
    for _ in 0..ROUNDS {
        let mut name_counts = vec![0.0; NAME_LEVELS.len()];
        let mut counts: Vec<Vec<f64>> = field_m.iter().map(|m| vec![0.0; m.len()]).collect();
        let (mut matches, mut total) = (0.0, 0.0);
        for vector in vectors {
            let (posterior, weight) = match vector.label {
                Some(true) => (1.0, LABEL_WEIGHT),
                Some(false) => (0.0, LABEL_WEIGHT),
                None => {
                    let mut odds = prior / (1.0 - prior);
                    if let Some(n) = vector.name {
                        odds *= name_m[n] / name_u[n];
                    }
                    for (i, level) in vector.levels.iter().enumerate() {
                        if let Some(l) = level {
                            odds *= field_m[i][*l] / field_u[i][vector.compared_name][*l];
                        }
                    }
                    (odds / (1.0 + odds), 1.0)
                }
            };
            matches += posterior * weight;
            total += weight;
            if let Some(n) = vector.name {
                name_counts[n] += posterior * weight;
            }
            for (i, level) in vector.levels.iter().enumerate() {
                if let Some(l) = level {
                    counts[i][*l] += posterior * weight;
                }
            }
        }
        prior = ((matches + PSEUDO_COUNTS * defaults.prior) / (total + PSEUDO_COUNTS)).clamp(1e-4, ceiling);
        name_m = monotone_m(&smooth(&name_counts, &NAME_M), name_u);
        for (i, m) in field_m.iter_mut().enumerate() {
            *m = smooth(&counts[i], &defaults.fields[i].m);
        }
    }
    (prior, name_m, field_m)
}

/// Each field's u at each name level, from the candidate pairs that are surely not matches:
/// a record has about one duplicate at most, so of its candidate pairs only the one that
/// scores highest under the first estimate may be its match; a pair that is neither
/// record's best, nor joins two records linked by a chain of such best pairs (see
/// [`linked`]), is counted as a non-match (as are dismissed labels). Among those, the
/// series of an author (five books, a like title each) show that a shared author comes with
/// like titles. Estimated this way rather than weighted by EM's own posterior, which counted
/// true matches the attributes alone could not recognise as non-matches and collapsed (a
/// year agreeing "among non-matches" as often as among matches, DBLP-ACM). Smoothed towards
/// all name levels together (returned too: u with the name left out), and those towards
/// the random pairs.
fn conditional_u(
    first: &(f64, Vec<f64>, Vec<Vec<f64>>),
    name_u: &[f64],
    random_field_u: &[Vec<f64>],
    records: usize,
    vectors: &[Vector],
) -> (Vec<Vec<Vec<f64>>>, Vec<Vec<f64>>) {
    let (prior, name_m, field_m) = first;
    let weight = |vector: &Vector| {
        let name = vector.compared_name;
        let mut bits = (prior / (1.0 - prior)).log2() + (name_m[name] / name_u[name]).log2();
        for (i, level) in vector.levels.iter().enumerate() {
            if let Some(l) = level {
                bits += (field_m[i][*l] / random_field_u[i][*l]).log2();
            }
        }
        bits
    };
    // Each record's best pair (highest weight, then first in order).
    let mut best: Vec<Option<(f64, usize)>> = vec![None; records];
    for (n, vector) in vectors.iter().enumerate() {
        let Some((a, b)) = vector.pair else { continue };
        let w = weight(vector);
        for end in [a, b] {
            if best[end].is_none_or(|(top, _)| w > top) {
                best[end] = Some((w, n));
            }
        }
    }
    let mut counts: Vec<Vec<Vec<f64>>> =
        random_field_u.iter().map(|u| vec![vec![0.0; u.len()]; NAME_LEVELS.len()]).collect();
    let group = linked(&partners(&best, vectors));
    for (n, vector) in vectors.iter().enumerate() {
        let count = match (vector.label, vector.pair) {
            (Some(false), _) => LABEL_WEIGHT,
            (None, Some((a, b)))
                if best[a].map(|(_, m)| m) != Some(n)
                    && best[b].map(|(_, m)| m) != Some(n)
                    && group[a] != group[b] =>
            {
                1.0
            }
            _ => continue,
        };
        for (i, level) in vector.levels.iter().enumerate() {
            if let Some(l) = level {
                counts[i][vector.compared_name][*l] += count;
            }
        }
    }
    counts
        .iter()
        .zip(random_field_u)
        .map(|(by_name, random)| {
            let all: Vec<f64> = (0..random.len()).map(|l| by_name.iter().map(|c| c[l]).sum()).collect();
            let pooled = smooth(&all, random);
            let by_level = by_name.iter().map(|c| at_least_random(smooth(c, &pooled), random)).collect();
            (by_level, at_least_random(pooled, random))
        })
        .unzip()
}

/// The name's u over the candidate pairs: of a record's candidate pairs only the one whose
/// name scores highest may be its match, and pairs of records that share that likeliest
/// partner (see [`apart`]), or that are in one group of like names when there are `groups`
/// (see [`super::strangers::alike_groups`]); the other pairs, with the dismissed labels, are counted as
/// non-matches. Smoothed towards the random pairs' u and never below it at an agreeing level.
fn candidate_name_u(
    random: &[f64],
    records: usize,
    vectors: &[Vector],
    groups: Option<&[Option<usize>]>,
) -> Vec<f64> {
    let mut best: Vec<Option<(f64, usize)>> = vec![None; records];
    for (n, vector) in vectors.iter().enumerate() {
        let Some((a, b)) = vector.pair else { continue };
        for end in [a, b] {
            if best[end].is_none_or(|(top, _)| vector.name_score > top) {
                best[end] = Some((vector.name_score, n));
            }
        }
    }
    let partner = partners(&best, vectors);
    let mut counts = vec![0.0; NAME_LEVELS.len()];
    for vector in vectors {
        counts[vector.compared_name] += match (vector.label, vector.pair) {
            (Some(false), _) => LABEL_WEIGHT,
            (None, Some((a, b)))
                if apart(&partner, a, b) && groups.is_none_or(|g| g[a].is_none() || g[a] != g[b]) =>
            {
                1.0
            }
            _ => continue,
        };
    }
    at_least_random(smooth(&counts, random), random)
}

/// u of the name levels (with the dismissed labels) and of each field among pairs drawn at
/// random: the fields' is where their estimate starts, and what it is smoothed towards.
fn estimate_u(records: &[Record], fields: &[Field], vectors: &[Vector]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut name_counts = vec![0.0; NAME_LEVELS.len()];
    let mut counts: Vec<Vec<f64>> = fields.iter().map(|f| vec![0.0; f.kind.levels().len()]).collect();
    let n = records.len();
    let mut count = |i: usize, j: usize| {
        let c = compare(&records[i], &records[j], fields);
        name_counts[name_level(c.name_score())] += 1.0;
        for (k, level) in c.levels.iter().enumerate() {
            if let Some(l) = level {
                counts[k][*l] += 1.0;
            }
        }
    };
    if n * n.saturating_sub(1) / 2 <= RANDOM_PAIRS {
        // Few records: every pair once. Drawing with replacement would make u depend on the
        // records' order (their random IDs): the one true match drawn twice out of six draws
        // halves its weight.
        for i in 0..n {
            for j in i + 1..n {
                count(i, j);
            }
        }
    } else {
        // Drawn over the records in the order of their names and values, not of their IDs:
        // the same names under other IDs (seeded again) give the same estimate.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            let (a, b) = (&records[i], &records[j]);
            (&a.candidate.normalized, &a.attributes, &a.candidate.entity_id).cmp(&(
                &b.candidate.normalized,
                &b.attributes,
                &b.candidate.entity_id,
            ))
        });
        let mut rng = SplitMix(0x5eed);
        for _ in 0..RANDOM_PAIRS {
            let i = rng.below(n);
            let j = (i + 1 + rng.below(n - 1)) % n;
            count(order[i], order[j]);
        }
    }
    for vector in vectors.iter().filter(|v| v.label == Some(false)) {
        name_counts[vector.compared_name] += LABEL_WEIGHT;
    }
    // A level no random pair reached is rare, not impossible: at least half a pair in the
    // sample (an equal first name drawn 0 times in 20,000 pairs weighed 19 bits, which two
    // different people called "sarah" in one postcode then reached), or the default if lower.
    let drawn = (n * n.saturating_sub(1) / 2).clamp(1, RANDOM_PAIRS) as f64;
    let floored = |counts: &[f64], defaults: &[f64]| -> Vec<f64> {
        let u = smooth(counts, defaults);
        u.iter().zip(defaults).map(|(u, d)| u.max(d.min(0.5 / drawn))).collect()
    };
    let name_u = floored(&name_counts, &NAME_U);
    let field_u = fields.iter().zip(&counts).map(|(f, c)| floored(c, &default_u(&f.kind))).collect();
    (name_u, field_u)
}

/// Non-matches agree on a level at least as often as strangers drawn at random do: the
/// candidate pairs counted for u were chosen by their names, and a field blocked on is left
/// out of them, so alone they would say that two people in one city never share it.
/// The lowest level (disagreement) takes what is left.
fn at_least_random(mut u: Vec<f64>, random: &[f64]) -> Vec<f64> {
    for (u, r) in u.iter_mut().zip(random).skip(1) {
        *u = u.max(*r);
    }
    let rest: f64 = u[1..].iter().sum();
    u[0] = (1.0 - rest).max(1e-6);
    u
}

/// A closer level is never weaker evidence: the Bayes factor m/u rises with the level.
/// EM alone does not promise it: on a names-only run the "weak" name level came out at m
/// 0.986 / u 0.0017, above "equal", so any two people sharing a given name scored 0.969.
/// Pool-adjacent-violators over the levels, lowest first: a run of levels whose ratios fall
/// is pooled into one block with the ratio of its summed m over its summed u. Returns the
/// blocks as (first level, last level, ratio).
fn monotone_blocks(m: &[f64], u: &[f64]) -> Vec<(usize, usize, f64)> {
    let mut blocks: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(m.len());
    for (level, (&m, &u)) in m.iter().zip(u).enumerate() {
        blocks.push((level, level, m, u));
        while let [.., (first, _, m1, u1), (_, last, m2, u2)] = blocks[..] {
            if m1 / u1 <= m2 / u2 {
                break;
            }
            blocks.truncate(blocks.len() - 2);
            blocks.push((first, last, m1 + m2, u1 + u2));
        }
    }
    blocks.into_iter().map(|(first, last, m, u)| (first, last, m / u)).collect()
}

/// m made monotone against a fixed u (the name, whose u is estimated before EM): within a
/// pooled block each level's m is its u times the block's ratio, so m still sums to one.
pub fn monotone_m(m: &[f64], u: &[f64]) -> Vec<f64> {
    let mut out = m.to_vec();
    for (first, last, ratio) in monotone_blocks(m, u).into_iter().filter(|(f, l, _)| f < l) {
        for level in first..=last {
            out[level] = u[level] * ratio;
        }
    }
    out
}

/// u made monotone against a fixed m (an attribute, whose m is shared by every name level's
/// u): within a pooled block each level's u is its m over the block's ratio (u still sums
/// to one).
pub fn monotone_u(m: &[f64], u: &[f64]) -> Vec<f64> {
    let mut out = u.to_vec();
    for (first, last, ratio) in monotone_blocks(m, u).into_iter().filter(|(f, l, _)| f < l) {
        for level in first..=last {
            out[level] = m[level] / ratio;
        }
    }
    out
}

/// Shares from counts, pulled towards the defaults by [`PSEUDO_COUNTS`]; never zero.
fn smooth(counts: &[f64], defaults: &[f64]) -> Vec<f64> {
    let total: f64 = counts.iter().sum();
    counts
        .iter()
        .zip(defaults)
        .map(|(c, d)| ((c + PSEUDO_COUNTS * d) / (total + PSEUDO_COUNTS)).max(1e-6))
        .collect()
}

/// A small deterministic generator (SplitMix64).
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

#[cfg(test)]
mod tests;
