//! The user's card at the head of recall's context: standing instructions and what holds
//! now, current, cited, within its share of the budget, and only what the scope sees.
mod common;
use cairn::{Memory, RecallOptions};
use common::{open, session};

fn said(m: &Memory, space: &str, id: &str, date: &str, user: &str, end_user: Option<&str>) {
    let metadata = end_user.map_or(String::new(), |u| {
        format!(r#""metadata": {{"user_id": "{u}"}},"#)
    });
    m.ingest_session(
        space,
        session(&format!(
            r#"{{"id": "{id}", "date": "{date}", {metadata} "messages": [
            {{"role": "user", "text": "{user}"}},
            {{"role": "assistant", "text": "Understood, I will keep that in mind."}}]}}"#
        )),
    )
    .unwrap();
}

fn history(m: &Memory, space: &str) {
    said(
        m,
        space,
        "s1",
        "2024-01-05",
        "From now on, please give me all measurements in metric units.",
        None,
    );
    said(
        m,
        space,
        "s2",
        "2024-01-20",
        "Can you help me plan a road trip along the coast of Portugal?",
        None,
    );
    said(
        m,
        space,
        "s3",
        "2024-02-02",
        "I have been vegetarian for years, so no meat dishes for me.",
        None,
    );
    said(
        m,
        space,
        "s4",
        "2024-02-15",
        "What is a good stretching routine after running?",
        None,
    );
}

fn recall(m: &Memory, space: &str, q: &str, opts: RecallOptions) -> cairn::Recall {
    m.recall(space, q, &opts).unwrap()
}

#[test]
fn a_standing_instruction_heads_the_context_of_a_request_that_never_mentions_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    history(&m, "me");
    let r = recall(
        &m,
        "me",
        "How long is the drive from Lisbon to Porto?",
        RecallOptions::default(),
    );
    let line = r
        .card
        .iter()
        .find(|l| l.category == cairn::FactCategory::Instruction)
        .unwrap_or_else(|| panic!("no instruction on the card: {:#?}\n{}", r.card, r.context));
    assert!(line.statement.contains("metric units"), "{line:?}");
    assert_eq!(
        (line.session_id.as_str(), line.stated_at.is_some()),
        ("s1", true)
    );
    // Cited: its unit is in the context, first, and the context opens with the card.
    assert_eq!(r.context_unit_ids.first(), Some(&line.unit_id));
    assert!(r.context.starts_with("About the user"), "{}", r.context);
    assert!(r.context_tokens <= RecallOptions::default().token_budget);
    // A preference that bears on the request joins it; one that does not, does not.
    let cook = recall(
        &m,
        "me",
        "What should I cook for dinner tonight?",
        RecallOptions::default(),
    );
    let shows_diet = |r: &cairn::Recall| r.context.contains("vegetarian");
    assert!(shows_diet(&cook), "{}", cook.context);
    assert!(cook
        .card
        .iter()
        .any(|l| l.category == cairn::FactCategory::Instruction));
}

