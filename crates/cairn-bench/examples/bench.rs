//! Runs a bench subcommand without the `cairn` CLI:
//! `cargo run --release -p cairn-bench --example bench -- longmemeval --data FILE --limit 5`
use clap::Parser;

#[derive(Parser)]
#[command(name = "bench", about = "cairn-bench without the cairn CLI")]
struct Cli {
    #[command(subcommand)]
    bench: cairn_bench::BenchCommand,
}

fn main() -> anyhow::Result<()> {
    cairn_bench::run(Cli::parse().bench, &mut std::io::stdout())
}
