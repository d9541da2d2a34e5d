//! Derivation of memory units from an agent trajectory, in three pools, each unit citing
//! the trajectory and its states:
//! - `slice` per state: where the agent was, what it thought and did, and the part of the
//!   page that matters (what changed since the last state, the element acted on, errors);
//! - `event` per step: what the action changed (URL, elements that appeared or
//!   disappeared, values, error messages);
//! - `note` per trajectory: the procedure of a successful run (its steps), or the gotcha
//!   of a failed one (where it went wrong and what the page said).
//!
//! Pure and deterministic like `derive.rs`: ids come from positions
//! (`slice:<trajectory>:<state>`), so inserting a trajectory twice changes nothing.
use cairn_core::{AgentState, Provenance, SpaceId, Timestamp, TrajectoryInput, Unit, UnitKind};
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Observation lines kept in a slice.
const SLICE_LINES: usize = 12;
/// Lines listed as appeared / disappeared in an event.
const EVENT_LINES: usize = 6;
/// Characters of embedded text (the model reads ~256 tokens).
const EMBED_CHARS: usize = 700;
/// Salient observation lines in a slice's vector. Embedding is the cost of an insert
/// (the model's time grows with the tokens it reads), and accessibility-tree lines are
/// token-dense; the slice's vector carries where the agent was and what it meant to do,
/// plus the few lines that matter most (errors, the element acted on). All of the
/// slice's lines stay in its text, so the lexical index still finds them.
const EMBED_LINES: usize = 3;
/// Characters of a slice's or an event's vector text (about 100 tokens): there are
/// two of them per state, so they are most of what an insert embeds.
const STEP_EMBED_CHARS: usize = 320;

static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(error|invalid|failed|failure|not found|required|denied|unable|cannot|can't|could not|warning|already exists|out of stock|expired|forbidden|not allowed|incorrect|must be|exceeds?)\b")
        .expect("valid regex")
});
/// An element id an action refers to, as in `click [42]` or `type [17] "x"`.
static ELEMENT_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[(\d+)\]").expect("valid regex"));

fn lines(obs: Option<&String>) -> Vec<&str> {
    obs.map(|o| o.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
        .unwrap_or_default()
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", cairn_core::text::prefix(s, max))
}

/// The lines of a state's observation that matter: error messages, the element the
/// action names, what is new since the previous state, then the top of the page.
fn salient_lines<'a>(state: &'a AgentState, previous: Option<&'a AgentState>) -> Vec<&'a str> {
    let now = lines(state.observation.as_ref());
    let before: HashSet<&str> = previous
        .map(|p| lines(p.observation.as_ref()).into_iter().collect())
        .unwrap_or_default();
    let target: Vec<String> = state
        .action
        .as_deref()
        .map(|a| {
            ELEMENT_REF
                .captures_iter(a)
                .map(|c| format!("[{}]", &c[1]))
                .collect()
        })
        .unwrap_or_default();
    let mut out: Vec<&str> = Vec::new();
    let push = |l: &'a str, out: &mut Vec<&'a str>| {
        if out.len() < SLICE_LINES && !out.contains(&l) {
            out.push(l);
        }
    };
    // An error that was already on the previous page (a site-wide banner, say) is not
    // what this state is about: new errors come first, standing ones after the news.
    let is_error = |l: &&&str| ERROR_LINE.is_match(l);
    for l in now.iter().filter(|l| !before.contains(*l)).filter(is_error) {
        push(l, &mut out);
    }
    for l in now
        .iter()
        .filter(|l| target.iter().any(|t| l.contains(t.as_str())))
    {
        push(l, &mut out);
    }
    for l in now.iter().filter(|l| !before.contains(*l)) {
        push(l, &mut out);
    }
    for l in now.iter().filter(is_error) {
        push(l, &mut out);
    }
    for l in &now {
        push(l, &mut out);
    }
    out
}

fn provenance(t: &TrajectoryInput, states: [u32; 2]) -> Provenance {
    Provenance {
        trajectory_id: Some(t.id.clone()),
        states: Some(states),
        group: t.domain.clone(),
        speakers: vec!["agent".to_string()],
        first_position: states[0],
        ..Default::default()
    }
}

fn unit(
    space: &SpaceId,
    t: &TrajectoryInput,
    recorded_at: Timestamp,
    (id, kind, states): (String, UnitKind, [u32; 2]),
    (text, key, embed): (String, String, Option<String>),
) -> Unit {
    Unit {
        id,
        space: space.clone(),
        kind,
        text,
        key,
        embed_text: embed.map(|e| clip(&e, EMBED_CHARS)),
        provenance: provenance(t, states),
        part_of: None,
        occurred_at: t.occurred_at,
        recorded_at,
        detail: None,
    }
}

/// A URL without its scheme and host: every page of a site shares them, so in a vector
/// they spend tokens without telling pages apart.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) if url.contains("://") => &rest[i..],
        _ => url,
    }
}

