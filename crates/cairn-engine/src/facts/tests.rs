use super::*;
use std::collections::HashSet;
use std::sync::Arc;

fn said(speaker: &str, text: &str) -> Message {
    Message {
        id: "0".into(),
        role: None,
        speaker: Some(speaker.into()),
        text: text.into(),
        occurred_at: None,
        metadata: serde_json::Value::Null,
    }
}

fn one(text: &str) -> Vec<(String, String, bool)> {
    extract(&said("Ann", text), &[])
        .into_iter()
        .map(|f| (f.subject, f.value, f.revision))
        .collect()
}

#[test]
fn reads_stated_and_revised_values() {
    assert_eq!(
        one("The budget for Project Atlas is $120,000 for the quarter."),
        [(
            "budget for Project Atlas".into(),
            "$120,000 for the quarter".into(),
            false
        )]
    );
    assert_eq!(
        one("Update: the Atlas budget has been cut to $95,000 because of the freeze."),
        [("Atlas budget".into(), "$95,000".into(), true)]
    );
    assert_eq!(
        one("Let's move the launch date to May 14."),
        [("launch date".into(), "May 14".into(), true)]
    );
    assert_eq!(
        one("Final decision: the venue is now Harbor Hall."),
        [("venue".into(), "Harbor Hall".into(), true)]
    );
    assert_eq!(
        one("Oh, before I forget: my locker code is 4417, keep it for me."),
        [("locker code".into(), "4417".into(), false)],
        "a lead-in before a colon is not the subject"
    );
    assert_eq!(
        one("Budget: $40,000."),
        [("Budget".into(), "$40,000".into(), false)]
    );
    assert!(
        one("The demo is great.").is_empty(),
        "opinions are not facts"
    );
    assert!(
        one("It is 5pm already").is_empty(),
        "pointers are not subjects"
    );
}

#[test]
fn reads_owners() {
    assert_eq!(
        one("Dana will own the vendor review."),
        [("owner of vendor review".into(), "Dana".into(), false)]
    );
    assert_eq!(
        one("The vendor review is reassigned to Omar."),
        [("owner of vendor review".into(), "Omar".into(), true)]
    );
    assert_eq!(
        one("I'll own the vendor review then!")[0].0,
        "owner of vendor review"
    );
    assert_eq!(
        one("The vendor review is therefore reassigned to Priya.")[0].1,
        "Priya"
    );
    let mine = extract(&said("Lee", "I'll take the onboarding deck."), &[]);
    assert_eq!(mine[0].subject, "owner of onboarding deck");
    assert_eq!(mine[0].value, "Lee");
}

#[test]
fn bare_instead_revises_the_latest_fact_of_its_shape() {
    let earlier = extract(&said("Ann", "The launch date is June 2."), &[]);
    let mut all = earlier.clone();
    all.extend(extract(&said("Bo", "Budget is $50k."), &all));
    let f = extract(&said("Cy", "Let's go with $60k instead."), &all);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].subject, "Budget");
    assert_eq!(f[0].value, "$60k");
    assert!(f[0].revision);
}

/// The subjects compared in listing every chain of a space (what
/// `Knowledge::fact_subjects` does) where `n` people each state their role and the
/// budget of a project of their own, and every tenth restates it.
fn subjects_compared(n: usize) -> u64 {
    use crate::work::{counting::steps_of, steps::SUBJECTS_COMPARED};
    let fact = |i: usize, id: String, d: FactDetail| Unit {
        id,
        space: cairn_core::SpaceId::new("t").unwrap(),
        kind: UnitKind::Fact,
        text: d.value.clone(),
        key: d.value.clone(),
        embed_text: None,
        provenance: cairn_core::Provenance {
            session_id: Some(format!("s{i}")),
            message_ids: vec!["0".into()],
            ..Default::default()
        },
        part_of: None,
        occurred_at: None,
        recorded_at: chrono::Utc::now(),
        detail: Some(UnitDetail::Fact(d)),
    };
    let mut facts = Vec::new();
    for i in 0..n {
        let person = format!("person{i}");
        let role = FactDetail {
            subject: format!("{person}'s role"),
            subject_key: vec!["role".into()],
            value: "analyst".into(),
            person: Some(person.clone()),
            category: Some(FactCategory::Role),
            ..Default::default()
        };
        let budget = FactDetail {
            subject: format!("budget for project{i}"),
            subject_key: vec!["budget".into(), format!("project{i}")],
            value: format!("${i}k"),
            ..Default::default()
        };
        let times = if i % 10 == 0 { 2 } else { 1 };
        for t in 0..times {
            facts.push(fact(i, format!("fact:{i}:role:{t}"), role.clone()));
            facts.push(fact(i, format!("fact:{i}:budget:{t}"), budget.clone()));
        }
    }
    let index = FactIndex::new(Arc::new(facts.clone()));
    let (chains, compared) = steps_of(SUBJECTS_COMPARED, || {
        let mut listed: HashSet<&str> = HashSet::new();
        let mut chains: Vec<usize> = Vec::new();
        for f in &facts {
            if listed.insert(f.id.as_str()) {
                let chain = index.chain_of(f, |_| true);
                listed.extend(chain.iter().map(|c| c.id.as_str()));
                chains.push(chain.len());
            }
        }
        chains
    });
    // One chain per person and per project; restated ones hold two versions.
    assert_eq!(chains.len(), 2 * n);
    assert_eq!(
        chains.iter().filter(|&&c| c == 2).count(),
        2 * n.div_ceil(10)
    );
    compared
}

