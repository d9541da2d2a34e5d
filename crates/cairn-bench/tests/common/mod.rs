#![allow(dead_code)]
//! What the bench's integration tests share: the model check and running a bench command
//! line as `cairn bench` would.
use cairn_bench::BenchCommand;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    bench: BenchCommand,
}

/// Whether the embedding model is installed (else SKIPPED, or a failure under
/// `CAIRN_REQUIRE_MODEL`).
pub fn model_installed() -> bool {
    let dir = tempfile::tempdir().unwrap();
    match cairn::Memory::open(dir.path()) {
        Err(cairn::Error::Model(e)) => {
            cairn_testkit::model_missing(e);
            false
        }
        Err(e) => panic!("opening a memory: {e}"),
        Ok(_) => true,
    }
}

/// Runs `cairn bench <args>`.
pub fn bench(args: &[&str]) -> anyhow::Result<()> {
    let mut all = vec!["cairn"];
    all.extend_from_slice(args);
    cairn_bench::run(Cli::try_parse_from(all)?.bench, &mut std::io::stdout())
}
