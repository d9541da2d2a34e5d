//! `RecallOptions::explain` through the public API on the real store and model: the
//! explanation adds up to the score it explains, says what packing did, and changes
//! nothing about the recall itself.
mod common;
use cairn::explain::{Op, PackOutcome, Step};
use cairn::{GroupMessage, Hit, Memory, Recall, RecallOptions};
use common::{open, session};

fn msg(time: &str, speaker: &str, text: &str) -> GroupMessage {
    GroupMessage {
        id: None,
        speaker: speaker.into(),
        group: "Atlas".into(),
        time: cairn::parse_timestamp(time).unwrap(),
        text: text.into(),
        metadata: serde_json::Value::Null,
    }
}

fn fill(m: &Memory) {
    m.ingest_group_messages(
        "team",
        vec![
            msg(
                "2025-03-03 09:00",
                "Maya",
                "The budget for Project Atlas is $120,000 for this quarter.",
            ),
            msg(
                "2025-03-03 09:05",
                "Priya",
                "I'm the finance director, please send me the breakdown by Friday.",
            ),
            msg(
                "2025-03-03 09:07",
                "Tom",
                "I've got 6 years of experience with AWS cost tuning.",
            ),
        ],
    )
    .unwrap();
    m.ingest_group_messages(
        "team",
        vec![msg(
            "2025-03-10 14:00",
            "Maya",
            "Update: the Atlas budget has been cut to $100,000 after the finance review.",
        )],
    )
    .unwrap();
    m.ingest_sessions(
        "alice",
        vec![
            session(
                r#"{"id": "shop", "date": "2024-03-04 10:00", "messages": [
                {"role": "user", "text": "I bought a red bike and a helmet today."},
                {"role": "assistant", "text": "Enjoy the rides on your new red bike!"}]}"#,
            ),
            session(
                r#"{"id": "ask", "date": "2024-02-01 10:00", "messages": [
                {"role": "user", "text": "What bike should I buy? Which helmet is safest?"},
                {"role": "assistant", "text": "A hybrid bike suits city riding; look for MIPS helmets."}]}"#,
            ),
        ],
    )
    .unwrap();
}

fn recall(m: &Memory, space: &str, q: &str, opts: &RecallOptions, explain: bool) -> Recall {
    let opts = RecallOptions {
        explain,
        ..opts.clone()
    };
    m.recall(space, q, &opts).unwrap()
}

/// Replays a hit's explanation: fusion's terms add up to the fused score, and the
/// adjustments applied in order end at the hit's score.
fn replay(h: &Hit) {
    let e = h.explain.as_ref().expect("every hit is explained");
    let mut score = match (&e.scored_as, e.fused) {
        (Some(_), Some(fused)) => {
            let terms = e.lexical.as_ref().map_or(0.0, |l| l.fused)
                + e.dense.as_ref().map_or(0.0, |d| d.fused);
            assert!(
                (terms - fused).abs() < 1e-5,
                "{}: {terms} != {fused}",
                h.unit_id
            );
            assert!(e.lexical.is_some() || e.dense.is_some(), "{e:?}");
            fused
        }
        _ => f32::NAN,
    };
    for a in &e.adjustments {
        score = match a.op {
            Op::Add => score + a.by,
            Op::Multiply => score * a.by,
            Op::Set => a.by,
        };
        assert!((score - a.score_after).abs() < 1e-5, "{}: {a:?}", h.unit_id);
    }
    assert!(
        (score - h.score).abs() < 1e-5,
        "{}: {score} != {}",
        h.unit_id,
        h.score
    );
}

fn steps(h: &Hit) -> Vec<Step> {
    h.explain
        .as_ref()
        .unwrap()
        .adjustments
        .iter()
        .map(|a| a.step)
        .collect()
}

