//! The inspection side of `cairn bench trajectories-scale`: after the recall queries, the
//! same queries through recall + inspection (no LLM: `Trajectories::recall_inspect`,
//! the row the LongMemEval-V2 bench reports beside plain recall) and through a words
//! search across the whole space (`Trajectories::search`), timed one at a time.
//! Results are appended to the run's `summary.md` and written to `inspect.json`.
use crate::report::ms;
use cairn::{InspectRecallOptions, Memory, PatternMode};
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

/// The p95 target of the non-LLM inspection row.
pub const TARGET_P95_MS: f64 = 100.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InspectLatency {
    pub queries: usize,
    pub token_budget: usize,
    /// Recall + inspection, wall time per query, and its stages (means).
    pub inspect_wall_ms: Percentiles,
    pub mean_recall_ms: f64,
    pub mean_inspect_ms: f64,
    pub mean_render_ms: f64,
    pub mean_context_tokens: f64,
    pub mean_spans: f64,
    /// A words search over every state of the space, wall time per query.
    pub search_wall_ms: Percentiles,
    pub mean_search_states_matched: f64,
    pub target_p95_ms: f64,
    pub target_met: bool,
}

/// Times every query through recall + inspection, then through a search.
pub fn measure(
    memory: &Memory,
    space: &str,
    queries: &[String],
    token_budget: usize,
) -> anyhow::Result<InspectLatency> {
    let opts = InspectRecallOptions {
        token_budget,
        ..InspectRecallOptions::default()
    };
    let (mut wall, mut rec, mut ins, mut ren, mut tok, mut spans) =
        (Vec::new(), 0.0, 0.0, 0.0, 0.0, 0.0);
    for q in queries {
        let t = Instant::now();
        let r = memory.trajectories().recall_inspect(space, q, &opts)?;
        wall.push(t.elapsed().as_secs_f64() * 1000.0);
        rec += r.recall_ms;
        ins += r.inspect_ms;
        ren += r.render_ms;
        tok += r.context.tokens as f64;
        spans += r.spans.len() as f64;
    }
    let mut search = Vec::new();
    let mut matched = 0.0;
    for q in queries {
        let t = Instant::now();
        let m = memory
            .trajectories()
            .search(space, q, PatternMode::Words, None)?;
        search.push(t.elapsed().as_secs_f64() * 1000.0);
        matched += m.states_matched as f64;
    }
    let n = queries.len().max(1) as f64;
    let inspect_wall_ms = percentiles(&wall);
    Ok(InspectLatency {
        queries: queries.len(),
        token_budget,
        target_met: inspect_wall_ms.p95 < TARGET_P95_MS,
        inspect_wall_ms,
        mean_recall_ms: rec / n,
        mean_inspect_ms: ins / n,
        mean_render_ms: ren / n,
        mean_context_tokens: tok / n,
        mean_spans: spans / n,
        search_wall_ms: percentiles(&search),
        mean_search_states_matched: matched / n,
        target_p95_ms: TARGET_P95_MS,
    })
}

pub fn render(l: &InspectLatency) -> String {
    let mut out = String::from("\n## Recall + inspection and search (no LLM)\n\n");
    let _ = writeln!(
        out,
        "The same {} queries through `Trajectories::recall_inspect` (recall shortlists 3 trajectories, their best states become spans, rendered within {} tokens) and through `Trajectories::search` (words, every state of the space), one at a time after the recall queries.\n",
        l.queries, l.token_budget
    );
    let _ = writeln!(
        out,
        "| latency (ms) | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, p) in [
        ("recall + inspection, wall", &l.inspect_wall_ms),
        ("search (words, whole space), wall", &l.search_wall_ms),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            p.n,
            ms(p.mean),
            ms(p.p50),
            ms(p.p95),
            ms(p.p99),
            ms(p.max)
        );
    }
    let _ = writeln!(
        out,
        "\nRecall + inspection p95 target < {:.0} ms: {}. Mean stages (ms): recall {}, inspection {}, render {}; mean context tokens {:.0}, spans {:.1}. Search: mean {:.0} states matched per query.",
        l.target_p95_ms,
        if l.target_met { "met" } else { "**not met**" },
        ms(l.mean_recall_ms),
        ms(l.mean_inspect_ms),
        ms(l.mean_render_ms),
        l.mean_context_tokens,
        l.mean_spans,
        l.mean_search_states_matched
    );
    out
}

/// Appends the section to `summary.md` and writes `inspect.json`.
pub fn write(dir: &Path, l: &InspectLatency) -> anyhow::Result<()> {
    std::fs::write(dir.join("inspect.json"), serde_json::to_string_pretty(l)?)?;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("summary.md"))?;
    f.write_all(render(l).as_bytes())?;
    eprintln!(
        "recall + inspection: p50 {} ms, p95 {} ms (target < {:.0} ms: {}); search p95 {} ms",
        ms(l.inspect_wall_ms.p50),
        ms(l.inspect_wall_ms.p95),
        l.target_p95_ms,
        if l.target_met { "met" } else { "not met" },
        ms(l.search_wall_ms.p95)
    );
    Ok(())
}