/// The index finds every subject that comparing with each subject finds.
#[test]
fn subject_candidates_hold_every_match() {
    let things = [
        "budget",
        "the final budget for Project Atlas",
        "Atlas budget",
        "Beacon budget",
        "budget for Beacon",
        "my brother's locker combination",
        "locker combination",
        "my brother",
        "launch date",
        "date",
        "",
        "owner of vendor review",
        "vendor review",
    ];
    let mut subjects: Vec<(Subject, Vec<usize>)> = things
        .iter()
        .map(|t| (Subject::asked(t), Vec::new()))
        .collect();
    let personal = [
        ("ann", FactCategory::Possession, "honda civic"),
        ("ann", FactCategory::Possession, "civic"),
        ("ann", FactCategory::Role, "role"),
        ("ann", FactCategory::Role, "job role"),
        ("bo", FactCategory::Possession, "civic"),
        ("bo", FactCategory::Pet, ""),
    ];
    for (who, category, key) in personal {
        let key: Vec<String> = key.split_whitespace().map(String::from).collect();
        let person = Some((who.to_string(), category));
        let own = key.clone();
        subjects.push((Subject { key, own, person }, Vec::new()));
    }
    let all = subjects.clone();
    let index = SubjectIndex::new(subjects);
    for (s, _) in &all {
        let matching = |list: Vec<&(Subject, Vec<usize>)>| -> Vec<Subject> {
            list.into_iter()
                .filter(|(o, _)| subject_match(s, o) != SubjectMatch::No)
                .map(|(o, _)| o.clone())
                .collect()
        };
        let want = matching(all.iter().collect());
        let mut got = matching(index.candidates(s).collect());
        got.sort_by_key(|o| all.iter().position(|(a, _)| a == o));
        assert_eq!(got, want, "{s:?}");
    }
}

/// Issue 38: listing a space's subjects compared each subject's chain with every
/// other subject, quadratic in the subjects (3x CPU per doubling of the speakers in
/// `cairn reliability scaling`). This counts the comparisons instead of timing them.
#[test]
fn listing_chains_compares_subjects_linearly() {
    let (at_1, at_2) = (subjects_compared(500), subjects_compared(1000));
    assert!(at_1 > 0);
    let growth = at_2 as f64 / at_1 as f64;
    assert!(growth <= 2.2, "subjects compared: {at_1} -> {at_2}");
    assert!(at_2 <= 4 * 2000, "{at_2} comparisons for 2000 subjects");
}

#[test]
fn keys_match_across_phrasings() {
    let s = Subject::asked;
    let a = s("the final budget for Project Atlas");
    let b = s("Atlas budget");
    assert_eq!(a.key, ["atla", "budget", "project"]);
    assert_eq!(a.own, ["budget"]);
    assert_eq!(subject_match(&a, &b), SubjectMatch::Same);
    assert_eq!(subject_match(&b, &s("Beacon budget")), SubjectMatch::No);
    assert_eq!(subject_match(&s("budget"), &b), SubjectMatch::SameInGroup);
    assert_eq!(subject_match(&s("budget"), &a), SubjectMatch::SameInGroup);
}

#[test]
fn an_owner_is_not_the_thing_owned() {
    let s = Subject::asked;
    let locker = s("my brother's locker combination");
    assert_eq!(locker.own, ["combination", "locker"]);
    assert_eq!(subject_match(&s("my brother"), &locker), SubjectMatch::No);
    assert_eq!(
        subject_match(&s("locker combination"), &locker),
        SubjectMatch::Same
    );
    let owner = s("owner of onboarding deck");
    assert_eq!(
        subject_match(&s("the onboarding deck"), &owner),
        SubjectMatch::No
    );
    assert_eq!(subject_match(&s("deck owner"), &owner), SubjectMatch::Same);
    let all_owner = s("Atlas's");
    assert_eq!(all_owner.own, all_owner.key);
}
