//! Example blocks of a markdown page and how each runs (see `docs.rs`).

/// What a marker (or the language) says to do with a block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    Shell,
    Python,
    TypeScript,
    Json,
    Toml,
    Rust,
    Output,
    File(String),
    Skip(String),
}

#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) line: usize,
    pub(crate) lang: String,
    pub(crate) code: String,
    pub(crate) plan: Plan,
    pub(crate) fails: bool,
    pub(crate) serve: bool,
    pub(crate) needs: Option<String>,
}

/// The fenced blocks of a page with their plans; an error for a block that says nothing
/// of how it runs, or a marker that means nothing.
pub(crate) fn parse(page: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let mut blocks = Vec::new();
    let mut page_skip: Option<String> = None;
    let mut marker: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(m) = line
            .strip_prefix("<!-- doc-test:")
            .and_then(|m| m.trim_end().strip_suffix("-->"))
        {
            let m = m.trim();
            if let Some(reason) = m.strip_prefix("page skip:") {
                if !blocks.is_empty() {
                    return Err(format!("line {}: a page marker after a block", i + 1));
                }
                page_skip = Some(reason.trim().to_string());
            } else {
                marker = Some((i, m.to_string()));
            }
            i += 1;
            continue;
        }
        let fence = if line.starts_with("```") {
            "```"
        } else if line.starts_with("~~~") {
            "~~~"
        } else {
            if !line.is_empty() {
                // A marker belongs to the block right after it (blank lines aside).
                if let Some((at, _)) = marker.take() {
                    return Err(format!("line {}: a marker not followed by a block", at + 1));
                }
            }
            i += 1;
            continue;
        };
        let indent = lines[i].len() - line.len();
        let lang = line[3..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with(fence) {
            end += 1;
        }
        let code: Vec<&str> = lines[start..end.min(lines.len())]
            .iter()
            .map(|l| {
                l.get(indent.min(l.len() - l.trim_start().len())..)
                    .unwrap_or(l)
            })
            .collect();
        let mut block = Block {
            line: start,
            lang: lang.clone(),
            code: code.join("\n") + "\n",
            plan: Plan::Output,
            fails: false,
            serve: false,
            needs: None,
        };
        let directive = marker.take().map(|(_, m)| m);
        block.plan = plan(
            &lang,
            directive.as_deref(),
            &mut block,
            page_skip.as_deref(),
        )
        .map_err(|e| format!("line {start}: {e}"))?;
        blocks.push(block);
        i = end + 1;
    }
    Ok(blocks)
}

fn plan(
    lang: &str,
    directive: Option<&str>,
    block: &mut Block,
    page_skip: Option<&str>,
) -> Result<Plan, String> {
    let by_lang = || -> Result<Plan, String> {
        Ok(match lang {
            "sh" | "bash" | "shell" | "console" => Plan::Shell,
            "python" | "py" => Plan::Python,
            "ts" | "typescript" | "js" | "javascript" => Plan::TypeScript,
            "json" | "jsonl" => Plan::Json,
            "toml" => Plan::Toml,
            "rust" => Plan::Rust,
            "text" => Plan::Output,
            other => {
                return Err(format!(
                    "a ```{other} block needs a marker saying how it runs (<!-- doc-test: ... -->)"
                ))
            }
        })
    };
    let Some(d) = directive else {
        return match page_skip {
            Some(reason) if lang != "text" => Ok(Plan::Skip(reason.to_string())),
            _ => by_lang(),
        };
    };
    let mut plan = by_lang();
    // `skip:` takes the rest of the marker as its reason, semicolons and all.
    let (d, skip) = match d.find("skip:") {
        Some(at) => (&d[..at], Some(d[at + "skip:".len()..].trim())),
        None => (d, None),
    };
    if let Some(reason) = skip {
        plan = Ok(Plan::Skip(reason.to_string()));
    }
    for part in d.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(path) = part.strip_prefix("file:") {
            plan = Ok(Plan::File(path.trim().to_string()));
        } else if let Some(what) = part.strip_prefix("needs:") {
            block.needs = Some(what.trim().to_string());
        } else if part == "fails" {
            block.fails = true;
        } else if part == "serve" {
            block.serve = true;
        } else if part == "run" {
            // Runs by its language even on a page skipped by default.
        } else {
            return Err(format!("unknown doc-test marker {part:?}"));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_languages_and_pages() {
        let page = "<!-- doc-test: page skip: records of runs -->\n\n```sh\ncairn bench\n```\n\n<!-- doc-test: run -->\n```sh\ncairn spaces\n```\n```text\nout\n```\n";
        let b = parse(page).unwrap();
        assert_eq!(b[0].plan, Plan::Skip("records of runs".into()));
        assert_eq!(b[1].plan, Plan::Shell);
        assert_eq!(b[2].plan, Plan::Output);
        let b = parse("<!-- doc-test: file: a.toml -->\n```toml\nx = 1\n```\n<!-- doc-test: fails; serve -->\n\n```bash\nfalse\n```\n<!-- doc-test: needs: data; skip: a; b -->\n```sh\nx\n```\n").unwrap();
        assert_eq!(b[2].plan, Plan::Skip("a; b".into()));
        assert_eq!(b[2].needs.as_deref(), Some("data"));
        assert_eq!(b[0].plan, Plan::File("a.toml".into()));
        assert!(b[1].fails && b[1].serve && b[1].plan == Plan::Shell);
        assert!(parse("```yaml\na: 1\n```\n")
            .unwrap_err()
            .contains("needs a marker"));
        assert!(parse("<!-- doc-test: maybe -->\n```sh\nx\n```\n")
            .unwrap_err()
            .contains("unknown"));
        assert!(parse("<!-- doc-test: fails -->\ntext\n```sh\nx\n```\n")
            .unwrap_err()
            .contains("not followed"));
        // An indented block (in a list) loses its indent.
        let b = parse("- item\n\n  ```sh\n  echo hi\n  ```\n").unwrap();
        assert_eq!(b[0].code, "echo hi\n");
    }
}
