use super::*;
use crate::graph::resolution::comparisons::Kind;
use crate::graph::resolution::model::tests::{name_pair, record};

fn vector(name: usize, phone: usize, label: Option<bool>) -> Vector {
    let name_score = NAME_LEVELS[name].1;
    Vector { name: Some(name), compared_name: name, name_score, levels: vec![Some(phone)], pair: None, label }
}

fn phone() -> Vec<Field> {
    vec![Field { key: "phone".into(), kind: Kind::Identifier }]
}

fn people() -> Vec<Record> {
    const GIVEN: [&str; 20] = [
        "ann", "bob", "carla", "dmitri", "eve", "farid", "gus", "hana", "ivo", "jun", "kwame", "lea",
        "mateo", "nina", "otto", "priya", "quinn", "rosa", "sven", "tariq",
    ];
    const FAMILY: [&str; 10] = [
        "okafor",
        "lindqvist",
        "tanaka",
        "moreau",
        "kowalski",
        "haddad",
        "nguyen",
        "oconnor",
        "rossi",
        "baptiste",
    ];
    (0..200)
        .map(|i| {
            let name = format!("{} {}", GIVEN[i % 20], FAMILY[i / 20]);
            record(&format!("{i:03}"), &name, &[("phone", &format!("{}", 1_000_003 * (i + 7) % 9_999_991))])
        })
        .collect()
}

#[test]
fn u_is_small_for_identifiers_that_rarely_agree_at_random() {
    let model = estimate(&people(), &phone(), &[], false);
    let u = &model.fields[0].u[0];
    assert!(u[2] < 0.001 && u[0] > 0.9, "{u:?}");
    assert_eq!(estimate(&people(), &phone(), &[], false), model, "same data, same estimate");
}

#[test]
fn a_tenant_of_a_few_hundred_names_has_its_name_u_counted_over_every_pair() {
    // 400 records, every name twice: 79,800 pairs, once a sample of a quarter of them.
    let mut records = people();
    records.extend(people().into_iter().map(|mut r| {
        r.candidate.entity_id = format!("x{}", r.candidate.entity_id);
        r
    }));
    let n = records.len();
    let pairs = (n * (n - 1) / 2) as f64;
    let mut counts = [0.0; 5];
    for (i, a) in records.iter().enumerate() {
        for b in &records[i + 1..] {
            counts[name_level(compare(a, b, &[]).name_score())] += 1.0;
        }
    }
    let model = estimate(&records, &[], &[], false);
    for level in 1..NAME_LEVELS.len() {
        let share = ((counts[level] + PSEUDO_COUNTS * NAME_U[level]) / (pairs + PSEUDO_COUNTS))
            .max(NAME_U[level].min(0.5 / pairs));
        assert!((model.name_u[level] - share).abs() < 1e-12, "{level}: {:?} {counts:?}", model.name_u);
    }
}

#[test]
fn a_small_tenants_estimate_does_not_depend_on_the_order_of_its_records() {
    let records: Vec<Record> =
        [("a", "310 246 1501"), ("b", "310-246-1501"), ("c", "212 644 6740"), ("d", "2025550199")]
            .iter()
            .map(|(id, phone)| record(id, &format!("restaurant {id}"), &[("phone", phone)]))
            .collect();
    let first = estimate(&records, &phone(), &[], false);
    for rotation in 1..records.len() {
        let mut reordered = records.clone();
        reordered.rotate_left(rotation);
        reordered.swap(0, 1);
        assert_eq!(estimate(&reordered, &phone(), &[], false), first, "rotation {rotation}");
    }
}

#[test]
fn labels_move_the_weights() {
    let records = people();
    let unlabelled = vec![vector(4, 0, None); 5];
    let before = estimate(&records, &phone(), &unlabelled, false);
    // People said these pairs with different phones are the same: phones disagreeing
    // is weaker evidence against a match afterwards.
    let labelled = vec![vector(4, 0, Some(true)); 5];
    let after = estimate(&records, &phone(), &labelled, false);
    assert!(after.fields[0].m[0] > before.fields[0].m[0], "{before:?} {after:?}");
    // People said these pairs with equal phones differ: equal phones weigh less.
    let dismissed = vec![vector(4, 2, Some(false)); 5];
    let after_dismissal = estimate(&records, &phone(), &dismissed, false);
    assert!(after_dismissal.fields[0].u[4][2] > before.fields[0].u[4][2], "{after_dismissal:?} {before:?}");
    assert!(after_dismissal.name_shift[4] < 0.0 && after.name_shift[4] > 0.0);
    assert_eq!(before.name_shift, vec![0.0; NAME_LEVELS.len()]);
}

