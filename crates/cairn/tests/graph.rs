//! The entity graph through the public API: alias merging, `as_of` on edges, forgetting
//! and rebuilding, isolation between spaces, and the recall stage that follows it. The
//! model-free embedder is enough: the graph reads names, not meanings.
use cairn::{
    EdgeKind, EngineConfig, EntityKind, Memory, MemoryConfig, RankConfig, RecallOptions,
    ScopeOptions, SessionInput,
};
use cairn_testkit::HashEmbedder;
use std::sync::Arc;

fn open(dir: &std::path::Path, graph: bool) -> Memory {
    let config = MemoryConfig {
        engine: EngineConfig {
            rank: RankConfig {
                graph,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    };
    Memory::open_with_embedder(dir, config, Arc::new(HashEmbedder)).expect("open")
}

fn session(id: &str, date: &str, lines: &[(&str, &str)]) -> SessionInput {
    let messages: Vec<serde_json::Value> = lines
        .iter()
        .enumerate()
        .map(|(i, (speaker, text))| {
            serde_json::json!({"id": format!("m{i}"), "speaker": speaker, "text": text})
        })
        .collect();
    serde_json::from_value(serde_json::json!({"id": id, "date": date, "messages": messages}))
        .expect("session")
}

/// Two people over three sessions; Caroline calls Melanie "Mel", and names a place and
/// a friend.
fn sessions() -> Vec<SessionInput> {
    vec![
        session(
            "s1",
            "2023-05-01 10:00",
            &[
                (
                    "Caroline",
                    "Hey Mel, how was the trip to Lisbon with Jonas?",
                ),
                ("Melanie", "Wonderful, we hiked near the coast all week."),
            ],
        ),
        session(
            "s2",
            "2023-06-01 10:00",
            &[
                (
                    "Caroline",
                    "I joined the Riverside Climbing Club last weekend.",
                ),
                ("Melanie", "Great, and Jonas climbs there too, he loves it."),
            ],
        ),
        session(
            "s3",
            "2023-07-01 10:00",
            &[
                ("Melanie", "Mel here: the pottery class starts on Monday."),
                ("Caroline", "Enjoy it, Melanie."),
            ],
        ),
    ]
}

#[test]
fn a_nickname_is_merged_into_the_name_it_starts_and_places_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), true);
    m.ingest_sessions("a", sessions()).unwrap();
    let melanie = m
        .entity("a", "Mel", &ScopeOptions::default())
        .unwrap()
        .expect("Mel is known");
    assert_eq!(melanie.summary.name, "Melanie");
    assert_eq!(melanie.summary.kind, EntityKind::Person);
    assert_eq!(melanie.summary.aliases, vec!["mel".to_string()]);
    // Spoke twice (s1, s2 and s3 lines), named three times ("Mel" twice, "Melanie").
    let spoke = melanie
        .mentions
        .iter()
        .filter(|x| x.edge == EdgeKind::SpeakerOf)
        .count();
    let named = melanie
        .mentions
        .iter()
        .filter(|x| x.edge == EdgeKind::Mention)
        .count();
    assert_eq!((spoke, named), (3, 3));
    assert_eq!(melanie.summary.sessions, 3);
    assert_eq!(melanie.timeline.len(), 3);
    assert_eq!(melanie.timeline[0].session_id, "s1");
    let lisbon = m
        .entity("a", "lisbon", &ScopeOptions::default())
        .unwrap()
        .expect("Lisbon");
    assert_eq!(lisbon.summary.kind, EntityKind::Place);
    let club = m
        .entity("a", "Riverside Climbing Club", &ScopeOptions::default())
        .unwrap();
    assert_eq!(club.expect("club").summary.kind, EntityKind::Organization);
    // Jonas is named with Melanie's name in s1 and in her own line in s2.
    let jonas = m
        .entity("a", "Jonas", &ScopeOptions::default())
        .unwrap()
        .expect("Jonas");
    assert!(jonas
        .relations
        .iter()
        .any(|r| r.name == "Melanie" && r.messages == 2));
    // A sentence-start word that is never a name inside a sentence is not an entity.
    assert!(m
        .entity("a", "Wonderful", &ScopeOptions::default())
        .unwrap()
        .is_none());
    assert!(m
        .entity("a", "Enjoy", &ScopeOptions::default())
        .unwrap()
        .is_none());
    let found = m
        .entities("a", Some("mel"), &ScopeOptions::default())
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "Melanie");
}

