//! The report of `cairn bench scale`: a table per store and size, recall stages, the
//! latency plot (`latency.svg`) and METHODOLOGY.md.
use super::methodology;
use super::{f3, gib, ms};
use crate::env::shell_join;
use crate::records::scale::ScalePoint;
use crate::run::RunMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleBenchSummary {
    pub meta: RunMeta,
    pub complete: bool,
    pub top_k: usize,
    pub token_budget: usize,
    pub points: Vec<ScalePoint>,
}

/// One line per measured point, for the terminal.
pub fn point_line(p: &ScalePoint) -> String {
    format!(
        "{} {}: {} units in {} s ({} units/s, {} vectors computed); recall p50 {} / p95 {} / \
            p99 {} ms (without embedding p50 {}); needles {}/{}; disk {}, serving RSS {}",
        p.store,
        p.size,
        p.units,
        ingest_figure(p, p.ingest_seconds),
        ingest_figure(p, p.ingest_units_per_second),
        p.vectors_computed,
        ms(p.latency_ms.p50),
        ms(p.latency_ms.p95),
        ms(p.latency_ms.p99),
        ms(p.latency_without_embedding_ms.p50),
        p.needles_found,
        p.needles,
        gib(p.disk_bytes),
        gib(p.serving_rss_bytes),
    )
}

/// An ingest figure of the summary table; "kept" for a space filled by an earlier run.
fn ingest_figure(p: &ScalePoint, v: f64) -> String {
    if p.ingest_skipped {
        "kept".into()
    } else {
        format!("{v:.0}")
    }
}

/// The store, and how its vectors were made when not by the model over the repeating
/// history.
fn store_label(p: &ScalePoint) -> String {
    match p.variant() {
        v if v.is_empty() => p.store.clone(),
        v => format!("{} ({v})", p.store),
    }
}

pub fn render_summary(s: &ScaleBenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Scale: {}\n", s.meta.run_label);
    if !s.complete {
        let _ = writeln!(
            o,
            "**Interrupted: the points below are the ones measured.**\n"
        );
    }
    let _ = writeln!(
        o,
        "| store | units | sessions | ingest s | units/s | vectors computed / cached | disk | \
            first recall ms | p50 ms | p95 ms | p99 ms | p50 w/o embed | p99 w/o embed | needle \
            recall@{} | serving RSS | peak RSS (ingest / serving) |",
        s.top_k
    );
    let _ = writeln!(
        o,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for p in &s.points {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} ({}/{}) \
                | {} | {} / {} |",
            store_label(p),
            p.units,
            p.sessions,
            ingest_figure(p, p.ingest_seconds),
            ingest_figure(p, p.ingest_units_per_second),
            p.vectors_computed,
            p.vectors_cached,
            gib(p.disk_bytes),
            ms(p.first_recall_ms),
            ms(p.latency_ms.p50),
            ms(p.latency_ms.p95),
            ms(p.latency_ms.p99),
            ms(p.latency_without_embedding_ms.p50),
            ms(p.latency_without_embedding_ms.p99),
            f3(p.needle_recall),
            p.needles_found,
            p.needles,
            gib(p.serving_rss_bytes),
            gib(p.ingest_peak_rss_bytes),
            gib(p.serving_peak_rss_bytes),
        );
    }
    let _ = writeln!(o, "\nMean time per recall stage (ms):\n");
    let _ = writeln!(
        o,
        "| store | units | embed | lexical | dense | rank | pack |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|");
    for p in &s.points {
        let st = |k: &str| ms(p.stage_means_ms.get(k).copied().unwrap_or(0.0));
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} |",
            p.store,
            p.units,
            st("embed"),
            st("lexical"),
            st("dense"),
            st("rank"),
            st("pack")
        );
    }
    render_loop(&mut o, &s.points);
    o
}

