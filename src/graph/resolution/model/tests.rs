use super::*;
use crate::graph::duplicates::Candidate;
use crate::graph::resolution::names::core_name;

pub(crate) fn record(id: &str, name: &str, attributes: &[(&str, &str)]) -> Record {
    let normalized = crate::graph::normalize::normalize(name);
    Record {
        candidate: Candidate {
            entity_id: id.into(),
            bucket_id: "b".into(),
            type_name: "Company".into(),
            normalized: normalized.clone(),
            forms: vec![normalized],
        },
        core: core_name(name),
        attributes: attributes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

/// An unlabelled pair compared on its name alone.
pub(crate) fn name_pair(a: usize, b: usize, level: usize, score: f64) -> Vector {
    Vector {
        name: Some(level),
        compared_name: level,
        name_score: score,
        levels: Vec::new(),
        pair: Some((a, b)),
        label: None,
    }
}

fn fields() -> Vec<Field> {
    vec![
        Field { key: "city".into(), kind: Kind::Exact },
        Field { key: "phone".into(), kind: Kind::Identifier },
    ]
}

#[test]
fn a_title_sharing_one_rare_word_of_many_scores_lower_than_a_name_that_is_the_rare_word() {
    let mut records = vec![
        record("t1", "Qzvrkl: distributed query optimisation for sensor networks", &[]),
        record("t2", "Qzvrkl: adaptive caching in peer to peer systems", &[]),
        record("s1", "Wxnpty", &[]),
        record("s2", "Wxnpty 54 rue la Boetie 75008 France", &[]),
    ];
    records.extend((0..60).map(|i| record(&format!("f{i}"), &format!("filler{i}"), &[])));
    let counts = rarity::WordCounts::of(&records);
    let (title, short) =
        (counts.rarest_shared(&records[0], &records[1]), counts.rarest_shared(&records[2], &records[3]));
    assert_eq!(title.as_ref().unwrap().share, short.as_ref().unwrap().share, "equally rare");
    // Both pairs' names alike to the same degree, the type's usual shared word 1 bit.
    let model = Model {
        names_learnt: true,
        name_rarity: vec![Some(1.0); NAME_LEVELS.len()],
        ..Model::with_defaults(&[])
    };
    let alike = |score: f64, shared_word: Option<SharedWord>| Comparison {
        signals: Signals { name_similarity: score, shared_surface_forms: score, embedding_similarity: None },
        same_core: false,
        same_words: false,
        same_content: false,
        levels: vec![],
        shared_word,
        shared_values: vec![],
        head_score: None,
    };
    let bits = |e: &Explanation| e.fields[0].term_frequency.as_ref().unwrap().bits;
    let (weak_title, weak_short) = (alike(0.75, title.clone()), alike(0.75, short.clone()));
    assert_eq!(NAME_LEVELS[weak_title.name_level()].0, "weak");
    let (t, s) = (model.score(&weak_title), model.score(&weak_short));
    assert!(t.probability < s.probability, "{t:?} {s:?}");
    assert_eq!(bits(&s), rarity::MAX_BITS, "the whole of the shorter name: every bit");
    assert!(bits(&t) > 0.0 && bits(&t) <= rarity::MAX_BITS / 4.0, "one word of five or six: {t:?}");
    assert_eq!(model.probability(&weak_title), t.probability);
    // From "very similar" up the names say enough: the word weighs the same in both.
    let (close_title, close_short) = (alike(0.92, title), alike(0.92, short));
    assert_eq!(bits(&model.score(&close_title)), bits(&model.score(&close_short)));
}

#[test]
fn the_bare_probability_is_the_explanations_to_the_bit() {
    let model = Model { prior: 0.02, ..Model::with_defaults(&fields()) };
    let pairs = [
        (record("1", "Globex", &[("city", "paris")]), record("2", "Globex Corp", &[("city", "paris")])),
        (record("3", "Initech", &[("phone", "1")]), record("4", "Initrode", &[("phone", "2")])),
        (record("5", "Zarela", &[]), record("6", "Zarzuela", &[])),
    ];
    for (a, b) in &pairs {
        let comparison = compare(a, b, &fields());
        assert_eq!(model.probability(&comparison), model.score(&comparison).probability);
        let names_only = Model::with_defaults(&[]);
        let bare = compare(a, b, &[]);
        assert_eq!(names_only.probability(&bare), names_only.score(&bare).probability);
    }
}

#[test]
fn every_pair_scores_the_same_both_ways() {
    let fixture = [
        record("1", "cha cha cha", &[("city", "paris")]),
        record("2", "cha cha chas", &[("city", "Paris")]),
        record("3", "Sanofi 54 rue la Boetie 75008 France", &[("phone", "0153774000")]),
        record("4", "sanofi 54 rue la boetie 75008 paris france", &[("phone", "01 53 77 40 00")]),
        record("5", "Zarela", &[]),
        record("6", "Zarzuela", &[("city", "new york")]),
        record("7", "The Palm Restaurant", &[("city", "new york")]),
        record("8", "Palm (Los Angeles)", &[("city", "los angeles")]),
        record("9", "jonathan smith", &[]),
        record("10", "smith jonathon", &[("phone", "555")]),
    ];
    let model = Model::with_defaults(&fields());
    for a in &fixture {
        for b in &fixture {
            let (ab, ba) = (compare(a, b, &fields()), compare(b, a, &fields()));
            assert_eq!(ab, ba, "{} / {}", a.candidate.normalized, b.candidate.normalized);
            assert_eq!(model.score(&ab), model.score(&ba));
        }
    }
}

#[test]
fn agreeing_attributes_raise_a_score_and_disagreeing_ones_lower_it() {
    let model = Model::with_defaults(&fields());
    let name_only = model.score(&compare(
        &record("1", "Initech Software", &[]),
        &record("2", "Initech Software Group", &[]),
        &fields(),
    ));
    let agree = model.score(&compare(
        &record("1", "Initech Software", &[("phone", "555-0100")]),
        &record("2", "Initech Software Group", &[("phone", "5550100")]),
        &fields(),
    ));
    let disagree = model.score(&compare(
        &record("1", "Initech Software", &[("city", "austin")]),
        &record("2", "Initech Software Group", &[("city", "berlin")]),
        &fields(),
    ));
    assert!(agree.probability > name_only.probability, "{agree:?} {name_only:?}");
    assert!(disagree.probability < name_only.probability, "{disagree:?}");
    assert_eq!(agree.fields.len(), 2);
    assert_eq!(agree.fields[1].level, "equal");
    assert!(agree.fields[1].weight > 0.0 && disagree.fields[1].weight < 0.0);
}

#[test]
fn a_seeded_name_joins_its_entity_unless_the_attributes_speak_against_it() {
    let values = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let paris = values(&[("city", "paris"), ("phone", "555-0100")]);
    assert!(seed_joins(&fields(), &paris, &values(&[("city", "Paris"), ("phone", "5550100")])));
    assert!(seed_joins(&fields(), &paris, &values(&[])), "nothing compared is no evidence");
    assert!(seed_joins(&fields(), &paris, &values(&[("city", "berlin")])), "one exact field is not enough");
    let berlin = values(&[("city", "berlin"), ("phone", "555-9999")]);
    assert!(!seed_joins(&fields(), &paris, &berlin));
    assert!(!seed_joins(&fields(), &berlin, &paris), "symmetric");
}

#[test]
fn without_attributes_a_learnt_name_weighs_by_its_levels_m_and_u() {
    let model = Model { names_learnt: true, ..Model::with_defaults(&[]) };
    let comparison =
        compare(&record("1", "Globex Corporation", &[]), &record("2", "Globex Corporaton", &[]), &[]);
    let explained = model.score(&comparison);
    let level = comparison.name_level();
    assert_eq!(explained.fields[0].m, Some(NAME_M[level]));
    assert_eq!(explained.fields[0].weight, round((NAME_M[level] / NAME_U[level]).log2()));
}

#[test]
fn names_with_the_same_words_in_another_order_compare_equal() {
    let swapped = compare(&record("1", "Smith John", &[]), &record("2", "John Smith", &[]), &[]);
    assert!(swapped.same_words, "{swapped:?}");
    assert_eq!(NAME_LEVELS[swapped.name_level()].0, "equal", "{swapped:?}");
    assert_eq!(swapped, compare(&record("2", "John Smith", &[]), &record("1", "Smith John", &[]), &[]));
    let other = compare(&record("1", "John Smith", &[]), &record("2", "John Smithson", &[]), &[]);
    assert!(!other.same_words, "{other:?}");
}

#[test]
fn titles_differing_only_by_function_words_compare_equal() {
    let (a, b) = (record("1", "Hyper-Programming Java", &[]), record("2", "Hyper-Programming in Java", &[]));
    let dropped = compare(&a, &b, &[]);
    assert!(dropped.same_content, "{dropped:?}");
    assert_eq!(NAME_LEVELS[dropped.name_level()].0, "equal", "{dropped:?}");
    assert_eq!(dropped, compare(&b, &a, &[]));
    let time = compare(
        &record("1", "Time management new faculty", &[]),
        &record("2", "Time management for new faculty", &[]),
        &[],
    );
    assert_eq!(NAME_LEVELS[time.name_level()].0, "equal", "{time:?}");
    // One word left is not enough to call two names the same.
    let one = compare(&record("1", "The Java", &[]), &record("2", "Java in a", &[]), &[]);
    assert!(!one.same_content, "{one:?}");
}

#[test]
fn names_differing_only_by_qualifiers_share_a_core() {
    let c = compare(&record("1", "The Palm Restaurant", &[]), &record("2", "Palm (New York)", &[]), &[]);
    assert!(c.same_core && c.name_score() >= SAME_CORE, "{c:?}");
}