fn or_dash(s: Option<&String>) -> &str {
    s.map(String::as_str).unwrap_or("-")
}

/// Every unit of a trajectory: slices, events, and its note.
pub fn derive_trajectory_units(
    space: &SpaceId,
    t: &TrajectoryInput,
    recorded_at: Timestamp,
) -> Vec<Unit> {
    let n = t.states.len();
    let mut units = Vec::with_capacity(2 * n + 1);
    for (i, s) in t.states.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &t.states[p]);
        let salient = salient_lines(s, prev);
        let seen = salient.join("\n");
        let mut text = format!(
            "Goal: {}\nState {}/{} at {}\n",
            t.goal,
            i + 1,
            n,
            or_dash(s.url.as_ref())
        );
        if let Some(a) = prev.and_then(|p| p.action.as_ref()) {
            text += &format!("After: {a}\n");
        }
        if let Some(th) = &s.thought {
            text += &format!("Thought: {th}\n");
        }
        if let Some(a) = &s.action {
            text += &format!("Action: {a}\n");
        }
        if !seen.is_empty() {
            text += &format!("Page:\n{seen}\n");
        }
        if let Some(shot) = &s.screenshot {
            text += &format!("Screenshot: {shot}\n");
        }
        let key = [
            Some(&t.goal),
            s.url.as_ref(),
            s.thought.as_ref(),
            s.action.as_ref(),
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
        let place = s.url.as_deref().map(url_path).unwrap_or("-");
        // The goal is left out: the trajectory's note embeds it, and in every slice it
        // would make thirty near-copies of one vector outrank the note on "how do I"
        // questions.
        let embed = [
            place,
            or_dash(s.thought.as_ref()),
            or_dash(s.action.as_ref()),
        ]
        .into_iter()
        .chain(salient.iter().copied().take(EMBED_LINES))
        .collect::<Vec<_>>()
        .join("\n");
        let embed = clip(&embed, STEP_EMBED_CHARS);
        units.push(unit(
            space,
            t,
            recorded_at,
            (
                format!("slice:{}:{i}", t.id),
                UnitKind::Slice,
                [i as u32, i as u32 + 1],
            ),
            (text.trim_end().to_string(), key, Some(embed)),
        ));
        if let Some(next) = t.states.get(i + 1) {
            units.push(event_unit(space, t, recorded_at, i, s, next));
        }
    }
    units.push(note_unit(space, t, recorded_at));
    units
}

/// The page lines that appeared and those that disappeared from state `s` to `next`
/// (at most `EVENT_LINES` of each).
fn page_changes<'s>(s: &'s AgentState, next: &'s AgentState) -> (Vec<&'s str>, Vec<&'s str>) {
    let before = lines(s.observation.as_ref());
    let after = lines(next.observation.as_ref());
    let before_set: HashSet<&str> = before.iter().copied().collect();
    let after_set: HashSet<&str> = after.iter().copied().collect();
    let appeared: Vec<&str> = after
        .iter()
        .copied()
        .filter(|l| !before_set.contains(l))
        .take(EVENT_LINES)
        .collect();
    let gone: Vec<&str> = before
        .iter()
        .copied()
        .filter(|l| !after_set.contains(l))
        .take(EVENT_LINES)
        .collect();
    (appeared, gone)
}

