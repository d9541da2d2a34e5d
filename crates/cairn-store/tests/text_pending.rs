//! What the text index holds between commits is searched as it will be once committed
//! (issue 52, `text_pending.rs`): after any mix of added, replaced and removed units and
//! a dropped space, a search before the commit finds the same units with the same scores
//! as the same search after it, scoped or not. So a recall right after a write need not
//! pay for a commit.
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
];

fn rng(seed: u64) -> Words {
    Words::new(seed, WORDS)
}

fn unit(space: &SpaceId, session: usize, i: usize, text: &str) -> Unit {
    let mut u = cairn_testkit::fixtures::unit(
        space,
        &format!("u:s{session}:{i}"),
        &format!("s{session}"),
        &text[..text.find(' ').unwrap_or(text.len())],
        text,
    );
    u.kind = if i.is_multiple_of(3) {
        UnitKind::Round
    } else {
        UnitKind::Turn
    };
    u
}

/// Every query's hits (all of them: the limit is above what any space holds), sorted by
/// score then id, so ties compare equal whatever order they came in.
fn searches(store: &EmbeddedStore, spaces: &[SpaceId], rng: &mut Words) -> Vec<Vec<(String, f32)>> {
    let mut out = Vec::new();
    for q in 0..40 {
        let query = rng.words(1 + q % 3);
        let kinds: Option<&[UnitKind]> = match q % 3 {
            0 => None,
            1 => Some(&[UnitKind::Turn]),
            _ => Some(&[UnitKind::Round, UnitKind::Turn]),
        };
        let sessions: Vec<String> = vec!["s1".into(), "s4".into()];
        for space in spaces {
            let mut hits = store
                .text
                .search(&TextQuery {
                    space,
                    text: &query,
                    kinds,
                    sessions: (q % 2 == 1).then_some(sessions.as_slice()),
                    text_weight: 0.35,
                    limit: 1_000,
                })
                .unwrap();
            hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            out.push(hits);
        }
    }
    out
}

fn agree(before: &[Vec<(String, f32)>], after: &[Vec<(String, f32)>], round: usize) {
    assert_eq!(before.len(), after.len());
    for (q, (b, a)) in before.iter().zip(after).enumerate() {
        let ids = |h: &[(String, f32)]| {
            let mut v: Vec<String> = h.iter().map(|x| x.0.clone()).collect();
            v.sort();
            v
        };
        assert_eq!(ids(b), ids(a), "round {round}, search {q}: the same units");
        let score = |h: &[(String, f32)], id: &str| {
            h.iter()
                .find(|x| x.0 == id)
                .map(|x| x.1)
                .unwrap_or(f32::NAN)
        };
        for (id, s) in b {
            let c = score(a, id);
            assert!(
                (s - c).abs() <= 1e-4 * c.abs().max(1.0),
                "round {round}, search {q}, {id}: {s} before the commit, {c} after"
            );
        }
    }
}

#[test]
fn a_search_before_a_commit_answers_as_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    let spaces = [SpaceId::new("a").unwrap(), SpaceId::new("b").unwrap()];
    let mut rng = rng(0x2545_f491_4f6c_dd1d);
    let mut watermark = 0;
    let mut compared = 0;
    for round in 0..12 {
        for _ in 0..(if round == 0 { 120 } else { 10 }) {
            let space = &spaces[rng.below(2)];
            let (session, i) = (rng.below(6), rng.below(12));
            match rng.below(4) {
                0 => store
                    .text
                    .remove(space, &[format!("u:s{session}:{i}")])
                    .unwrap(),
                _ => {
                    let n = 2 + rng.below(8);
                    let text = rng.words(n);
                    store
                        .text
                        .upsert(&[unit(space, session, i, &text)])
                        .unwrap();
                }
            }
        }
        if round == 5 {
            // A dropped space: nothing of it committed is found; what is written to it
            // again after the drop is.
            store.text.drop_space(&spaces[1]).unwrap();
            store
                .text
                .upsert(&[unit(&spaces[1], 2, 2, "tea garden")])
                .unwrap();
        }
        assert!(store.text.has_pending() && store.text.searches_pending());
        let seed = rng.state();
        let before = searches(&store, &spaces, &mut rng);
        watermark += 1;
        store.text.commit(watermark).unwrap();
        let after = searches(&store, &spaces, &mut Words::new(seed, WORDS));
        agree(&before, &after, round);
        compared += before.iter().filter(|h| !h.is_empty()).count();
    }
    assert!(compared > 400, "only {compared} searches found anything");
}
