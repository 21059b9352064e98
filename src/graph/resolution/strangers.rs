//! Which candidate pairs count as strangers (surely not matches) when u is estimated from
//! them ([`super::em`]): records linked by their likeliest partners, and for a name with no
//! compared attribute, groups of like names. A thing written several ways has more pairs
//! than duplicates, and each pair of its records counted among strangers made like names
//! (and agreeing attributes) look common among strangers.

use super::model::{Vector, NAME_LEVELS};

/// Records linked by a chain of likeliest partners, as one group number per record. A person
/// with several records (Febrl3: up to nine) has pairs that are neither record's best: counted
/// among non-matches, their agreeing birth dates and IDs made such agreement look common
/// among strangers with like names (u of an equal ID 0.70 at the "equal" name level, 0.3
/// bits), and two records of one person with one typo in the name, the same birth date, ID
/// and address stayed apart (Febrl3 all fields: clustered F1 0.987 -> 0.999 offline).
pub(super) fn linked(partner: &[Option<usize>]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..partner.len()).collect();
    for (a, p) in partner.iter().enumerate() {
        if let Some(b) = *p {
            join(&mut parent, a, b);
        }
    }
    (0..partner.len()).map(|i| root(&mut parent, i)).collect()
}

/// A union-find root, the path halved on the way.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Joins the union-find sets of `a` and `b` under the smaller root (so the groups do not
/// depend on the order of the joins).
fn join(parent: &mut [usize], a: usize, b: usize) {
    let (x, y) = (root(parent, a), root(parent, b));
    parent[x.max(y)] = x.min(y);
}

/// Each record's likeliest partner: the other end of its best pair.
pub(super) fn partners(best: &[Option<(f64, usize)>], vectors: &[Vector]) -> Vec<Option<usize>> {
    best.iter()
        .enumerate()
        .map(|(end, best)| {
            let (a, b) = vectors[best.as_ref()?.1].pair?;
            Some(if a == end { b } else { a })
        })
        .collect()
}

/// Whether a candidate pair is surely not a match by its names: neither record is the
/// other's likeliest partner, nor do both have the same one. A person may have several
/// duplicates (Febrl3: up to nine records of one person); counted as non-matches, the second
/// and third made like names look common among strangers (u of "equal" 0.0012 against
/// 0.00005 on Febrl4, names-only F1 0.55) and weak. Attributes leave out more (see
/// [`super::em`]'s `conditional_u`: records linked by any chain of likeliest partners).
pub(super) fn apart(partner: &[Option<usize>], a: usize, b: usize) -> bool {
    let step = |x: usize| partner[x];
    step(a) != Some(b) && step(b) != Some(a) && (step(a).is_none() || step(a) != step(b))
}

/// Groups of like names no larger than this count as one thing's records.
const ALIKE_GROUP_MAX: usize = 20;

/// For a name with no compared attribute: records joined by chains of candidate pairs whose
/// names are at least "weak" alike, as a group number per record (`None` in a group of more
/// than [`ALIKE_GROUP_MAX`]: chains of strangers). A company written eight ways (with
/// addresses, legal forms, departments) has 28 pairs and each record one likeliest partner:
/// the other pairs, counted as strangers with like names, made like names look common among
/// strangers (u of "weak" 0.018, of "similar" 0.007 on registry-dev) and the prior sat at
/// half a pair per record, so pairs at 0.13–0.95 were 80–100 % matches and few merged
/// (registry-dev auto F1 0.141). Counting the pairs inside a group as possible matches, and
/// the group's pairs as a bound on the prior: registry-dev 0.141 -> 0.690, companies-dev
/// 0.309 -> 0.546, Febrl1–4 names within ±0.003, DBLP-ACM names 0.967 -> 0.963, books-dev
/// names 0.765 -> 0.761 (`RESOLUTION_QUICK=1`; groups of 10 at most: registry-dev 0.250;
/// "similar" links instead of "weak": Febrl1 names 0.729). With attributes beside the name,
/// like titles of one series joined into groups (books-dev all fields 0.696 -> 0.651): the
/// attributes tell those apart, and there the groups are not used.
///
/// `levelled`, for names that carry addresses ([`super::names::carry_addresses`]): there a shared
/// city or country makes strangers' names "weak" alike, so weak chains run past a thing's
/// records; the records of such a chain are grouped at the first closer level at which it
/// falls apart (registry-dev names 0.580 -> 0.856 with [`super::names::head`]; for every type it
/// cost Febrl1 names 0.834 -> 0.732 and books-dev names 0.761 -> 0.564, where like names of
/// strangers are the chain, and it is not used there).
pub(super) fn alike_groups(records: usize, vectors: &[Vector], levelled: bool) -> Vec<Option<usize>> {
    let mut groups: Vec<Option<usize>> = vec![None; records];
    let closest = if levelled { NAME_LEVELS.len() - 1 } else { 1 };
    for level in 1..=closest {
        let mut parent: Vec<usize> = (0..records).collect();
        for vector in vectors {
            if let (Some((a, b)), true) = (vector.pair, vector.compared_name >= level) {
                join(&mut parent, a, b);
            }
        }
        let roots: Vec<usize> = (0..records).map(|i| root(&mut parent, i)).collect();
        let mut sizes = vec![0usize; records];
        for &r in &roots {
            sizes[r] += 1;
        }
        let mut open = false;
        for (group, &r) in groups.iter_mut().zip(&roots) {
            if group.is_none() {
                if sizes[r] <= ALIKE_GROUP_MAX {
                    *group = Some(r);
                } else {
                    open = true;
                }
            }
        }
        if !open {
            break;
        }
    }
    groups
}

/// Pairs of records inside the same group.
pub(super) fn pairs_within(groups: &[Option<usize>]) -> f64 {
    let mut sizes = vec![0usize; groups.len()];
    for &g in groups.iter().flatten() {
        sizes[g] += 1;
    }
    sizes.iter().map(|&n| (n * n.saturating_sub(1) / 2) as f64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::resolution::model::tests::name_pair as pair;

    #[test]
    fn a_chain_of_like_names_longer_than_a_things_records_is_no_group() {
        let vectors: Vec<Vector> = (0..30).map(|i| pair(i, i + 1, 1, 0.75)).collect();
        assert!(alike_groups(31, &vectors, false).iter().all(Option::is_none));
    }

    #[test]
    fn where_names_carry_addresses_a_long_weak_chain_is_grouped_at_a_closer_level() {
        // Thirty records chained at "weak" (a shared city); in the chain six companies of
        // five records each, "similar" to one another.
        let mut vectors: Vec<Vector> = (0..29).map(|i| pair(i, i + 1, 1, 0.75)).collect();
        for company in 0..6 {
            for a in 0..5 {
                for b in a + 1..5 {
                    vectors.push(pair(company * 5 + a, company * 5 + b, 2, 0.85));
                }
            }
        }
        assert!(alike_groups(30, &vectors, false).iter().all(Option::is_none));
        let groups = alike_groups(30, &vectors, true);
        for company in groups.chunks(5) {
            assert!(company.iter().all(|g| g.is_some() && *g == company[0]), "{groups:?}");
        }
        assert_ne!(groups[0], groups[5]);
        assert_eq!(pairs_within(&groups), 60.0);
    }
}