/// The live loop's table (`--loop N`): p50 milliseconds of each step, the recall right
/// after a write beside the read-only one.
fn render_loop(o: &mut String, points: &[ScalePoint]) {
    let with: Vec<_> = points
        .iter()
        .filter_map(|p| Some((p, p.live_loop.as_ref()?)))
        .collect();
    if with.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nThe live loop, p50 ms over its iterations:\n");
    let _ = writeln!(
        o,
        "| store | units | iterations | recall read-only | append | recall after append | ratio | \
            subjects read-only / after append | profile read-only / after append | forget | \
            recall after forget |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (p, l) in with {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {:.2}x | {} / {} | {} / {} | {} | {} |",
            store_label(p),
            p.units,
            l.iterations,
            ms(l.recall_read_only_ms.p50),
            ms(l.append_ms.p50),
            ms(l.recall_after_append_ms.p50),
            l.after_append_ratio,
            ms(l.subjects_read_only_ms.p50),
            ms(l.subjects_after_append_ms.p50),
            ms(l.profile_read_only_ms.p50),
            ms(l.profile_after_append_ms.p50),
            ms(l.forget_ms.p50),
            ms(l.recall_after_forget_ms.p50),
        );
    }
}

pub fn render_methodology(s: &ScaleBenchSummary) -> String {
    let m = &s.meta;
    let earlier = methodology::bullets(
        m.previous_command_lines
            .iter()
            .map(|c| format!("earlier points measured by: `{}`", shell_join(c))),
    );
    methodology::render(
        methodology::SCALE,
        m,
        &[
            ("dataset_notes_inline", m.dataset_notes.join(" ")),
            (
                "embedding_cache_or_dash",
                m.embedding_cache.clone().unwrap_or_else(|| "-".into()),
            ),
            ("top_k", s.top_k.to_string()),
            ("token_budget", s.token_budget.to_string()),
            ("earlier_points", earlier),
            ("live_loop", live_loop_notes(s)),
        ],
    )
}

/// The methodology's bullet on the live loop, when the run measured it (`--loop N`).
fn live_loop_notes(s: &ScaleBenchSummary) -> String {
    let Some(n) = s.points.iter().find_map(|p| p.live_loop.as_ref()) else {
        return String::new();
    };
    format!(
        "- **Live loop.** After the queries, in the same memory, {} iterations of: a recall \
        read-only (its question asked once before, then another question in between), an \
        append of one exchange (a user's statement about themself that changes a value, and \
        the reply) to a live session (one per ten iterations), the same recall right after \
        it; the fact subjects and the user's profile read-only, then each right after \
        another append; a forget of the first exchange (both messages) and the recall right \
        after it. Every step is the wall time of one library call; p50 over the iterations \
        (nearest rank). The ratio is recall p50 after an append over recall p50 read-only.\n",
        n.iterations
    )
}

/// Latency (p50 and p99, query embedding included) against units, log-log, one line per
/// store and percentile.
pub fn render_plot(points: &[ScalePoint]) -> String {
    let f = Frame::of(points);
    let mut o = axes(&f);
    for (i, (key, pts)) in series_of(points).into_iter().enumerate() {
        draw_series(&mut o, &f, i, key, pts);
    }
    o.push_str("</svg>\n");
    o
}

/// The plot's geometry: the canvas, its margins, and the decades (log10) each axis spans.
#[derive(Clone, Copy)]
struct Frame {
    w: f64,
    h: f64,
    l: f64,
    t: f64,
    pw: f64,
    ph: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn of(points: &[ScalePoint]) -> Self {
        // The legend's column widens for the longer names of points made another way.
        let r = if points.iter().any(|p| !p.variant().is_empty()) {
            360.0
        } else {
            170.0
        };
        let (h, l, t, b) = (440.0, 70.0, 30.0, 60.0);
        let w = l + 480.0 + r;
        let (pw, ph) = (w - l - r, h - t - b);
        let xs: Vec<f64> = points
            .iter()
            .map(|p| (p.units.max(1) as f64).log10())
            .collect();
        let ys: Vec<f64> = points
            .iter()
            .flat_map(|p| [p.latency_ms.p50, p.latency_ms.p99])
            .map(|v| v.max(0.1).log10())
            .collect();
        let (x0, x1) = (
            xs.iter()
                .cloned()
                .fold(f64::INFINITY, f64::min)
                .floor()
                .min(4.0),
            // 1,000,079 units is 10^6.00003: its decade, not the next one.
            (xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max) - 0.01)
                .ceil()
                .max(5.0),
        );
        let (y0, y1) = (
            ys.iter()
                .cloned()
                .fold(f64::INFINITY, f64::min)
                .floor()
                .min(0.0),
            ys.iter()
                .cloned()
                .fold(f64::NEG_INFINITY, f64::max)
                .ceil()
                .max(2.0),
        );
        Self {
            w,
            h,
            l,
            t,
            pw,
            ph,
            x0,
            x1,
            y0,
            y1,
        }
    }

    fn px(&self, x: f64) -> f64 {
        self.l + (x - self.x0) / (self.x1 - self.x0) * self.pw
    }

    fn py(&self, y: f64) -> f64 {
        self.t + self.ph - (y - self.y0) / (self.y1 - self.y0) * self.ph
    }
}