/// What step `i` (state `i` to `i + 1`) changed.
fn event_unit(
    space: &SpaceId,
    t: &TrajectoryInput,
    recorded_at: Timestamp,
    i: usize,
    s: &AgentState,
    next: &AgentState,
) -> Unit {
    let (appeared, gone) = page_changes(s, next);
    let errors: Vec<&str> = appeared
        .iter()
        .copied()
        .filter(|l| ERROR_LINE.is_match(l))
        .collect();
    let url_changed = s.url != next.url;
    let action = or_dash(s.action.as_ref());
    let mut text = format!(
        "Step {} -> {} ({}): `{action}` on {}\n",
        i + 1,
        i + 2,
        t.goal,
        or_dash(s.url.as_ref())
    );
    if url_changed {
        text += &format!("URL became {}\n", or_dash(next.url.as_ref()));
    }
    if !errors.is_empty() {
        text += &format!("Error shown: {}\n", errors.join(" | "));
    }
    // The vector reads what the step did and where it led, not the full lists of
    // changed lines (those stay in the text, for the lexical index).
    let vector_text = clip(
        &format!(
            "{text}{}",
            appeared
                .iter()
                .take(2)
                .copied()
                .collect::<Vec<_>>()
                .join("\n")
        ),
        STEP_EMBED_CHARS,
    );
    if !appeared.is_empty() {
        text += &format!("Appeared: {}\n", appeared.join(" | "));
    }
    if !gone.is_empty() {
        text += &format!("Disappeared: {}\n", gone.join(" | "));
    }
    if !url_changed && appeared.is_empty() && gone.is_empty() {
        text += "Nothing visible changed.\n";
    }
    let key = format!("{action}\n{}\n{}", errors.join("\n"), appeared.join("\n"));
    // Only steps that moved somewhere or failed get a vector: most steps are small page
    // updates that the slice of the next state already describes.
    let embed = (url_changed || !errors.is_empty()).then_some(vector_text);
    unit(
        space,
        t,
        recorded_at,
        (
            format!("event:{}:{i}", t.id),
            UnitKind::Event,
            [i as u32, i as u32 + 2],
        ),
        (text.trim_end().to_string(), key, embed),
    )
}

/// The procedure of a run that succeeded (or whose outcome is unknown), or the gotcha of
/// one that failed.
fn note_unit(space: &SpaceId, t: &TrajectoryInput, recorded_at: Timestamp) -> Unit {
    let n = t.states.len();
    let mut steps: Vec<String> = Vec::new();
    for s in &t.states {
        let Some(a) = &s.action else { continue };
        let line = format!("{a} (on {})", or_dash(s.url.as_ref()));
        if steps.last() != Some(&line) {
            steps.push(line);
        }
    }
    let numbered = steps
        .iter()
        .enumerate()
        .map(|(k, s)| format!("{}. {s}", k + 1))
        .collect::<Vec<_>>()
        .join("\n");
    let start = or_dash(t.start_url.as_ref());
    let (text, states) = match t.succeeded() {
        Some(false) => gotcha(t, start, &numbered),
        outcome => {
            let label = if outcome == Some(true) {
                "Procedure (succeeded)"
            } else {
                "Procedure (outcome unknown)"
            };
            (
                format!(
                    "{label}: {}\nFrom {start}, {} steps:\n{numbered}",
                    t.goal,
                    steps.len()
                ),
                [0, n as u32],
            )
        }
    };
    let key = format!("{}\n{}", t.goal, steps.join("\n"));
    unit(
        space,
        t,
        recorded_at,
        (format!("note:{}", t.id), UnitKind::Note, states),
        (text.clone(), key, Some(text)),
    )
}

