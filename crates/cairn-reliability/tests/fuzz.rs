//! The short form of fuzzing, in CI: every target runs its seeds, every saved regression
//! input (`fuzz/regressions/<target>/`), and a fixed number of deterministic mutations,
//! and none may panic. Long form: `cairn reliability fuzz --seconds 600` (stable) or
//! `cargo fuzz run <target>` in `fuzz/` (docs/reliability.md).
use cairn_reliability::fuzz;
use std::path::Path;
use std::time::Duration;

#[test]
fn every_parser_survives_its_regressions_and_mutations() {
    let regressions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let runs: u64 = std::env::var("CAIRN_FUZZ_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(600);
    let mut failed = Vec::new();
    for t in fuzz::TARGETS {
        match fuzz::run(
            t,
            Duration::from_secs(3600),
            runs,
            7,
            Some(&regressions),
            None,
        ) {
            Ok(r) => assert_eq!(r.executions, runs),
            Err(e) => failed.push(format!("{e:#}")),
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn the_mutator_is_deterministic_and_bounded() {
    let mut a = fuzz::Rng(3);
    let mut b = fuzz::Rng(3);
    for _ in 0..1000 {
        let x = fuzz::mutate(&mut a, b"{\"id\":\"x\"}", b"[1,2]", 256);
        let y = fuzz::mutate(&mut b, b"{\"id\":\"x\"}", b"[1,2]", 256);
        assert_eq!(x, y);
        assert!(x.len() <= 256);
    }
}
