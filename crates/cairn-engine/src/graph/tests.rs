use super::*;

fn names(t: &str) -> Vec<(String, bool)> {
    names_in(t)
        .into_iter()
        .map(|f| (f.name, f.at_start))
        .collect()
}

#[test]
fn capitalized_runs_are_names_and_sentence_starts_are_marked() {
    assert_eq!(
        names("Lately I met John Smith in New York. Paris was fun"),
        vec![
            ("Lately".to_string(), true),
            ("John Smith".to_string(), false),
            ("New York".to_string(), false),
            ("Paris".to_string(), true)
        ]
    );
    assert_eq!(
        names("I love Bank of America's app")[0].0,
        "Bank of America"
    );
    assert_eq!(names("Mel, Caroline and me")[0].0, "Mel");
}

#[test]
fn a_short_name_starting_a_longer_one_is_its_alias() {
    assert!(starts_name("melanie", "mel"));
    assert!(starts_name("john smith", "john"));
    assert!(!starts_name("johnson smith", "john smith"));
    assert!(!starts_name("mel", "mel"));
    assert!(starts_name("project atlas", "atlas"));
    assert!(!starts_name("project atlas", "las"));
}

/// The names compared by building the graph of `n` sessions, each naming a new
/// person by first name and by full name (an alias to find; surnames shared by many)
/// and a place whose name starts others' ("Cafe1", "Cafe10").
fn names_compared(n: usize) -> u64 {
    use crate::work::{counting::steps_of, steps::NAMES_COMPARED};
    // Three letters per name, so no name's code starts another's.
    let code = |i: usize| -> String {
        [i / 676 % 26, i / 26 % 26, i % 26]
            .iter()
            .map(|&d| char::from(b'a' + d as u8))
            .collect()
    };
    let units: Vec<Unit> = (0..n)
        .map(|i| {
            let text = format!(
                "Yesterday I had lunch with Mel{c} and Mel{c} Rossi{} at the Cafe{i}.",
                code(i % 50),
                c = code(i),
            );
            Unit {
                id: format!("turn:s{i}:0"),
                space: cairn_core::SpaceId::new("t").unwrap(),
                kind: UnitKind::Turn,
                text: text.clone(),
                key: text,
                embed_text: None,
                provenance: cairn_core::Provenance {
                    session_id: Some(format!("s{i}")),
                    message_ids: vec!["0".into()],
                    speakers: vec!["user".into()],
                    ..Default::default()
                },
                part_of: None,
                occurred_at: None,
                recorded_at: chrono::Utc::now(),
                detail: None,
            }
        })
        .collect();
    let (g, compared) = steps_of(NAMES_COMPARED, || EntityGraph::build(&units).unwrap());
    // The aliases were found: each short name is merged into its longer one.
    let full = g.find("melaah rossiaah").expect("Melaah Rossiaah");
    assert_eq!(g.find("melaah"), Some(full));
    compared
}

/// Issue 38: alias merging once compared every name with every other, so the entity
/// graph cost CPU quadratic in a space's distinct names. This counts the names
/// compared instead of timing it: doubling the names at most doubles them.
#[test]
fn alias_merging_work_grows_linearly_with_names() {
    let (at_1, at_2) = (names_compared(1000), names_compared(2000));
    assert!(at_1 > 0);
    let growth = at_2 as f64 / at_1 as f64;
    assert!(growth <= 2.2, "names compared: {at_1} -> {at_2}");
    // A few comparisons per name, not one per pair (2000 names make 4 million pairs).
    assert!(
        at_2 <= 10 * 4000,
        "{at_2} names compared for about 4000 names"
    );
}

/// The index finds exactly what comparing every pair finds.
#[test]
fn longer_names_agree_with_every_pair() {
    let lower: Vec<String> = [
        "mel",
        "melanie",
        "melvin",
        "john",
        "john smith",
        "smith",
        "atlas",
        "project atlas",
        "atlas labs",
        "ana",
        "ana diaz",
        "anabel",
        "jo",
        "bob",
        "bobby",
        "bob marley",
        "marley",
        "new york",
        "york",
        "new",
        "bank of america",
        "america",
        "bank",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let index = LongerNames::new(&lower);
    for (i, short) in lower.iter().enumerate() {
        if short.contains(' ') {
            continue;
        }
        let pairs: Vec<usize> = (0..lower.len())
            .filter(|&j| j != i && starts_name(&lower[j], short))
            .collect();
        let want = match pairs[..] {
            [j] => Some(j),
            _ => None,
        };
        assert_eq!(index.only_one(i, short), want, "{short}");
    }
}