#[test]
fn as_of_cuts_the_edges_that_did_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), true);
    m.ingest_sessions("a", sessions()).unwrap();
    let may = cairn::parse_timestamp("2023-05-15T00:00:00Z").unwrap();
    let club = m
        .entity(
            "a",
            "Riverside Climbing Club",
            &ScopeOptions::as_of(Some(may)),
        )
        .unwrap();
    assert!(club.is_none(), "the club is first named in June");
    let jonas = m
        .entity("a", "Jonas", &ScopeOptions::as_of(Some(may)))
        .unwrap()
        .expect("named in May");
    assert_eq!(jonas.mentions.len(), 1);
    let melanie = m
        .entity("a", "Melanie", &ScopeOptions::as_of(Some(may)))
        .unwrap()
        .unwrap();
    assert!(melanie
        .mentions
        .iter()
        .all(|x| x.session_id.as_deref() == Some("s1")));
    let listed: Vec<String> = m
        .entities("a", None, &ScopeOptions::as_of(Some(may)))
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert!(!listed.contains(&"Riverside Climbing Club".to_string()));
    assert!(listed.contains(&"Lisbon".to_string()));
}

#[test]
fn forgetting_a_session_forgets_its_entities_and_a_rebuild_gives_the_same_graph() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), true);
    m.ingest_sessions("a", sessions()).unwrap();
    let before = m.entities("a", None, &ScopeOptions::default()).unwrap();
    let report = m.check(true).unwrap();
    assert!(report.consistent);
    assert_eq!(
        m.entities("a", None, &ScopeOptions::default()).unwrap(),
        before
    );
    m.forget_session("a", "s1").unwrap();
    assert!(m
        .entity("a", "Lisbon", &ScopeOptions::default())
        .unwrap()
        .is_none());
    let jonas = m
        .entity("a", "Jonas", &ScopeOptions::default())
        .unwrap()
        .expect("still named in s2");
    assert!(jonas
        .mentions
        .iter()
        .all(|x| x.session_id.as_deref() == Some("s2")));
    m.forget_session("a", "s2").unwrap();
    assert!(m
        .entity("a", "Jonas", &ScopeOptions::default())
        .unwrap()
        .is_none());
}

#[test]
fn entities_never_cross_spaces() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), true);
    m.ingest_sessions("a", sessions()).unwrap();
    m.ingest_sessions(
        "b",
        vec![session(
            "s1",
            "2023-05-01 10:00",
            &[("Zed", "Off to Oslo soon.")],
        )],
    )
    .unwrap();
    let b: Vec<String> = m
        .entities("b", None, &ScopeOptions::default())
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(b, vec!["Oslo".to_string(), "Zed".to_string()]);
    assert!(m
        .entity("b", "Melanie", &ScopeOptions::default())
        .unwrap()
        .is_none());
    assert!(m
        .entity("a", "Oslo", &ScopeOptions::default())
        .unwrap()
        .is_none());
    let r = m
        .recall("b", "Where is Melanie going?", &RecallOptions::default())
        .unwrap();
    assert!(r.hits.iter().all(|h| h.via.is_none()));
}

#[test]
fn recall_says_which_hits_the_graph_linked_and_off_it_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), true);
    m.ingest_sessions("a", sessions()).unwrap();
    let opts = RecallOptions {
        top_k: 10,
        ..Default::default()
    };
    let r = m.recall("a", "What does Jonas like?", &opts).unwrap();
    let linked: Vec<&str> = r.hits.iter().filter_map(|h| h.via.as_deref()).collect();
    assert!(
        linked.iter().any(|v| v.contains("Jonas")),
        "hits naming Jonas say so: {linked:?}"
    );
    drop(m);
    let m = open(dir.path(), false);
    let r = m.recall("a", "What does Jonas like?", &opts).unwrap();
    assert!(r.hits.iter().all(|h| h.via.is_none()));
}