/// The gotcha of a failed run (`numbered`: its steps tried, from `start`), and the
/// states it covers.
fn gotcha(t: &TrajectoryInput, start: &str, numbered: &str) -> (String, [u32; 2]) {
    let n = t.states.len();
    // Where it went wrong: the first state whose page shows an error, else the
    // last state.
    let k = t
        .states
        .iter()
        .position(|s| {
            lines(s.observation.as_ref())
                .iter()
                .any(|l| ERROR_LINE.is_match(l))
        })
        .unwrap_or(n - 1);
    let s = &t.states[k];
    let said: Vec<&str> = lines(s.observation.as_ref())
        .into_iter()
        .filter(|l| ERROR_LINE.is_match(l))
        .take(3)
        .collect();
    let before = k.checked_sub(1).and_then(|p| t.states[p].action.as_ref());
    let mut text = format!(
        "Gotcha (failed run): {}\nWent wrong at state {}/{n} on {}",
        t.goal,
        k + 1,
        or_dash(s.url.as_ref())
    );
    if let Some(a) = before {
        text += &format!(" after `{a}`");
    }
    text += "\n";
    if !said.is_empty() {
        text += &format!("The page said: {}\n", said.join(" | "));
    }
    if let Some(th) = s.thought.as_ref().or(t.states[n - 1].thought.as_ref()) {
        text += &format!("Agent thought: {th}\n");
    }
    text += &format!("Steps tried from {start}:\n{numbered}");
    (text, [k.saturating_sub(1) as u32, k as u32 + 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trajectory(outcome: serde_json::Value) -> TrajectoryInput {
        serde_json::from_value(json!({
            "id": "t1", "domain": "shop", "goal": "Add a coupon SAVE10",
            "start_url": "http://shop/admin", "outcome": outcome,
            "states": [
                {"url": "http://shop/admin", "action": "click [5]", "thought": "open marketing",
                 "accessibility_tree": "[1] heading 'Dashboard'\n[5] link 'Marketing'"},
                {"url": "http://shop/admin/coupons", "action": "type [9] \"SAVE10\"",
                 "accessibility_tree": "[1] heading 'Coupons'\n[9] textbox 'Code'\n[10] button 'Save'"},
                {"url": "http://shop/admin/coupons", "action": "click [10]", "thought": "save it",
                 "accessibility_tree": "[1] heading 'Coupons'\n[9] textbox 'Code' value 'SAVE10'\n[10] button 'Save'",
                 "screenshot": "shots/2.png"},
                {"url": "http://shop/admin/coupons", "thought": "check",
                 "accessibility_tree": "[1] heading 'Coupons'\n[11] alert 'Error: a coupon with this code already exists'"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn pools_cite_their_states() {
        let space = SpaceId::new("t").unwrap();
        let units =
            derive_trajectory_units(&space, &trajectory(json!("failure")), chrono::Utc::now());
        let slices: Vec<_> = units.iter().filter(|u| u.kind == UnitKind::Slice).collect();
        let events: Vec<_> = units.iter().filter(|u| u.kind == UnitKind::Event).collect();
        assert_eq!((slices.len(), events.len()), (4, 3));
        assert_eq!(slices[2].id, "slice:t1:2");
        assert_eq!(slices[2].provenance.states, Some([2, 3]));
        assert_eq!(slices[2].provenance.trajectory_id.as_deref(), Some("t1"));
        assert!(slices[2].text.contains("After: type [9] \"SAVE10\""));
        assert!(slices[2].text.contains("Screenshot: shots/2.png"));
        assert!(
            slices[2].text.contains("[10] button 'Save'"),
            "the element acted on"
        );
        let e = &events[2];
        assert_eq!(e.provenance.states, Some([2, 4]));
        assert!(
            e.text.contains("Error shown: [11] alert 'Error: a coupon"),
            "{}",
            e.text
        );
        assert!(e.embed_text.is_some(), "failed steps are embedded");
        assert!(events[1].embed_text.is_none(), "a small page update is not");
        assert!(events[0]
            .text
            .contains("URL became http://shop/admin/coupons"));
        let note = units.iter().find(|u| u.kind == UnitKind::Note).unwrap();
        assert!(note
            .text
            .starts_with("Gotcha (failed run): Add a coupon SAVE10"));
        assert!(note.text.contains("after `click [10]`"), "{}", note.text);
        assert!(note.text.contains("already exists"));
        assert_eq!(note.provenance.states, Some([2, 4]));
        let again =
            derive_trajectory_units(&space, &trajectory(json!("failure")), units[0].recorded_at);
        assert_eq!(units, again, "deterministic");
    }

    #[test]
    fn a_successful_run_gives_its_procedure() {
        let space = SpaceId::new("t").unwrap();
        let units = derive_trajectory_units(&space, &trajectory(json!(true)), chrono::Utc::now());
        let note = units.iter().find(|u| u.kind == UnitKind::Note).unwrap();
        assert!(note
            .text
            .starts_with("Procedure (succeeded): Add a coupon SAVE10"));
        assert!(note.text.contains("1. click [5] (on http://shop/admin)"));
        assert!(note.text.contains("3. click [10]"));
        assert_eq!(note.provenance.states, Some([0, 4]));
    }
}
