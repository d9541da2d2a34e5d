//! Cost scaling (`cairn reliability scaling`): does any request's cost grow faster than
//! its input? For each dimension a request can depend on (speakers, names, sessions,
//! messages per session, versions of one subject, subjects, trajectories, states per
//! trajectory, spaces, filter conditions), one space is grown by doubling N, and at each N
//! every route of the HTTP API and every MCP tool is sent once per repetition against it
//! and the CPU time the server spent on it is measured: the sum over the server
//! process's threads of their time on a CPU (`/proc/<pid>/task/*/schedstat`), not wall
//! time, so other load on the machine does not count.
//!
//! Each measurement is cold: right before it, a session written to the measured space and
//! removed again moves that space's generation (so no cache of derived state, such as an
//! entity graph or a fact index, answers for free) and a recall in a scratch space commits
//! the text index; then the probe waits until the server is idle (see [`settle`]), so the
//! background work those set off (the text index's segment merges) is not counted against
//! it. A write probe's own
//! deferred text commit (`text_commit_ms` later) falls after its window, as before the
//! wait: the commit's cost is measured by the write benchmarks, not here. The repetitions
//! go round the probes of one size, and the median of a probe's repetitions counts. A row's growth per doubling
//! is 2 to the slope of log(CPU) over log(N), fitted over the sizes whose CPU is above the
//! floor; a row whose CPU stays below the floor at every N is reported as flat.
//!
//! Every route of the server's `/v1/openapi.json` must have a probe here: a route added
//! without one is reported (`unprobed_routes`), so the table cannot silently miss it.
mod dimensions;
mod options;
mod probes;

pub use options::ScalingOptions;

use crate::fuzz::Rng;
use crate::serve::{encode, Cairn, Client, Server};
use anyhow::{bail, Context, Result};
use dimensions::{baseline, filter_of, Dimension, DIMENSIONS};
use probes::{answered, delete, ok, route_probes, send, two_messages, Ctx, Probe};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeSet;

/// Rows whose CPU at every N is below this many milliseconds are flat.
pub const FLOOR_MS: f64 = 5.0;
/// Growth per doubling above this is superlinear (2.0 is linear).
pub const LINEAR: f64 = 2.2;

/// One probe of one dimension: its CPU at each N.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub dimension: String,
    /// `METHOD /route/{template}`, or `mcp <tool>`.
    pub probe: String,
    pub sizes: Vec<usize>,
    /// Median CPU milliseconds at each size.
    pub cpu_ms: Vec<f64>,
    /// CPU growth per doubling of N (`None`: below the floor at every size).
    pub growth: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ScalingReport {
    pub base: usize,
    pub doublings: usize,
    pub reps: usize,
    pub rows: Vec<Row>,
    /// Rows growing faster than [`LINEAR`] per doubling.
    pub superlinear: Vec<String>,
    /// Routes of the served spec that no probe covers.
    pub unprobed_routes: Vec<String>,
    /// Probes that did not answer 2xx (each must).
    pub errors: Vec<String>,
    /// Seconds spent, seeding included.
    pub seconds: f64,
}

impl ScalingReport {
    pub fn passed(&self) -> bool {
        self.superlinear.is_empty() && self.unprobed_routes.is_empty() && self.errors.is_empty()
    }

    /// The report as markdown: the rows above the floor, then how many were flat.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| dimension | probe | CPU ms at each N | growth per doubling |\n|---|---|---|---|\n",
        );
        let mut flat = 0;
        for r in &self.rows {
            let Some(g) = r.growth else {
                flat += 1;
                continue;
            };
            let cells: Vec<String> = r
                .sizes
                .iter()
                .zip(&r.cpu_ms)
                .map(|(n, ms)| format!("{n}: {ms:.1}"))
                .collect();
            let mark = if g > LINEAR { " **superlinear**" } else { "" };
            out += &format!(
                "| {} | `{}` | {} | {g:.2}x{mark} |\n",
                r.dimension,
                r.probe,
                cells.join(", ")
            );
        }
        out += &format!("\n{flat} more rows stayed below {FLOOR_MS} ms of CPU at every N.\n");
        out
    }
}

