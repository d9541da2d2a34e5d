//! A scoped lexical search scores as a space holding only its scope's units would score
//! it, whatever else the space and the other spaces hold (issue 43): BM25 weighs words by
//! the statistics of what the search may reach (`text_reach.rs`).
use cairn_core::{SpaceId, TextIndex, TextQuery, Unit, UnitKind};
use cairn_store::EmbeddedStore;
use cairn_testkit::words::Words;

const WORDS: &[&str] = &[
    "salary",
    "cat",
    "luna",
    "tea",
    "oolong",
    "accountant",
    "money",
    "hike",
    "garden",
    "piano",
    "lisbon",
    "train",
    "doctor",
    "recipe",
    "camera",
    "marathon",
];

fn rng(seed: u64) -> Words {
    Words::new(seed, WORDS)
}

fn unit(space: &SpaceId, session: usize, i: usize, text: &str, kind: UnitKind) -> Unit {
    let mut u = cairn_testkit::fixtures::unit(
        space,
        &format!("u:s{session}:{i}"),
        &format!("s{session}"),
        text,
        text,
    );
    u.kind = kind;
    u
}

fn search(
    store: &EmbeddedStore,
    space: &SpaceId,
    text: &str,
    kinds: Option<&[UnitKind]>,
    sessions: Option<&[String]>,
) -> Vec<(String, f32)> {
    store
        .text
        .search(&TextQuery {
            space,
            text,
            kinds,
            sessions,
            text_weight: 0.35,
            limit: 50,
        })
        .unwrap()
}

#[test]
fn a_scoped_search_scores_as_a_space_of_its_scope_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    let shared = SpaceId::new("shared").unwrap();
    let alone = SpaceId::new("alone").unwrap();
    let other = SpaceId::new("other").unwrap();
    let mut rng = rng(0x9e37_79b9_7f4a_7c15);
    let scope: Vec<String> = vec!["s0".into(), "s3".into()];
    for session in 0..8 {
        for i in 0..3 + rng.below(8) {
            let n = 2 + rng.below(10);
            let text = rng.words(n);
            let kind = if i % 3 == 0 {
                UnitKind::Round
            } else {
                UnitKind::Turn
            };
            let u = unit(&shared, session, i, &text, kind);
            store.text.upsert(std::slice::from_ref(&u)).unwrap();
            if scope.contains(&format!("s{session}")) {
                store
                    .text
                    .upsert(&[unit(&alone, session, i, &text, kind)])
                    .unwrap();
            }
        }
    }
    // Another space heavy in the rarest words: it must move no score of the two above.
    for i in 0..40 {
        let text = format!("{} {}", WORDS[WORDS.len() - 1 - i % 4], rng.words(3));
        store
            .text
            .upsert(&[unit(&other, 0, i, &text, UnitKind::Turn)])
            .unwrap();
    }
    store.text.commit(1).unwrap();
    let mut compared = 0;
    for q in 0..60 {
        let query = rng.words(1 + q % 3);
        let kinds: Option<&[UnitKind]> = match q % 3 {
            0 => None,
            1 => Some(&[UnitKind::Turn]),
            _ => Some(&[UnitKind::Round, UnitKind::Turn]),
        };
        let scoped = search(&store, &shared, &query, kinds, Some(&scope));
        let only = search(&store, &alone, &query, kinds, None);
        assert_eq!(
            scoped.iter().map(|h| &h.0).collect::<Vec<_>>(),
            only.iter().map(|h| &h.0).collect::<Vec<_>>(),
            "query {query:?}, kinds {kinds:?}: the same units in the same order"
        );
        for (a, b) in scoped.iter().zip(&only) {
            assert!(
                (a.1 - b.1).abs() <= 1e-5 * b.1.abs().max(1.0),
                "query {query:?}, {}: scored {} in the shared space's scope, {} alone",
                a.0,
                a.1,
                b.1
            );
        }
        compared += scoped.len();
    }
    assert!(compared > 100, "the queries found too little: {compared}");
}
