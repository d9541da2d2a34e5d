//! Every run's METHODOLOGY.md: one renderer over the templates in `methodology/` (see
//! its README). A template holds the prose; the run supplies the values: those every run
//! records ([`common_values`], from its [`RunMeta`]) and the bench's own.
use crate::env::shell_join;
use crate::run::RunMeta;
use crate::template;
use std::fmt::Write as _;

/// LongMemEval, LoCoMo and FriendsQA (with their protocol below).
pub const RETRIEVAL: &str = include_str!("../../methodology/retrieval.md");
pub const PROTOCOL_LONGMEMEVAL: &str = include_str!("../../methodology/protocol-longmemeval.md");
pub const PROTOCOL_LOCOMO: &str = include_str!("../../methodology/protocol-locomo.md");
pub const PROTOCOL_FRIENDSQA: &str = include_str!("../../methodology/protocol-friendsqa.md");
/// The QA paragraph of runs with `--reader`.
pub const QA_ROWS: &str = include_str!("../../methodology/qa-rows.md");
pub const EVERMEMBENCH: &str = include_str!("../../methodology/evermembench.md");
pub const LME_V2: &str = include_str!("../../methodology/lme-v2.md");
/// The section of `lme-v2` runs with `--inspect-rows`.
pub const LME_V2_INSPECT: &str = include_str!("../../methodology/lme-v2-inspect.md");
pub const SCALE: &str = include_str!("../../methodology/scale.md");
pub const TRAJECTORIES_SCALE: &str = include_str!("../../methodology/trajectories-scale.md");
pub const PERSONAL: &str = include_str!("../../methodology/personal.md");

/// A block of markdown bullets, one per item, each ending with a newline.
pub fn bullets(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let mut out = String::new();
    for i in items {
        let _ = writeln!(out, "- {}", i.as_ref());
    }
    out
}

/// A snippet (a protocol, a paragraph): the file without its final newline, filled.
pub fn snippet(template: &str, values: &[(&str, &str)]) -> String {
    template::fill(template::prompt(template), values)
}

/// What every run records, by placeholder name.
pub fn common_values(m: &RunMeta) -> Vec<(&'static str, String)> {
    let mc = &m.machine;
    let machine = format!(
        "- machine: {} logical CPUs (`{}`), {} memory, {}/{}\n- started {}, finished {}\n- \
            command line: `{}`\n",
        mc.nproc,
        mc.cpu_model,
        mc.memory_gib
            .map_or("unknown".into(), |g| format!("{g} GiB")),
        mc.os,
        mc.arch,
        m.started_at.to_rfc3339(),
        m.finished_at.map_or("-".into(), |t| t.to_rfc3339()),
        shell_join(&m.command_line),
    );
    let config_rows = bullets(m.configs.iter().map(|c| {
        format!(
            "`{}`: `{}`",
            c.name,
            serde_json::to_string(&c.options).unwrap_or_default()
        )
    }));
    let resumed = bullets(
        m.previous_command_lines
            .iter()
            .map(|c| format!("resumed from an earlier invocation: `{}`", shell_join(c))),
    );
    vec![
        ("run_label", m.run_label.clone()),
        ("dataset", m.dataset.clone()),
        ("data_path", m.data_path.clone()),
        ("data_sha256", m.data_sha256.clone()),
        ("questions_in_file", m.questions_in_file.to_string()),
        ("questions_selected", m.questions_selected.to_string()),
        ("limit", m.limit.map_or("none".into(), |l| l.to_string())),
        (
            "questions_filter",
            if m.questions_filter.is_empty() {
                "none".into()
            } else {
                m.questions_filter.join(",")
            },
        ),
        ("cairn_version", m.cairn_version.clone()),
        ("git_sha", m.git_sha.clone()),
        ("git_sha_source", m.git_sha_source.clone()),
        ("build_time", m.build_time.clone()),
        ("embedding_model", m.embedding_model.clone()),
        ("embedding_dim", m.embedding_dim.to_string()),
        (
            "embedding_cache",
            m.embedding_cache
                .as_deref()
                .map_or("the data directory's own".into(), |c| format!("`{c}`")),
        ),
        (
            "memory_settings",
            serde_json::to_string(&m.memory_settings).unwrap_or_default(),
        ),
        ("as_of_description", m.as_of_description.clone()),
        ("config_rows", config_rows),
        ("dataset_notes", bullets(&m.dataset_notes)),
        ("limitations", bullets(&m.limitations)),
        ("machine", machine),
        ("resumed", resumed),
        (
            "percentile_definition",
            cairn_load::stats::DEFINITION.to_string(),
        ),
        ("nproc", mc.nproc.to_string()),
        ("cpu_model", mc.cpu_model.clone()),
        ("command_line", shell_join(&m.command_line)),
        ("started_at", m.started_at.to_rfc3339()),
        (
            "finished_at",
            m.finished_at.map_or("-".into(), |t| t.to_rfc3339()),
        ),
    ]
}

