use super::*;
use serde_json::json;

fn t() -> TrajectoryInput {
    serde_json::from_value(json!({
        "id": "t1", "goal": "Sign in and open orders", "start_url": "http://a/", "outcome": "success",
        "states": [
            {"url": "http://a/", "action": "click [107]", "thought": "Sign in.",
             "accessibility_tree": "RootWebArea 'Admin - Sign in'\n\t[101] textbox 'Username'\n\t[107] button 'Sign in'"},
            {"url": "http://a/dash", "action": "click('a51')",
             "accessibility_tree": "RootWebArea 'Dashboard'\n\t[a51] link 'Orders'\n\t[3] text 'Error: index invalid'"},
            {"url": "http://a/orders", "action": "click [107]",
             "accessibility_tree": "[9] heading 'Orders'\n[10] row '000145 Pending'"}
        ]
    }))
    .unwrap()
}

#[test]
fn actions_name_their_elements_and_pages_their_titles() {
    let a = annotate(&t());
    assert_eq!(
        a.actions[0].as_deref(),
        Some("click [107]  # [107] button 'Sign in'")
    );
    assert_eq!(
        a.actions[1].as_deref(),
        Some("click('a51')  # [a51] link 'Orders'")
    );
    // Named on an earlier page only: looked up there.
    assert!(a.actions[2]
        .as_deref()
        .unwrap()
        .contains("button 'Sign in'"));
    assert_eq!(a.titles[0].as_deref(), Some("Admin - Sign in"));
    assert_eq!(a.titles[2].as_deref(), Some("Orders"), "heading fallback");
}

#[test]
fn long_pages_are_cut_in_the_middle_and_say_so() {
    let page: String = (0..200)
        .map(|i| format!("[{i}] row 'line {i}'\n"))
        .collect();
    let mut tr = t();
    tr.states[0].observation = Some(page.clone());
    let v = state_view(&tr, &annotate(&tr), 0, 500);
    assert!(v.observation.starts_with("[0] row 'line 0'"));
    assert!(v.observation.contains("[199] row 'line 199'"), "tail kept");
    let note = v.truncated.clone().unwrap();
    assert!(
        note.contains("more characters; use state 0 with max_chars="),
        "{note}"
    );
    assert!(v.observation.contains(&note));
    assert_eq!(v.observation_chars, page.chars().count());
    let kept = v.observation.replace(&note, "").chars().count();
    assert!(kept <= 502, "{kept}");
    let whole = state_view(&tr, &annotate(&tr), 0, 1_000_000);
    assert_eq!(
        (whole.observation.as_str(), whole.truncated),
        (page.as_str(), None)
    );
}

#[test]
fn spans_stop_at_the_end_and_at_the_limit() {
    let tr = t();
    let s = span_view(&tr, 1, 9, 100).unwrap();
    assert_eq!((s.start, s.end, s.states.len()), (1, 2, 2));
    assert!(s.truncated.unwrap().contains("ends at 2"));
    assert!(span_view(&tr, 3, 3, 100).is_none());
    let mut long = t();
    long.states = (0..30).map(|_| tr.states[0].clone()).collect();
    let s = span_view(&long, 5, 29, 100).unwrap();
    assert_eq!(s.end, 5 + MAX_SPAN_STATES - 1);
    assert!(s.truncated.unwrap().contains("ask for span 15:29"));
}

#[test]
fn patterns_match_as_regex_or_words_and_bad_ones_name_the_field() {
    let tr = t();
    let m = match_states(
        &tr,
        &Pattern::new("sign IN|orders", PatternMode::Regex).unwrap(),
        10,
    )
    .unwrap();
    assert_eq!(
        m.states.iter().map(|s| s.state).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let m = match_states(
        &tr,
        &Pattern::new("pending ordered", PatternMode::Words).unwrap(),
        1,
    )
    .unwrap();
    // "ordered" stems to "order", which "Orders" holds; "pending" only state 2.
    assert_eq!(m.states_matched, 2);
    assert_eq!(m.states.len(), 1);
    assert!(m.truncated.unwrap().contains("1 more matching states"));
    assert_eq!(
        Pattern::new("(", PatternMode::Regex).err().unwrap().record,
        "pattern"
    );
    assert!(Pattern::new("the of", PatternMode::Words).is_err());
    let rec = TrajectoryRecord {
        space: cairn_core::SpaceId::new("s").unwrap(),
        recorded_at: chrono::Utc::now(),
        trajectory: tr.clone(),
    };
    let s = search(
        &[rec],
        &Pattern::new("orders pending", PatternMode::Words).unwrap(),
        5,
    )
    .unwrap();
    assert_eq!(s.states[0].state, 2, "most words first");
    assert_eq!(s.states[0].words_matched, 2);
    assert_eq!(state_word_counts(&tr, &["pend".into()]).unwrap(), [0, 0, 1]);
}

#[test]
fn long_lines_are_read_in_overlapping_pieces_that_keep_words_whole() {
    let short = "a short line";
    assert_eq!(pieces(short).collect::<Vec<_>>(), [short]);
    let words: String = (0..20_000).map(|i| format!("w{i} ")).collect();
    let ps: Vec<&str> = pieces(&words).collect();
    assert!(ps.len() > 1 && ps.iter().all(|p| p.len() <= PIECE_BYTES));
    // Every word lies whole in some piece.
    for w in ["w0", "w3000", "w12345", "w19999"] {
        assert!(
            ps.iter().any(|p| p.split_whitespace().any(|x| x == w)),
            "{w}"
        );
    }
    let last = ps.last().unwrap();
    assert!(words.ends_with(last));
    // Multi-byte text is cut at character boundaries.
    let wide = "é".repeat(40_000);
    assert!(pieces(&wide).all(|p| p.chars().all(|c| c == 'é')));
}

#[test]
fn a_costly_regex_over_a_huge_page_stops_at_the_deadline() {
    // The pattern: under the size limit, cost = pattern size x text size.
    let p = Pattern::new("a[ab]{900}[^ab]", PatternMode::Regex).unwrap();
    let mut tr = t();
    let page: String = "ab".repeat(1 << 21);
    tr.states[0].observation = Some(page);
    let out = crate::budget::within(Some(std::time::Duration::ZERO), || {
        match_states(&tr, &p, 10)
    });
    assert_eq!(out.err().map(|e| e.stage), Some("trajectory match"));
    let rec = TrajectoryRecord {
        space: cairn_core::SpaceId::new("s").unwrap(),
        recorded_at: chrono::Utc::now(),
        trajectory: tr.clone(),
    };
    let out = crate::budget::within(Some(std::time::Duration::ZERO), || search(&[rec], &p, 10));
    assert_eq!(out.err().map(|e| e.stage), Some("trajectory search"));
}
