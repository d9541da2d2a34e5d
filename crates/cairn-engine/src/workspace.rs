//! What a trajectory workspace on disk holds, as text: each trajectory as JSON, the two
//! summaries (concise and full) and the workflow document. The helper script
//! (`scripts/inspect`) reaches the inspection verbs through whatever its caller is (the
//! CLI writes one calling the `cairn` binary): the caller gives it and its usage lines,
//! which the workflow document quotes. Writing the files (incrementally) is the `cairn`
//! crate's job; this module only decides their content.
use crate::inspect::{concise_entry, outcome_text, overview};
use cairn_core::inspect::{one_line, ACTION_CHARS, URL_CHARS};
use cairn_core::TrajectoryRecord;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// What a folder name keeps as it is: letters, digits, `-`, `_`, `.`.
const NOT_PLAIN: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// The name of a trajectory's folder: the id itself when it is a plain file name, else
/// the id with every other character percent-encoded (ids may hold `/`), a leading `.`
/// included (it would hide the folder, and `..` names another).
pub fn dir_name(id: &str) -> String {
    let name = utf8_percent_encode(id, NOT_PLAIN).to_string();
    match name.strip_prefix('.') {
        Some(rest) => format!("%2E{rest}"),
        None => name,
    }
}

/// SHA-256 of a text, as hex.
pub fn content_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `trajectory.json`: the trajectory as stored, each state with its `state_index`, and
/// `screenshot_file` where a screenshot was copied into the folder.
pub fn trajectory_json(r: &TrajectoryRecord, screenshot_files: &[Option<String>]) -> Value {
    let t = &r.trajectory;
    let states: Vec<Value> = t
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("state_index".into(), json!(i));
                if let Some(Some(f)) = screenshot_files.get(i) {
                    m.insert("screenshot_file".into(), json!(f));
                }
            }
            v
        })
        .collect();
    json!({
        "id": t.id,
        "domain": t.domain,
        "goal": t.goal,
        "start_url": t.start_url,
        "outcome": t.outcome,
        "succeeded": t.succeeded(),
        "occurred_at": t.occurred_at,
        "recorded_at": r.recorded_at,
        "metadata": t.metadata,
        "states": states,
    })
}

fn cell(s: &str) -> String {
    one_line(s, 300).replace('|', "\\|")
}

/// Sorted by start URL, then goal: runs on the same surface sit together.
fn sorted(records: &[TrajectoryRecord]) -> Vec<&TrajectoryRecord> {
    let mut v: Vec<&TrajectoryRecord> = records.iter().collect();
    let key = |r: &TrajectoryRecord| {
        let t = &r.trajectory;
        (
            t.start_url
                .clone()
                .or_else(|| t.states.iter().find_map(|s| s.url.clone()))
                .unwrap_or_default()
                .to_lowercase(),
            t.goal.to_lowercase(),
            t.id.clone(),
        )
    };
    v.sort_by_key(|r| key(r));
    v
}

/// `TRAJECTORY_SUMMARY_CONCISE.md`: one table row per trajectory.
pub fn concise_summary(records: &[TrajectoryRecord]) -> String {
    let mut out = format!(
        "# Trajectories (concise)\n\n{} trajectories, sorted by start URL so runs on the same pages sit together. Details per state: TRAJECTORY_SUMMARY_FULL.md, or `scripts/inspect ID`.\n\n| # | Trajectory ID | Goal | Outcome | States | Start URL |\n|---:|---|---|---|---:|---|\n",
        records.len()
    );
    for (i, r) in sorted(records).into_iter().enumerate() {
        let e = concise_entry(&r.trajectory.summary(r.recorded_at));
        out += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            cell(&e.id),
            cell(&e.goal),
            cell(&e.outcome),
            e.states,
            cell(e.start_url.as_deref().unwrap_or("-")),
        );
    }
    out
}