#[test]
fn matching_pairs_are_never_estimated_at_more_than_half_the_records() {
    // 20 records and 30 candidate pairs, half of them agreeing on everything: EM alone
    // puts the prior near 0.5 (15 matching pairs), more than 20 records with one
    // duplicate each can hold (10 pairs).
    let records: Vec<Record> = people().into_iter().take(20).collect();
    let mut vectors = vec![vector(4, 2, None); 15];
    vectors.extend(vec![vector(0, 0, None); 15]);
    let model = estimate(&records, &phone(), &vectors, false);
    assert!(model.prior * 30.0 <= 10.0 + 1e-9, "{model:?}");
    assert!(model.prior * 30.0 > 9.0, "EM still goes to the bound: {model:?}");
}

#[test]
fn em_finds_agreement_on_matches() {
    let records = people();
    // 30 pairs: half agree on name and phone, half on neither.
    let mut vectors = vec![vector(4, 2, None); 15];
    vectors.extend(vec![vector(0, 0, None); 15]);
    let model = estimate(&records, &phone(), &vectors, false);
    assert!(model.fields[0].m[2] > 0.8, "{model:?}");
    assert!(model.prior > 0.3 && model.prior < 0.7, "{model:?}");
}

/// log2(m/u) level by level.
fn bits(m: &[f64], u: &[f64]) -> Vec<f64> {
    m.iter().zip(u).map(|(m, u)| (m / u).log2()).collect()
}

fn rising(bits: &[f64]) -> bool {
    bits.windows(2).all(|w| w[0] <= w[1] + 1e-9)
}