/// The CPU time, in nanoseconds, the process's threads have spent on a CPU.
fn cpu_ns(pid: u32) -> Result<u64> {
    let mut total = 0;
    let dir = format!("/proc/{pid}/task");
    for task in std::fs::read_dir(&dir).with_context(|| format!("reading {dir}"))? {
        let path = task?.path().join("schedstat");
        // A thread that just exited has no file any more: its time is lost to this sum,
        // which the median over repetitions absorbs.
        if let Ok(text) = std::fs::read_to_string(&path) {
            total += text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(total)
}

/// Waits until the server spends less than a tenth of a core (over 10 ms), at most
/// 10 s. Before a probe, so that background work an earlier request set off (the text
/// index's commit and segment merges, which grow with the index) is not counted
/// against it: that work grows with the index, and before this wait it made routes of
/// a few milliseconds grow 2.2-2.9x per doubling (docs/reliability.md).
fn settle(pid: u32) -> Result<()> {
    const WINDOW: std::time::Duration = std::time::Duration::from_millis(10);
    const IDLE_NS: u64 = 1_000_000;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut last = cpu_ns(pid)?;
    loop {
        std::thread::sleep(WINDOW);
        let now = cpu_ns(pid)?;
        if now.saturating_sub(last) < IDLE_NS || std::time::Instant::now() > deadline {
            return Ok(());
        }
        last = now;
    }
}

/// Every (method, route) the served spec lists, as probes name them.
fn spec_routes(client: &Client) -> Result<BTreeSet<String>> {
    let spec = client
        .get("/v1/openapi.json")
        .map_err(anyhow::Error::msg)?
        .body;
    let mut out = BTreeSet::new();
    for (path, ops) in spec["paths"].as_object().into_iter().flatten() {
        for method in ops.as_object().into_iter().flatten().map(|(m, _)| m) {
            if ["get", "post", "delete", "put", "patch"].contains(&method.as_str()) {
                out.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    Ok(out)
}

/// Median of the values (of an odd count, the middle one).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// 2 to the least-squares slope of log(CPU) over log(N), over the sizes above the floor.
fn growth(sizes: &[usize], cpu_ms: &[f64]) -> Option<f64> {
    let points: Vec<(f64, f64)> = sizes
        .iter()
        .zip(cpu_ms)
        .filter(|(_, &ms)| ms >= FLOOR_MS)
        .map(|(&n, &ms)| ((n as f64).log2(), ms.log2()))
        .collect();
    if points.is_empty() {
        return None;
    }
    if points.len() == 1 {
        return Some(1.0);
    }
    let k = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / k,
        points.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let cov: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let var: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some(2f64.powf(cov / var))
}

/// Makes the next measurement cold: a session written to the measured space and removed
/// again moves that space's generation (caches of derived state are kept per space, so a
/// write anywhere else would leave them warm) and leaves its content as the dimension
/// grew it; a recall commits the text index. None of it is measured.
fn cold(client: &Client, space: &str, k: usize) -> Result<()> {
    let s = format!("/v1/spaces/{}", encode(space));
    let id = format!("scaling-cold-{k}");
    // The same text every time: its vectors are cached, so this embeds nothing.
    ok(
        client.post(
            &format!("{s}/sessions"),
            &two_messages(&id, "Scratch write."),
        ),
        "cold write",
    )?;
    ok(
        send(client, &delete(format!("{s}/sessions/{id}"))),
        "cold removal",
    )?;
    ok(
        client.post(
            "/v1/spaces/scale-scratch/recall",
            &json!({"query": "Scratch write."}),
        ),
        "scratch recall",
    )?;
    Ok(())
}

/// One cold measurement of a probe (see [`cold`] and [`settle`]): the server's CPU
/// milliseconds on it, and what was wrong with its answer, if anything.
fn measure(
    client: &Client,
    pid: u32,
    space: &str,
    p: &Probe,
    k: usize,
) -> Result<(f64, Option<String>)> {
    let mut prepared = None;
    for r in &p.prepare {
        prepared = Some(ok(send(client, r), &format!("preparing {}", p.name))?);
    }
    let req = p.req.with_id(prepared.as_ref());
    cold(client, space, k)?;
    settle(pid)?;
    let before = cpu_ns(pid)?;
    let answer = send(client, &req);
    let spent = cpu_ns(pid)?.saturating_sub(before);
    let wrong = match answer {
        Ok(r) if answered(&r) => None,
        Ok(r) => Some(format!(
            "HTTP {} {}",
            r.status,
            r.text.chars().take(200).collect::<String>()
        )),
        Err(e) => bail!("{}: {e}", p.name),
    };
    Ok((spent as f64 / 1e6, wrong))
}

pub fn run(
    cairn: &Cairn,
    opts: &ScalingOptions,
    mut progress: impl FnMut(&str),
) -> Result<ScalingReport> {
    let t0 = std::time::Instant::now();
    let server = serve_unlimited(cairn)?;
    let client = server.client.clone();
    let mut report = ScalingReport {
        base: opts.base,
        doublings: opts.doublings,
        reps: opts.reps,
        ..Default::default()
    };
    report.unprobed_routes = unprobed_routes(&client)?;
    let mut meter = Meter {
        client: &client,
        pid: server.pid,
        k: 0,
        errors: Vec::new(),
    };
    let mut rng = Rng(opts.seed);
    cold(&client, "scale-scratch", 0)?;
    let chosen = DIMENSIONS
        .iter()
        .filter(|d| opts.only.is_empty() || opts.only.iter().any(|n| n == d.name));
    for dim in chosen {
        let rows = meter.dimension(dim, opts, &mut rng, &mut progress)?;
        for mut row in rows {
            row.growth = growth(&row.sizes, &row.cpu_ms);
            if row.growth.is_some_and(|g| g > LINEAR) {
                report
                    .superlinear
                    .push(format!("{}: {}", row.dimension, row.probe));
            }
            report.rows.push(row);
        }
    }
    report.errors = meter.errors;
    server.stop()?;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// `cairn serve` with its limits off: seeding sends large requests, and every request
/// must run to the end to be measured (the work deadline would cut the very rows this
/// looks for).
fn serve_unlimited(cairn: &Cairn) -> Result<Server> {
    cairn.serve(&[
        "--max-request-ms",
        "0",
        "--max-body-bytes",
        "268435456",
        "--max-request-messages",
        "1000000",
        "--max-batch-sessions",
        "1000000",
    ])
}

/// Routes of the served spec that no probe covers.
fn unprobed_routes(client: &Client) -> Result<Vec<String>> {
    let probed: BTreeSet<String> = route_probes(&Ctx::new("x"), 0)
        .into_iter()
        .map(|p| match p.name.strip_prefix("mcp ") {
            Some(_) => "POST /mcp".to_string(),
            None => p.name.split(" (").next().unwrap_or(&p.name).to_string(),
        })
        .collect();
    Ok(spec_routes(client)?
        .into_iter()
        .filter(|r| !probed.contains(r))
        .collect())
}

/// The server under measurement, the count that makes the ids probes write unique, and
/// the probes that did not answer 2xx.
struct Meter<'a> {
    client: &'a Client,
    pid: u32,
    k: usize,
    errors: Vec<String>,
}

impl Meter<'_> {
    /// One dimension grown through its sizes, every probe measured at each: its rows,
    /// growth not yet fitted.
    fn dimension(
        &mut self,
        dim: &Dimension,
        opts: &ScalingOptions,
        rng: &mut Rng,
        progress: &mut impl FnMut(&str),
    ) -> Result<Vec<Row>> {
        let mut rows: Vec<Row> = Vec::new();
        let mut have = 0;
        let mut ctx = dim.ctx();
        baseline(self.client, dim, &ctx)?;
        for (step, &n) in dim.sizes(opts).iter().enumerate() {
            progress(&format!("{}: growing to {n}", dim.name));
            dim.grow(self.client, &ctx, have, n, rng)?;
            have = n;
            if dim.conditions {
                ctx.filter = filter_of(n);
            }
            progress(&format!("{}: measuring at {n}", dim.name));
            let names: Vec<String> = route_probes(&ctx, 0)
                .into_iter()
                .map(|p| p.name)
                .filter(|p| dim.probes.is_none_or(|only| only.contains(&p.as_str())))
                .collect();
            let samples = self.samples(dim, &ctx, &names, opts.reps, n)?;
            for (i, (name, s)) in names.iter().zip(samples).enumerate() {
                if step == 0 {
                    rows.push(Row {
                        dimension: dim.name.to_string(),
                        probe: name.clone(),
                        sizes: Vec::new(),
                        cpu_ms: Vec::new(),
                        growth: None,
                    });
                }
                if let Some(row) = rows.get_mut(i) {
                    row.sizes.push(n);
                    row.cpu_ms.push(median(s));
                }
            }
        }
        Ok(rows)
    }

    /// The CPU milliseconds of each probe named, `reps` cold measurements each, at size
    /// `n` of the dimension.
    fn samples(
        &mut self,
        dim: &Dimension,
        ctx: &Ctx,
        names: &[String],
        reps: usize,
        n: usize,
    ) -> Result<Vec<Vec<f64>>> {
        // Repetitions go round the probes: a slow spell of the machine lands on one
        // sample of many rows, which their medians drop, rather than on every sample
        // of one row (all of a row's samples in a row moved single rows by 0.3x
        // between runs).
        let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); names.len()];
        for _ in 0..reps.max(1) {
            for (name, s) in names.iter().zip(samples.iter_mut()) {
                self.k += 1;
                let k = self.k;
                let Some(p) = route_probes(ctx, k).into_iter().find(|p| &p.name == name) else {
                    continue;
                };
                let (ms, wrong) = measure(self.client, self.pid, &ctx.space, &p, k)
                    .with_context(|| format!("{} at {n}", dim.name))?;
                if let Some(wrong) = wrong {
                    self.errors
                        .push(format!("{} at {n}, {name}: {wrong}", dim.name));
                }
                s.push(ms);
            }
        }
        Ok(samples)
    }
}

#[cfg(test)]
mod tests {
    use super::dimensions::name;
    use super::*;

    #[test]
    fn growth_is_the_fitted_ratio_per_doubling() {
        let sizes = [100, 200, 400, 800];
        let linear = growth(&sizes, &[10.0, 20.0, 40.0, 80.0]).unwrap();
        assert!((linear - 2.0).abs() < 1e-9, "{linear}");
        let quadratic = growth(&sizes, &[10.0, 40.0, 160.0, 640.0]).unwrap();
        assert!((quadratic - 4.0).abs() < 1e-9, "{quadratic}");
        assert_eq!(growth(&sizes, &[1.0, 1.0, 2.0, 1.0]), None);
        // Points under the floor do not count.
        let g = growth(&sizes, &[1.0, 6.0, 6.0, 6.0]).unwrap();
        assert!((g - 1.0).abs() < 1e-9, "{g}");
    }

    #[test]
    fn every_dimension_and_probe_has_a_name_of_its_own() {
        let names: Vec<&str> = DIMENSIONS.iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "speakers",
                "names",
                "sessions",
                "messages per session",
                "versions of one subject",
                "subjects",
                "trajectories",
                "states per trajectory",
                "spaces",
                "filter conditions"
            ]
        );
        let o = ScalingOptions::default();
        assert_eq!(DIMENSIONS[0].sizes(&o), [250, 500, 1000, 2000]);
        assert_eq!(DIMENSIONS[9].sizes(&o), [15, 30, 60, 120]);
        // A probe is found by its name: two of one name would measure the first twice.
        let probes: Vec<String> = route_probes(&DIMENSIONS[0].ctx(), 0)
            .into_iter()
            .map(|p| p.name)
            .collect();
        let distinct: BTreeSet<&String> = probes.iter().collect();
        assert_eq!(distinct.len(), probes.len(), "{probes:?}");
        for d in DIMENSIONS {
            for p in d.probes.into_iter().flatten() {
                assert!(probes.iter().any(|n| n == p), "{}: {p}", d.name);
            }
        }
    }

    #[test]
    fn names_are_distinct_and_capitalized() {
        let names: BTreeSet<String> = (0..5000).map(name).collect();
        assert_eq!(names.len(), 5000);
        assert!(names
            .iter()
            .all(|n| n.chars().next().unwrap().is_uppercase()));
    }
}