#[test]
fn explain_adds_up_and_changes_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    fill(&m);
    let cases = [
        ("team", "What is the budget for Project Atlas now?", None),
        ("team", "Who is Priya and what does she do?", None),
        (
            "alice",
            "What did I buy yesterday?",
            Some("2024-03-05 12:00"),
        ),
        ("alice", "bike helmet", None),
    ];
    for (space, q, as_of) in cases {
        let opts = RecallOptions {
            top_k: 6,
            token_budget: 120,
            scope: cairn::ScopeOptions {
                as_of: as_of.map(|t| cairn::parse_timestamp(t).unwrap()),
                ..Default::default()
            },
            ..Default::default()
        };
        let plain = recall(&m, space, q, &opts, false);
        let told = recall(&m, space, q, &opts, true);
        // Off: nothing of it, not even in the JSON.
        assert!(plain.explain.is_none() && plain.hits.iter().all(|h| h.explain.is_none()));
        assert!(!serde_json::to_string(&plain).unwrap().contains("explain"));
        // On: the same recall, explained.
        let strip = |r: &Recall| {
            let mut r = r.clone();
            r.explain = None;
            r.timings = Default::default();
            for h in r.hits.iter_mut().chain(&mut r.extra_hits) {
                h.explain = None;
            }
            r
        };
        assert_eq!(strip(&plain), strip(&told), "{q}");
        told.hits.iter().for_each(replay);
        let e = told.explain.as_ref().unwrap();
        assert_eq!(e.packing.token_budget, 120);
        assert_eq!(e.packing.tokens_used, told.context_tokens);
        let ids: Vec<&str> = e
            .packing
            .entries
            .iter()
            .map(|p| p.unit_id.as_str())
            .collect();
        let shown = told.hits.iter().chain(&told.extra_hits);
        let hits: Vec<&str> = shown.clone().map(|h| h.unit_id.as_str()).collect();
        assert_eq!(
            ids, hits,
            "packing sees the hits in rank order, then the extra ones"
        );
        // Each entry in the context shows units of its hit, and nothing else is shown.
        let units_of = |id: &str| -> Vec<String> {
            let h = shown.clone().find(|h| h.unit_id == id).unwrap();
            std::iter::once(h.unit_id.clone())
                .chain(h.parts.iter().map(|p| p.unit_id.clone()))
                .collect()
        };
        let packed: Vec<&str> = e
            .packing
            .entries
            .iter()
            .filter(|p| matches!(p.outcome, PackOutcome::Whole | PackOutcome::Trimmed))
            .map(|p| p.unit_id.as_str())
            .collect();
        // The user's card, if any, heads the context and cites its own fact units.
        let mut packed_units: Vec<String> = told.card.iter().map(|l| l.unit_id.clone()).collect();
        packed_units.extend(packed.iter().flat_map(|id| units_of(id)));
        assert!(
            told.context_unit_ids
                .iter()
                .all(|u| packed_units.contains(u)),
            "{q}: {:?} not all of {packed_units:?}",
            told.context_unit_ids
        );
        for id in &packed {
            assert!(
                units_of(id)
                    .iter()
                    .any(|u| told.context_unit_ids.contains(u)),
                "{q}: {id}"
            );
        }
        let cut = e.packing.entries[..told.hits.len()]
            .iter()
            .filter(|p| !matches!(p.outcome, PackOutcome::Whole | PackOutcome::Duplicate))
            .count();
        assert_eq!(cut, told.hits_cut);
        assert!(e.counts.fused >= e.counts.visible && e.counts.lexical + e.counts.dense > 0);
        let names: Vec<&str> = e.stages.iter().map(|s| s.stage.as_str()).collect();
        assert_eq!(
            names,
            [
                "fuse",
                "load",
                "graph_lift",
                "second_pass",
                "graph",
                "versions",
                "places",
                "floor",
                "newest",
                "quotas",
                "preference",
                "profiles",
                "texts",
                "card"
            ]
        );
    }

    // Versions: the current budget is placed above the hit stating the old one, and
    // says so; the old one is noted as superseded.
    let opts = RecallOptions {
        top_k: 6,
        explain: true,
        ..Default::default()
    };
    let r = m
        .recall("team", "What was the budget for Project Atlas?", &opts)
        .unwrap();
    let placed: Vec<&Hit> = r
        .hits
        .iter()
        .filter(|h| steps(h).contains(&Step::VersionPlacement))
        .collect();
    let noted = r
        .hits
        .iter()
        .any(|h| !h.explain.as_ref().unwrap().version_notes.is_empty());
    assert!(noted, "{:#?}", r.hits);
    for p in &placed {
        let above = p.explain.as_ref().unwrap().placed_above.as_deref().unwrap();
        let old = r
            .hits
            .iter()
            .find(|h| h.unit_id == above)
            .expect("placed above a hit");
        assert!(old.superseded_by.is_some());
    }

    // A question about a person gets the profile first, placed with the best score.
    let r = m.recall("team", "What is Priya's role?", &opts).unwrap();
    assert_eq!(r.hits[0].kind, cairn::UnitKind::Profile, "{:#?}", r.hits);
    assert_eq!(steps(&r.hits[0]), [Step::ProfilePlacement]);

    // "yesterday" names a period: the purchase inside it is boosted by 1 + time_boost.
    let r = recall(
        &m,
        "alice",
        "What did I buy yesterday?",
        &RecallOptions {
            scope: cairn::ScopeOptions {
                as_of: Some(cairn::parse_timestamp("2024-03-05 12:00").unwrap()),
                ..Default::default()
            },
            ..Default::default()
        },
        true,
    );
    let shop = r
        .hits
        .iter()
        .find(|h| h.session_id.as_deref() == Some("shop"))
        .unwrap();
    let boost = shop
        .explain
        .as_ref()
        .unwrap()
        .adjustments
        .iter()
        .find(|a| a.step == Step::TimeBoost);
    assert_eq!(boost.map(|a| a.by), Some(1.3), "{shop:#?}");

    // A key that only asks is penalized, a round credited by its turn says so.
    let r = recall(
        &m,
        "alice",
        "bike helmet",
        &RecallOptions {
            top_k: 10,
            ..Default::default()
        },
        true,
    );
    let ask = r
        .hits
        .iter()
        .find(|h| h.session_id.as_deref() == Some("ask"))
        .unwrap();
    let penalty = ask
        .explain
        .as_ref()
        .unwrap()
        .adjustments
        .iter()
        .find(|a| a.step == Step::QuestionPenalty);
    assert!(
        penalty.is_some_and(|a| (a.by - 0.85).abs() < 1e-6),
        "{ask:#?}"
    );
    assert!(
        r.hits.iter().all(|h| {
            let e = h.explain.as_ref().unwrap();
            let credited = e.scored_as.as_deref().is_some_and(|s| s != h.unit_id);
            credited == steps(h).contains(&Step::ContainerCredit)
        }),
        "{:#?}",
        r.hits
    );
}
