//! Human-readable output of the commands (`--json` prints the library's types instead).
use cairn::{
    EntityDetail, EntitySummary, FactHistory, Recall, SpaceStats, SpeakerProfile, Timestamp,
};

/// Writes to stdout; a closed stdout ends the process with status 0 (the reader has
/// what it wanted), any other write error with status 1.
pub fn out(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        failed(e);
    }
}

/// Stdout as a writer for libraries that print (`cairn bench`), with [`out`]'s ending.
pub struct Stdout;

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::io::stdout().lock().write(buf).or_else(|e| failed(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().lock().flush().or_else(|e| failed(e))
    }
}

/// Ends the process after a failed write to stdout (status 0 when it was closed).
fn failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to stdout: {e}");
    std::process::exit(1);
}

pub fn json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn day(t: Option<Timestamp>, format: &str) -> String {
    t.map_or_else(|| "-".to_string(), |t| t.format(format).to_string())
}

pub fn recall(r: &Recall) {
    if r.no_relevant_memory {
        outln!("no relevant memory (nothing passed --min-relevance)");
        if !r.card.is_empty() {
            outln!(
                "\n--- context ({} tokens) ---\n{}",
                r.context_tokens,
                r.context
            );
        }
        return;
    }
    for (i, h) in r.hits.iter().enumerate() {
        hit_line(&format!("{:>2}.", i + 1), h);
    }
    for h in &r.extra_hits {
        hit_line(" +.", h);
    }
    let cut = if r.hits_cut_ids.is_empty() {
        String::new()
    } else {
        format!(": {}", r.hits_cut_ids.join(", "))
    };
    outln!(
        "\n--- context ({} tokens, {} hits cut{cut}, {:.1} ms) ---",
        r.context_tokens,
        r.hits_cut,
        r.timings.total_ms
    );
    outln!("{}", r.context);
}

/// One hit of a recall: its place in the list (`+.` for an extra hit), score, unit and
/// source.
fn hit_line(place: &str, h: &cairn::Hit) {
    let source = match (&h.session_id, &h.trajectory_id, h.states) {
        (Some(s), _, _) => format!("session={s} turns={}", h.turn_ids.join(",")),
        (None, Some(t), Some([a, b])) => format!("trajectory={t} states={a}..{b}"),
        _ => "-".to_string(),
    };
    let relevance = h
        .relevance
        .map_or_else(String::new, |r| format!(" relevance {r:.3}"));
    let superseded = if h.superseded_by.is_some() {
        " (superseded)"
    } else {
        ""
    };
    outln!(
        "{place} {:.4}  {}  {source} {}{relevance}{superseded}",
        h.score,
        h.unit_id,
        day(h.occurred_at, "%Y-%m-%d"),
    );
    if let Some(via) = &h.via {
        outln!("      via {via}");
    }
}

pub fn history(h: &FactHistory) {
    outln!("{}", h.subject);
    for v in &h.versions {
        let to = match v.valid_to {
            Some(_) => day(v.valid_to, "%Y-%m-%d %H:%M"),
            None => "now".into(),
        };
        outln!(
            "  {:<30} from {} to {to}  ({}, {} {})",
            v.statement,
            day(v.valid_from, "%Y-%m-%d %H:%M"),
            v.speaker.as_deref().unwrap_or("-"),
            v.session_id.as_deref().unwrap_or("-"),
            v.message_id.as_deref().unwrap_or("-"),
        );
    }
}

pub fn profile(p: &SpeakerProfile) {
    outln!("{}", p.summary);
    for e in p.roles.iter().chain(&p.skills) {
        outln!(
            "  {:<30} evidence: {} {}",
            e.what,
            e.session_id,
            e.message_id
        );
    }
}

pub fn entities(list: &[EntitySummary]) {
    for e in list {
        let aliases = if e.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", e.aliases.join(", "))
        };
        outln!(
            "{:<30} {:?}{aliases}: {} mentions in {} sessions",
            e.name,
            e.kind,
            e.mention_count,
            e.sessions
        );
    }
}

pub fn entity(e: &EntityDetail) {
    entities(std::slice::from_ref(&e.summary));
    for r in e.relations.iter().take(10) {
        outln!(
            "  with {:<28} {} sessions, {} messages",
            r.name,
            r.sessions,
            r.messages
        );
    }
    for x in &e.mentions {
        outln!(
            "  {} {:?} {:?} {}",
            day(x.occurred_at, "%Y-%m-%d %H:%M"),
            x.edge,
            x.surface,
            x.unit_id
        );
    }
}

pub fn stats(stats: &[SpaceStats]) {
    for s in stats {
        let kinds: Vec<String> = s
            .units_by_kind
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        outln!(
            "{}: {} sessions, {} messages, {} units ({})",
            s.space,
            s.sessions,
            s.messages,
            s.units,
            kinds.join(" ")
        );
    }
}

/// A read's warnings on stderr (stdout is the answer): `warning: MESSAGE (FIELD)`, or
/// under `--json` one object per line, `{"warning": message, "code": ..., "field": ...}`.
pub fn warnings(ws: &[cairn::Warning], json: bool) {
    for w in ws {
        match json {
            true => eprintln!(
                "{}",
                serde_json::json!({"warning": w.message, "code": w.code, "field": w.field})
            ),
            false => eprintln!("warning: {} ({})", w.message, w.field),
        }
    }
}

/// Ends the process after a failed command: the error on stderr, as `error: ...` or, under
/// `--json`, as one JSON object `{"error": message, "field": path?}`, then status 1.
pub fn fail(e: &anyhow::Error, json: bool) -> ! {
    if json {
        let mut v = serde_json::json!({ "error": error(e) });
        if let Some(field) = field(e) {
            v["field"] = field.into();
        }
        eprintln!("{v}");
    } else {
        eprintln!("error: {}", error(e));
    }
    std::process::exit(1);
}

/// The input field an error names, when a library error in its chain names one.
fn field(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|c| {
        if let Some(cairn::Error::Input(i)) = c.downcast_ref::<cairn::Error>() {
            return i.field.clone();
        }
        if let Some(f) = c.downcast_ref::<cairn::formats::FormatError>() {
            return f.input_error().and_then(|i| i.field.clone());
        }
        c.downcast_ref::<cairn::InputError>()
            .and_then(|i| i.field.clone())
    })
}

/// An error and its causes on one line, each cause once: library errors often name
/// their cause in their own message, and printing the chain would repeat it.
pub fn error(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "bad line 3: {}", self.0)
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let inner = std::io::Error::other("field `text` is empty");
        let e = anyhow::Error::new(Outer(inner)).context("ingesting into space \"a\"");
        assert_eq!(
            super::error(&e),
            "ingesting into space \"a\": bad line 3: field `text` is empty"
        );
    }
}
