//! `cairn load`: flags in, `cairn-load`'s driver out, the report printed.
use anyhow::Result;
use cairn_load::load::{KindReport, LoadOptions, Mix};
use std::time::Duration;

#[derive(clap::Args)]
pub struct LoadArgs {
    /// Base URL of a running `cairn serve`.
    #[arg(long, default_value = "http://127.0.0.1:7700")]
    pub url: String,
    /// API key (an admin key, or one that may use --space).
    #[arg(long, env = "CAIRN_API_KEY", hide_env_values = true)]
    pub key: Option<String>,
    #[arg(long, default_value = "load")]
    pub space: String,
    /// What the clients send: `read` (recalls), `write` (appends of one message to a
    /// session), or `mixed` (appends with probability --write-percent, else recalls).
    #[arg(long, value_enum, default_value_t = MixArg::Read)]
    pub mix: MixArg,
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Seconds to measure.
    #[arg(long, default_value_t = 20)]
    pub duration: u64,
    /// Ingest this many synthetic messages first (0: measure the space as it is).
    #[arg(long, default_value_t = 0)]
    pub seed_messages: usize,
    #[arg(long, default_value_t = 5)]
    pub top_k: usize,
    /// Make every query unique (no query embedding comes from the cache).
    #[arg(long)]
    pub fresh_queries: bool,
    /// Sessions the appends go to: 1 = every client appends to the same session; more
    /// spreads them (request i of client c goes to session (c + i * clients) mod N).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub sessions: usize,
    /// With `--mix mixed`: the share of requests that append, in percent.
    #[arg(long, default_value_t = 20, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_percent: u8,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum MixArg {
    Read,
    Write,
    Mixed,
}

fn line(what: &str, k: &KindReport) -> String {
    format!(
        "{what}: {} requests, {:.1}/s, p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        k.requests, k.per_second, k.p50_ms, k.p90_ms, k.p99_ms, k.max_ms
    )
}

pub fn run(args: &LoadArgs, json: bool) -> Result<()> {
    let mix = match args.mix {
        MixArg::Read => Mix::Read,
        MixArg::Write => Mix::Write,
        MixArg::Mixed => Mix::Mixed,
    };
    let report = cairn_load::load::run(&LoadOptions {
        url: args.url.clone(),
        key: args.key.clone(),
        space: args.space.clone(),
        concurrency: args.concurrency,
        duration: Duration::from_secs(args.duration),
        seed_messages: args.seed_messages,
        top_k: args.top_k,
        fresh_queries: args.fresh_queries,
        mix,
        write_percent: usize::from(args.write_percent),
        sessions: args.sessions,
    })?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    if report.seed_seconds > 0.0 {
        outln!("seeded in {:.1}s", report.seed_seconds);
    }
    outln!(
        "{} on {:?} ({} messages), {} clients{}, {:.1}s: {} requests, {} errors, {:.1} req/s, p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        match mix {
            Mix::Read => "recall",
            Mix::Write => "append",
            Mix::Mixed => "recall + append",
        },
        report.space,
        report.messages_in_space,
        report.concurrency,
        if report.fresh_queries { ", fresh queries" } else { "" },
        report.seconds,
        report.requests,
        report.errors,
        report.requests_per_second,
        report.p50_ms,
        report.p90_ms,
        report.p99_ms,
        report.max_ms
    );
    if mix == Mix::Mixed {
        if let Some(r) = &report.read {
            outln!("  {}", line("recall", r));
        }
    }
    if let Some(w) = &report.write {
        outln!(
            "  {} (acknowledged, over {} session(s) {}-*)",
            line("append", w),
            report.append_sessions.unwrap_or(1),
            report.append_session_prefix.as_deref().unwrap_or("")
        );
    }
    for e in &report.error_samples {
        outln!("  error: {e}");
    }
    Ok(())
}
