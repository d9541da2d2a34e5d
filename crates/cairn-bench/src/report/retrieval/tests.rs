use super::*;
use crate::records::retrieval::minimal;
use crate::scoring::exclusion;

fn scores(any1: f64) -> Scores {
    [
        ("recall_any@1".to_string(), any1),
        ("mrr".to_string(), any1),
    ]
    .into()
}

#[test]
fn abstention_and_errors_are_excluded_and_counted() {
    let row = ConfigRow {
        name: "defaults".into(),
        options: cairn::RecallOptions::default(),
        peer: None,
    };
    let mut a = minimal("q1", "multi-session", "defaults");
    a.metrics.session = Some(scores(1.0));
    a.metrics.turn = Some(scores(1.0));
    let mut b = minimal("q2", "temporal-reasoning", "defaults");
    b.metrics.session = Some(scores(0.0)); // scored at session level only
    let mut abs = minimal("q3_abs", "multi-session", "defaults");
    abs.metrics.session = Some(scores(0.0));
    abs.exclusion = Some(exclusion::ABSTENTION.into());
    let mut err = minimal("q4", "multi-session", "defaults");
    err.exclusion = Some(exclusion::ERROR.into());
    err.error = Some("boom".into());
    let mut other_row = minimal("q5", "multi-session", "bench");
    other_row.metrics.session = Some(scores(0.0));
    let dup = minimal("q1", "multi-session", "defaults"); // a later duplicate line: ignored
    let recs = vec![a, b, abs, err, other_row, dup];
    let s = summarize_row(&row, &recs);
    assert_eq!(s.questions, 4);
    assert_eq!(s.excluded[exclusion::ABSTENTION], 1);
    assert_eq!(s.excluded[exclusion::ERROR], 1);
    let sl = &s.levels["session"];
    assert_eq!(sl.grouped.overall.n, 2);
    assert_eq!(sl.grouped.overall.metrics["recall_any@1"], 0.5);
    assert_eq!(
        sl.grouped.by_type["multi-session"].n, 1,
        "abstention not in its type"
    );
    assert_eq!(sl.grouped.by_type["multi-session"].metrics["mrr"], 1.0);
    let tl = &s.levels["turn"];
    assert_eq!(tl.grouped.overall.n, 1);
    assert_eq!(tl.unscored, 1);
}

#[test]
fn the_comparison_names_runs_of_other_shapes_below_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("lme-v2-fixture");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("summary.json"),
        r#"{"meta": {"dataset": "lme-v2"}, "overall": {}}"#,
    )
    .unwrap();
    let table = compare(&[&other]).unwrap();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| ")).count(),
        1,
        "{table}"
    );
    assert!(table.contains("see their summary.md): "), "{table}");
    assert!(table.contains("lme-v2-fixture."), "{table}");
}