#[test]
fn a_closer_name_level_never_weighs_less_than_a_weaker_one() {
    // Many candidate pairs whose names are only weakly alike but whose phones agree (EM
    // takes them for matches, m of "weak" near 1), and people who said that pairs with
    // equal names but different phones are not the same (u of "equal" raised). Left to
    // itself EM weighed "weak" above "equal": any two people sharing a given name
    // outscored two records of one name.
    let mut vectors = vec![vector(1, 2, None); 60];
    vectors.extend(vec![vector(4, 0, Some(false)); 8]);
    let model = estimate(&people(), &phone(), &vectors, false);
    let name = bits(&model.name_m, &model.name_u);
    assert!(rising(&name), "name bits by level {name:?}");
    for row in &model.fields[0].u {
        assert!(rising(&bits(&model.fields[0].m, row)), "{model:?}");
    }
    assert!(rising(&bits(&model.fields[0].m, &model.fields[0].u_any)), "{model:?}");
    // Pooling keeps each side a distribution.
    assert!((model.name_m.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{model:?}");
}

#[test]
fn pooling_keeps_the_ratios_rising_and_the_shares_summing_to_one() {
    let (m, u) = ([0.01, 0.9, 0.05, 0.04], [0.9, 0.01, 0.05, 0.04]);
    let pooled = monotone_m(&m, &u);
    assert!(rising(&bits(&pooled, &u)), "{pooled:?}");
    assert!((pooled.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let pooled = monotone_u(&m, &u);
    assert!(rising(&bits(&m, &pooled)), "{pooled:?}");
    assert!((pooled.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Already rising: unchanged.
    let (m, u) = ([0.1, 0.2, 0.7], [0.8, 0.15, 0.05]);
    assert_eq!(monotone_m(&m, &u), m.to_vec());
    assert_eq!(monotone_u(&m, &u), u.to_vec());
}

/// A candidate pair of records `a` and `b` at name level `name` and phone level `phone`;
/// `name_is_evidence`: false when blocking chose the pair on the name alone.
fn candidate(a: usize, b: usize, name: usize, phone: usize, name_is_evidence: bool) -> Vector {
    Vector {
        name: name_is_evidence.then_some(name),
        compared_name: name,
        name_score: NAME_LEVELS[name].1,
        levels: vec![Some(phone)],
        pair: Some((a, b)),
        label: None,
    }
}

#[test]
fn a_persons_third_and_fourth_records_are_not_counted_among_strangers_for_an_attribute() {
    let pair = |a, b, name, phone| candidate(a, b, name, phone, true);
    // Records 0..4 are one person: every two of them have equal names and phones.
    let mut vectors = Vec::new();
    for a in 0..4 {
        for b in a + 1..4 {
            vectors.push(pair(a, b, 4, 2));
        }
    }
    // Strangers in twos with like names; each two's first record is also a candidate
    // with the next two's, phones differing.
    for i in (10..190).step_by(2) {
        vectors.push(pair(i, i + 1, 2, 0));
        if i + 2 < 190 {
            vectors.push(pair(i, i + 2, 0, 0));
        }
    }
    let model = estimate(&people(), &phone(), &vectors, false);
    // No two strangers with equal names were seen to share a phone: an equal phone at
    // the "equal" name level stays rare among non-matches, as among random pairs. Counted
    // as strangers, the person's pairs that were neither record's best made it 0.25.
    let u = &model.fields[0].u[4];
    assert!(u[2] < 0.05, "{u:?}");
    assert!(model.fields[0].weight(2, 4) > 3.0, "{model:?}");
}

#[test]
fn with_attributes_the_names_u_comes_from_the_candidate_pairs_too() {
    let pair = |a, b, name, phone| candidate(a, b, name, phone, false);
    // Couples with equal names and phones, and equal names across couples with phones
    // differing: among these candidates an equal name is common whether it matches or
    // not (two editions of one title), though rare among random pairs.
    let mut vectors = Vec::new();
    for k in (0..180).step_by(2) {
        vectors.push(pair(k, k + 1, 4, 2));
    }
    for k in (0..178).step_by(2) {
        vectors.push(pair(k, k + 2, 4, 0));
    }
    let model = estimate(&people(), &phone(), &vectors, false);
    assert!(model.name_u[4] > 0.1, "{:?}", model.name_u);
    let equal = (model.name_m[4] / model.name_u[4]).log2();
    assert!(equal < 4.0, "an equal name alone is no longer 10 bits: {equal} {model:?}");
}

#[test]
fn a_persons_second_duplicate_is_not_counted_among_strangers() {
    // Records 0, 1 and 2 are one person written three ways (their names "equal"), and
    // 3..40 strangers whose candidate pairs differ. 1 and 2 are each other's second
    // choice, never best: they were counted as strangers with equal names, and equal
    // names looked common among strangers.
    let pair = name_pair;
    let strangers: Vec<Vector> = (3..40).map(|i| pair(i, i + 1, 0, 0.3)).collect();
    let mut one_person = vec![pair(0, 1, 4, 0.99), pair(0, 2, 4, 0.98)];
    one_person.extend(strangers.iter().cloned());
    // Two more people, each written twice.
    one_person.extend([pair(41, 42, 4, 0.99), pair(43, 44, 4, 0.99)]);
    let without_third = candidate_name_u(&NAME_U, 45, &one_person, None);
    one_person.push(pair(1, 2, 4, 0.97));
    assert_eq!(candidate_name_u(&NAME_U, 45, &one_person, None), without_third);
    // Like names of two people who each have a likelier duplicate still count.
    one_person.push(pair(41, 43, 4, 0.97));
    assert!(candidate_name_u(&NAME_U, 45, &one_person, None)[4] > without_third[4]);
}

#[test]
fn a_company_written_many_ways_is_not_counted_among_strangers_when_names_are_all_there_is() {
    // Records 0..8 are one company written eight ways, every pair "similar"; 8..60 are
    // strangers whose candidate pairs differ. Each of the eight has one likeliest
    // partner: without the groups, the other pairs count as strangers with like names.
    let pair = name_pair;
    let mut vectors: Vec<Vector> = (8..59).map(|i| pair(i, i + 1, 0, 0.3)).collect();
    for a in 0..8 {
        for b in a + 1..8 {
            // Each record's likeliest partner is its twin: 0-1, 2-3, 4-5, 6-7.
            vectors.push(pair(a, b, 2, if a / 2 == b / 2 { 0.85 } else { 0.8 }));
        }
    }
    let groups = alike_groups(60, &vectors, false);
    assert!(groups[..8].iter().all(|g| g.is_some() && *g == groups[0]), "{groups:?}");
    assert!(groups[8..].iter().all(|g| *g != groups[0]));
    assert_eq!(pairs_within(&groups), 28.0);
    let like = candidate_name_u(&NAME_U, 60, &vectors, None)[2];
    let grouped = candidate_name_u(&NAME_U, 60, &vectors, Some(&groups))[2];
    assert!(grouped < like / 2.0, "u of \"similar\": {grouped} against {like}");
}