/// The SVG's head: the canvas, the title, a grid line and a label per decade on each axis,
/// and the x axis's name.
fn axes(f: &Frame) -> String {
    let Frame {
        w, h, l, t, pw, ph, ..
    } = *f;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
        font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{w}\" height=\"{h}\" \
        fill=\"white\"/>\n"
    );
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">Recall \
        latency (query embedding included) against space size</text>",
        l + pw / 2.0
    );
    for e in (f.x0 as i32)..=(f.x1 as i32) {
        let x = f.px(e as f64);
        let _ = writeln!(
            o,
            "<line x1=\"{x}\" y1=\"{t}\" x2=\"{x}\" y2=\"{}\" \
            stroke=\"#ddd\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">1e{e}</text>",
            t + ph,
            t + ph + 18.0
        );
    }
    for e in (f.y0 as i32)..=(f.y1 as i32) {
        let y = f.py(e as f64);
        let _ = writeln!(
            o,
            "<line x1=\"{l}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" \
            stroke=\"#ddd\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} ms</text>",
            l + pw,
            l - 6.0,
            y + 4.0,
            10f64.powi(e)
        );
    }
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">units in the space (log)</text>",
        l + pw / 2.0,
        h - 15.0
    );
    o
}

/// One series per (store, way of making the vectors, percentile): log-log points.
type Series<'a> = BTreeMap<(String, String, &'a str), Vec<(f64, f64)>>;

fn series_of(points: &[ScalePoint]) -> Series<'static> {
    let mut series: Series = BTreeMap::new();
    for p in points {
        let x = (p.units.max(1) as f64).log10();
        for (name, v) in [("p50", p.latency_ms.p50), ("p99", p.latency_ms.p99)] {
            series
                .entry((p.store.clone(), p.variant(), name))
                .or_default()
                .push((x, v.max(0.1).log10()));
        }
    }
    series
}

/// The `i`-th series: its line, its points, and its entry in the legend.
fn draw_series(
    o: &mut String,
    f: &Frame,
    i: usize,
    (store, variant, pct): (String, String, &str),
    mut pts: Vec<(f64, f64)>,
) {
    let Frame { l, t, pw, .. } = *f;
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let color = match (store == "embedded", variant.is_empty()) {
        (true, true) => "#1f77b4",
        (false, true) => "#d62728",
        (true, false) => "#2ca02c",
        (false, false) => "#ff7f0e",
    };
    let store = if variant.is_empty() {
        store
    } else {
        format!("{store} ({variant})")
    };
    // A series of one point has no line to show: a larger mark stands out.
    let r = if pts.len() == 1 { 5 } else { 3 };
    let dash = if pct == "p99" {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    };
    let path: Vec<String> = pts
        .iter()
        .map(|(x, y)| format!("{:.1},{:.1}", f.px(*x), f.py(*y)))
        .collect();
    let _ = writeln!(
        o,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
        path.join(" ")
    );
    for (x, y) in &pts {
        let _ = writeln!(
            o,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\" fill=\"{color}\"/>",
            f.px(*x),
            f.py(*y)
        );
    }
    let ly = t + 20.0 + i as f64 * 20.0;
    let _ = writeln!(
        o,
        "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" \
        stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{}\">{store} \
        {pct}</text>",
        l + pw + 15.0,
        l + pw + 45.0,
        l + pw + 52.0,
        ly + 4.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_draws_a_line_per_store_and_percentile() {
        let mut a = ScalePoint::empty("embedded", 10_000, 1);
        a.units = 10_000;
        a.latency_ms.p50 = 8.0;
        a.latency_ms.p99 = 30.0;
        let mut b = a.clone();
        b.units = 100_000;
        let mut c = a.clone();
        c.store = "postgres".into();
        let svg = render_plot(&[a, b.clone(), c]);
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("postgres p99"));
        let mut d = ScalePoint::empty("embedded", 1_000_000, 1);
        d.units = 1_000_000;
        d.embedder = "hashed".into();
        d.distinct_text = true;
        let svg = render_plot(&[b, d]);
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("embedded (hashed embedder, distinct text) p50"));
    }
}
