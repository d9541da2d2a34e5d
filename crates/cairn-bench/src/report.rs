//! Formatting shared by every bench's summary and methodology files (numbers, paths, the
//! machine section), so all runs print them the same way.
use crate::env::shell_join;
use crate::protocol::RunMeta;
use std::fmt::Write;
use std::path::Path;

/// A rate or score, three decimals.
pub(crate) fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// Milliseconds: one decimal below 100, none above.
pub(crate) fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A data file's path as recorded in a run (absolute when it exists).
pub(crate) fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// The "Machine and invocation" section of a METHODOLOGY.md: where, when and how the run
/// was made.
pub(crate) fn machine_section(out: &mut String, m: &RunMeta) {
    let _ = writeln!(out, "\n## Machine and invocation\n");
    let mc = &m.machine;
    let _ = writeln!(
        out,
        "- machine: {} logical CPUs (`{}`), {} memory, {}/{}\n- started {}, finished {}\n- command line: `{}`",
        mc.nproc,
        mc.cpu_model,
        mc.memory_gib.map_or("unknown".into(), |g| format!("{g} GiB")),
        mc.os,
        mc.arch,
        m.started_at.to_rfc3339(),
        m.finished_at.map_or("-".into(), |t| t.to_rfc3339()),
        shell_join(&m.command_line),
    );
}