/// `TRAJECTORY_SUMMARY_FULL.md`: per trajectory its header and every state's URL,
/// title, thought and action.
pub fn full_summary(records: &[TrajectoryRecord]) -> String {
    let mut out = format!(
        "# Trajectories (full)\n\n{} trajectories, sorted by start URL. Each lists its states: index, page title, URL, the agent's thought and its action (with the element acted on). Open one state with `scripts/inspect ID --state N`.\n",
        records.len()
    );
    for (i, r) in sorted(records).into_iter().enumerate() {
        let o = overview(&r.trajectory);
        out += &format!(
            "\n## {}. {}\n\n- Goal: {}\n- Start URL: {}\n- Outcome: {}\n- States: {}\n\n",
            i + 1,
            o.id,
            one_line(&o.goal, 600),
            o.start_url.as_deref().unwrap_or("-"),
            outcome_text(&r.trajectory.outcome),
            o.states
        );
        for s in &o.steps {
            out += &format!(
                "{}. [{}] {} | thought: {} | action: {}\n",
                s.state,
                s.title.as_deref().unwrap_or("-"),
                one_line(s.url.as_deref().unwrap_or("-"), URL_CHARS),
                one_line(s.thought.as_deref().unwrap_or("-"), 200),
                one_line(s.action.as_deref().unwrap_or("-"), ACTION_CHARS),
            );
        }
        if let Some(t) = &o.truncated {
            out += &format!("{t}\n");
        }
    }
    out
}

/// The workflow document of a workspace; `helper_usage`: the usage lines of
/// `scripts/inspect` (indented four spaces), which must accept `ID` (a summary) and
/// `ID --state N` (one state), as the summaries say.
pub fn workflow(space: &str, trajectories: usize, helper_usage: &str) -> String {
    format!(
        r###"# Working in this trajectory memory

This folder holds the {trajectories} stored runs of a web agent from the Cairn space `{space}`.
Your job: find the evidence for a question, fast, and hand over a short note and the
states that prove it. Every extra step costs time, so follow the steps below and do not
explore beyond them.

## What is here

- `trajectories/TRAJECTORY_SUMMARY_CONCISE.md`: one row per run (id, goal, outcome,
  number of states, start URL). Read this first.
- `trajectories/TRAJECTORY_SUMMARY_FULL.md`: per run, every state's index, page title,
  URL, thought and action (the action names the element it acted on).
- `trajectories/<id>/trajectory.json`: one run in full (`states[i]` has `state_index`,
  `url`, `thought`, `action`, `observation` = the page as an accessibility tree, and
  `screenshot`). Large; prefer the helper.
- `trajectories/<id>/screenshots/`: the run's screenshots, when they were available.
- `scripts/inspect`: the helper, which asks Cairn directly (same answers as its MCP
  tools and HTTP API, sized for your context; a cut says how to see the rest).

## The helper

{helper_usage}

## Steps

1. Triage the question before opening anything. A lookup wants one state whose page
   shows the field, value or button asked about. A comparison wants one state per side.
   A procedure wants the steps of one kind of task, from a run that did that task: do not
   borrow a step from a different workflow because it looks alike. An error or gotcha
   wants the state where the page said what went wrong.
2. Shortlist two or three runs from the concise summary (goal, start URL, outcome), then
   check them in the full summary. Prefer runs on the same page and workflow over merely
   related ones.
3. Inspect only the shortlisted runs with the helper: `--match` or `--words` to find the
   state, `--state` or `--span` to read it. Do not grep the raw JSON files: it is slow and
   floods your context.
4. Stop as soon as a state shows the answer. If the pages contradict the question (a
   feature, step or value that does not exist), say so: that is the answer, and the
   reader should decline. If the evidence is missing or unclear, keep that uncertainty;
   do not fill it in from nearby rows, similar buttons or similar runs.

## The answer

Write `memory_module_output.json`:

    {{"memory_markdown": "## Support Analysis\n...\n\n## Relevant Procedure and Hint Notes\n...",
      "trajectory_spans": [{{"trajectory_id": "...", "start_state_index": 6, "end_state_index": 8}}]}}

- `memory_markdown`: where the evidence is (and whether the question's premise holds), then
  the relevant procedure or hints, briefly. No page dumps: the spans carry the pages.
- `trajectory_spans`: most important first; indices start at 0 and include both ends; a
  span of one to three states usually proves a point; at most 20 states in all.
- Cairn renders the note and spans into the reader's context within a token budget
  (its `context` verb).
"###
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_never_climb_and_the_workflow_quotes_the_helper() {
        assert_eq!(dir_name("traj-add-apron"), "traj-add-apron");
        assert_eq!(dir_name("a/b c"), "a%2Fb%20c");
        assert_eq!(dir_name(".hidden"), "%2Ehidden");
        let doc = workflow("agent", 3, "    scripts/inspect ID --state 7   one state");
        assert!(doc.contains("space `agent`"), "{doc}");
        assert!(
            doc.contains(
                "## The helper\n\n    scripts/inspect ID --state 7   one state\n\n## Steps"
            ),
            "{doc}"
        );
    }
}
