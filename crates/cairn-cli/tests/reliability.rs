//! Short forms of the reliability tests (`cairn reliability ...`, docs/reliability.md),
//! each against real `cairn serve` processes of this build: a few SIGKILLs during HTTP
//! ingest, the bad-input corpus, raced retries, a full and a read-only disk, a short soak,
//! and an export/import round trip. Skipped without the embedding model.
use cairn_reliability::{backup, badinput, crash, diskfull, model_missing, races, soak, Cairn};
use std::path::Path;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn skip(e: &anyhow::Error) -> bool {
    if model_missing(e) {
        cairn_testkit::model_missing(format!("{e:#}"));
        return true;
    }
    false
}

fn cairn(dir: &Path) -> Cairn {
    Cairn::new(BIN, dir.join("data"))
}

#[test]
fn sigkill_during_http_ingest_and_forgets_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = crash::CrashOptions {
        kills: 4,
        seed: 11,
        writers: 3,
        min_delay: Duration::from_millis(150),
        max_delay: Duration::from_millis(900),
        check_every: 1,
    };
    let r = match crash::run(&cairn(tmp.path()), &opts, |m| eprintln!("{m}")) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) => panic!("{e:#}"),
    };
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert!(r.passed(), "{r:#?}");
    assert_eq!(r.kills, 4);
    assert!(r.acknowledged_writes > 0, "{r:#?}");
    assert!(
        r.acknowledged_forgets > 0,
        "forgets ran between the kills: {r:#?}"
    );
    assert_eq!(r.check_runs, 5);
}

#[test]
fn retries_raced_under_one_key_write_once() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = races::RacesOptions {
        rounds: 6,
        ..Default::default()
    };
    let r = match races::run(&cairn(tmp.path()), &opts, |m| eprintln!("{m}")) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) => panic!("{e:#}"),
    };
    assert!(r.passed(), "{r:#?}");
    assert_eq!(r.tries, 6 * 2 * opts.retries);
}

/// `cairn reliability diskfull` as CI runs it: a real server on a full tmpfs, then on the
/// same directory remounted read-only (root only; `SKIPPED` otherwise, a failure under
/// `CAIRN_REQUIRE_MOUNT`).
#[test]
fn a_server_on_a_full_then_read_only_disk_refuses_clearly_and_keeps_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let r = match diskfull::run(Path::new(BIN), tmp.path(), &Default::default()) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) if diskfull::mount_refused(&e) => {
            cairn_testkit::switches::mount_missing(format!("{e:#}"));
            return;
        }
        Err(e) => panic!("{e:#}"),
    };
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert!(r.passed(), "{r:#?}");
}

#[test]
fn every_bad_request_gets_a_4xx_and_the_data_stays_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let r = match badinput::run(&cairn(tmp.path()), |m| eprintln!("{m}")) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) => panic!("{e:#}"),
    };
    assert!(r.passed(), "{r:#?}");
    assert!(r.requests >= 150, "{}", r.requests);
    assert_eq!(r.refused_4xx + r.accepted_as_data, r.requests);
    assert!(r.refused_4xx >= 140, "{}", r.refused_4xx);
}

#[test]
fn short_soak_has_no_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = soak::SoakOptions {
        clients: 32,
        duration: Duration::from_secs(6),
        seed: 3,
        ingest_percent: 20,
    };
    let r = match soak::run(&cairn(tmp.path()), &opts, |m| eprintln!("{m}")) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) => panic!("{e:#}"),
    };
    eprintln!(
        "soak: {} requests, ingest p50 {:.0} ms p99 {:.0} ms, recall p50 {:.0} ms p99 {:.0} ms, RSS {:.0} -> {:.0} MiB",
        r.requests, r.ingest.p50_ms, r.ingest.p99_ms, r.recall.p50_ms, r.recall.p99_ms, r.rss_start_mib, r.rss_end_mib
    );
    assert_eq!(r.errors, 0, "{:?}", r.error_samples);
    assert!(r.recall.requests > 0 && r.ingest.requests > 0, "{r:#?}");
    assert_eq!(r.sessions_verified, r.sessions_acknowledged);
}

#[test]
fn export_then_import_gives_identical_recall() {
    let tmp = tempfile::tempdir().unwrap();
    let r = match backup::run(Path::new(BIN), tmp.path(), 10, 5) {
        Ok(r) => r,
        Err(e) if skip(&e) => return,
        Err(e) => panic!("{e:#}"),
    };
    assert!(r.passed(), "{r:#?}");
    assert!(r.queries >= 10);
}