#[test]
fn a_newer_instruction_about_the_same_thing_replaces_the_older_and_as_of_sees_the_older() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    history(&m, "me");
    said(
        &m,
        "me",
        "s5",
        "2024-03-01",
        "Actually, go back to imperial units from now on.",
        None,
    );
    said(
        &m,
        "me",
        "s6",
        "2024-03-02",
        "Also, keep your replies short.",
        None,
    );
    let q = "How heavy is a full suitcase usually?";
    let now = recall(&m, "me", q, RecallOptions::default());
    let instructions: Vec<&str> = now
        .card
        .iter()
        .filter(|l| l.category == cairn::FactCategory::Instruction)
        .map(|l| l.statement.as_str())
        .collect();
    assert!(
        instructions.iter().any(|s| s.contains("imperial")),
        "{instructions:?}"
    );
    assert!(
        instructions.iter().any(|s| s.contains("short")),
        "{instructions:?}"
    );
    assert!(!now.context.contains("metric"), "{}", now.context);
    // A request about the older instruction finds it, marked as replaced by the newer
    // one, as a value its chain replaced is marked.
    let imperial = &now
        .card
        .iter()
        .find(|l| l.statement.contains("imperial"))
        .expect("the newer instruction on the card")
        .unit_id;
    let asked = recall(
        &m,
        "me",
        "Which units did I ask you to give measurements in?",
        RecallOptions::default(),
    );
    let older = asked
        .hits
        .iter()
        .find(|h| h.session_id.as_deref() == Some("s1"))
        .unwrap_or_else(|| panic!("the older instruction is a hit: {:#?}", asked.hits));
    assert_eq!(older.superseded_by.as_ref(), Some(imperial), "{older:#?}");
    assert!(
        older.text.contains("[superseded") && older.text.contains("imperial"),
        "{}",
        older.text
    );
    assert!(asked.context.contains("[superseded"), "{}", asked.context);
    // As of February the newer ones were not said yet.
    let feb = RecallOptions {
        scope: cairn::ScopeOptions {
            as_of: Some(cairn::parse_timestamp("2024-02-20").unwrap()),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let then = recall(&m, "me", q, feb);
    assert!(then.context.contains("metric"), "{}", then.context);
    assert!(!then.context.contains("imperial") && !then.context.contains("short"));
}

#[test]
fn the_card_holds_only_what_the_scope_sees_and_never_joins_two_end_users() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    said(
        &m,
        "app",
        "a1",
        "2024-01-05",
        "From now on, always answer me in French.",
        Some("ana"),
    );
    said(
        &m,
        "app",
        "b1",
        "2024-01-06",
        "Going forward, never use emojis in your replies. CANARY-BEN",
        Some("ben"),
    );
    let q = "Can you suggest a weekend activity?";
    let as_user = |u: &str| RecallOptions {
        scope: cairn::ScopeOptions {
            partition: Some(serde_json::json!({ "user_id": u })),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let ana = recall(&m, "app", q, as_user("ana"));
    assert!(ana.context.contains("French"), "{}", ana.context);
    assert!(!ana.context.contains("CANARY-BEN") && !ana.context.contains("emojis"));
    let ben = recall(&m, "app", q, as_user("ben"));
    assert!(
        ben.context.contains("emojis") && !ben.context.contains("French"),
        "{}",
        ben.context
    );
    // A view of both end users has no card: a card is one user's.
    let both = recall(&m, "app", q, RecallOptions::default());
    assert!(both.card.is_empty(), "{:#?}", both.card);
    // A session scope sees only its own session's statements.
    let only_a1 = RecallOptions {
        scope: cairn::ScopeOptions {
            sessions: Some(vec!["a1".into()]),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let a1 = recall(&m, "app", q, only_a1);
    assert!(
        a1.card.iter().all(|l| l.session_id == "a1"),
        "{:#?}",
        a1.card
    );
}

#[test]
fn the_card_keeps_to_its_share_of_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    history(&m, "me");
    for (i, what) in [
        "cite your sources",
        "answer in British English",
        "use bullet points",
        "avoid jargon",
        "include a summary at the end",
        "mention prices in euros",
    ]
    .iter()
    .enumerate()
    {
        said(
            &m,
            "me",
            &format!("i{i}"),
            &format!("2024-04-{:02}", i + 1),
            &format!("From now on, always {what}."),
            None,
        );
    }
    let opts = RecallOptions {
        token_budget: 300,
        ..RecallOptions::default()
    };
    let r = m
        .recall("me", "Any tips for a trip to Porto?", &opts)
        .unwrap();
    let card_text = r.context.split("\n\n").next().unwrap();
    let tokens = m.embedder().count_tokens(card_text);
    assert!(
        !r.card.is_empty() && tokens <= 45,
        "{tokens} tokens: {card_text}"
    );
    assert!(r.context_tokens <= 300);
}

/// Issue 51: a statement of the user's goes on the card for a question about them when
/// the question's words found it about as well as they found anything, not for one
/// common word shared ("thinking").
#[test]
fn one_common_word_does_not_put_a_statement_on_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    for (id, date, text) in [
        (
            "s1",
            "2024-03-01",
            "I'm thinking of trying out a new sushi recipe this weekend.",
        ),
        (
            "s2",
            "2024-03-02",
            "I'm thinking of learning the cello this year.",
        ),
        (
            "s3",
            "2024-03-03",
            "I'm thinking of repainting the kitchen in green.",
        ),
        (
            "s4",
            "2024-03-09",
            "My NAS is a two-bay Synology from 2019.",
        ),
        ("s5", "2024-03-12", "The fan of my NAS got loud last month."),
        (
            "s6",
            "2024-03-15",
            "I back up my laptop to the NAS every night.",
        ),
    ] {
        said(&m, "me", id, date, text, None);
    }
    // One hit: the NAS statements fill the context; the plans are not shown.
    let r = recall(
        &m,
        "me",
        "I'm thinking about replacing my NAS, what do you think?",
        RecallOptions {
            top_k: 1,
            ..RecallOptions::default()
        },
    );
    assert!(r.context.contains("Synology"), "{}", r.context);
    assert!(
        r.card.iter().all(|l| !l.statement.contains("thinking of")),
        "{:#?}",
        r.card
    );
}

/// Issue 51: the user's key facts (a diet, a condition, home, work) are on the card
/// whatever is asked, as they hold at the request's time.
#[test]
fn key_facts_are_on_the_card_whatever_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    history(&m, "me");
    said(
        &m,
        "me",
        "s5",
        "2024-03-01",
        "I am allergic to peanuts.",
        None,
    );
    // One hit in a small budget: the allergy is not among the evidence.
    let small = |as_of: Option<&str>| RecallOptions {
        top_k: 1,
        token_budget: 300,
        scope: cairn::ScopeOptions {
            as_of: as_of.and_then(|t| cairn::parse_timestamp(t).ok()),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let q = "Can you suggest a name for my new boat?";
    let r = recall(&m, "me", q, small(None));
    let line = r
        .card
        .iter()
        .find(|l| l.statement.contains("peanuts"))
        .unwrap_or_else(|| panic!("{:#?}\n{}", r.card, r.context));
    assert_eq!(line.session_id, "s5");
    assert!(r.context.starts_with("About the user"), "{}", r.context);
    // Before the allergy was said, the card does not hold it.
    let r = recall(&m, "me", q, small(Some("2024-02-20")));
    assert!(!r.context.contains("peanuts"), "{}", r.context);
}