/// A METHODOLOGY.md page: `template` filled with the bench's `values` (first) and what
/// every run records.
pub fn render(template: &str, meta: &RunMeta, values: &[(&str, String)]) -> String {
    let common = common_values(meta);
    let all: Vec<(&str, &str)> = values
        .iter()
        .chain(common.iter())
        .map(|(k, v)| (*k, v.as_str()))
        .collect();
    template::page(template, &all)
}

/// The page of a bench that does not resume (EverMemBench, LongMemEval-V2): the run's
/// values, the questions done, and whether it was interrupted.
pub fn render_single_pass(template: &str, meta: &RunMeta, done: usize, complete: bool) -> String {
    let incomplete = if complete {
        ""
    } else {
        " — **the run is incomplete** (interrupted)"
    };
    render(
        template,
        meta,
        &[
            ("questions_done", done.to_string()),
            ("incomplete", incomplete.into()),
            ("load_seconds", format!("{:.2}", meta.load_seconds)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names each page is rendered with by its bench, beyond [`common_values`].
    const PAGES: &[(&str, &str, &[&str])] = &[
        (
            "retrieval",
            RETRIEVAL,
            &[
                "per_conversation",
                "questions_done",
                "incomplete",
                "load_seconds",
                "row_lines",
                "api",
                "qa_rows",
                "protocol",
                "ingest_call",
            ],
        ),
        (
            "evermembench",
            EVERMEMBENCH,
            &["questions_done", "incomplete", "load_seconds"],
        ),
        (
            "lme-v2",
            LME_V2,
            &["questions_done", "incomplete", "load_seconds"],
        ),
        (
            "lme-v2-inspect",
            LME_V2_INSPECT,
            &[
                "agent_model",
                "agent_max_steps",
                "agent_time_budget_ms",
                "agent_prompt_chars",
                "evidence_states",
            ],
        ),
        (
            "scale",
            SCALE,
            &[
                "dataset_notes_inline",
                "embedding_cache_or_dash",
                "top_k",
                "token_budget",
                "earlier_points",
                "live_loop",
            ],
        ),
        (
            "trajectories-scale",
            TRAJECTORIES_SCALE,
            &[
                "sections",
                "embedding_cache_or_own",
                "queries",
                "recall_options",
                "target_insert_seconds",
                "target_query_p95_ms",
                "memory_or_unknown",
            ],
        ),
        (
            "qa-rows",
            QA_ROWS,
            &[
                "reader",
                "reader_max_tokens",
                "judge",
                "judge_is_reader",
                "judge_style",
            ],
        ),
        ("protocol-longmemeval", PROTOCOL_LONGMEMEVAL, &[]),
        ("protocol-locomo", PROTOCOL_LOCOMO, &[]),
        ("protocol-friendsqa", PROTOCOL_FRIENDSQA, &[]),
    ];

    #[test]
    fn every_placeholder_of_every_template_has_a_value() {
        let meta_names: Vec<&str> = {
            let v = common_values(&sample_meta());
            v.iter().map(|(k, _)| *k).collect()
        };
        for (page, text, own) in PAGES {
            for name in template::placeholders(text) {
                assert!(
                    own.contains(&name) || meta_names.contains(&name),
                    "methodology/{page}: no value for {{{{{name}}}}}"
                );
            }
        }
    }

    #[test]
    fn a_page_lists_its_blocks_and_ends_with_one_newline() {
        let mut m = sample_meta();
        m.limitations = vec!["first".into(), "second".into()];
        let page = render(EVERMEMBENCH, &m, &[("questions_done", "3".into())]);
        assert!(page.contains("## Known limitations\n\n- first\n- second\n\n## Machine"));
        assert!(page.ends_with("`cairn bench`\n"), "{page}");
        assert!(
            page.contains("{{incomplete}}"),
            "a name without a value stays visible"
        );
    }

    fn sample_meta() -> RunMeta {
        serde_json::from_value(serde_json::json!({
            "dataset": "d", "data_path": "p", "data_sha256": "s", "run_label": "l",
            "run_dir": "r", "started_at": "2026-12-01T00:00:00Z", "command_line": ["cairn", "bench"],
            "cairn_version": "0", "git_sha": "g", "git_sha_source": "b", "build_time": "t",
            "embedding_model": "m", "embedding_dim": 4, "embedding_cache": null,
            "machine": {"nproc": 2, "cpu_model": "c", "memory_gib": null, "os": "linux", "arch": "x"},
            "configs": [], "as_of_policy": "none", "as_of_description": "as_of = none",
            "limit": null, "questions_filter": [], "questions_in_file": 3,
            "questions_selected": 3, "keep_data": false, "load_seconds": 0.5,
            "dataset_notes": [], "limitations": []
        }))
        .expect("a RunMeta")
    }
}
