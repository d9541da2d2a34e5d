//! The text templates of the harness (`methodology/*.md`, `prompts/*.txt`, compiled in
//! with `include_str!`): `{{name}}` placeholders filled in one pass, so a value that
//! itself holds `{{...}}` (a question, a recalled context) is never expanded again.

/// Replaces every `{{name}}` of `template` with its value in `values`; a name without a
/// value is left as it is (the tests render every template with every value it needs:
/// [`placeholders`]).
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let Some(len) = rest[open + 2..].find("}}") else {
            break;
        };
        let name = &rest[open + 2..open + 2 + len];
        out.push_str(&rest[..open]);
        match values.iter().find(|(k, _)| *k == name) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(&rest[open..open + len + 4]),
        }
        rest = &rest[open + len + 4..];
    }
    out.push_str(rest);
    out
}

/// The placeholder names of a template, in order of first use.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let Some(len) = rest[open + 2..].find("}}") else {
            break;
        };
        let name = &rest[open + 2..open + 2 + len];
        if !out.contains(&name) {
            out.push(name);
        }
        rest = &rest[open + len + 4..];
    }
    out
}

/// A prompt file's text: the file without its final newline.
pub fn prompt(file: &str) -> &str {
    file.strip_suffix('\n').unwrap_or(file)
}

/// A page (METHODOLOGY.md): filled, then ending with exactly one newline whatever the
/// file's end.
pub fn page(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = fill(template, values);
    out.truncate(out.trim_end_matches('\n').len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_once_and_keeps_unknown_names() {
        let t = "a {{x}} b {{y}} {{x}}{{z}}";
        assert_eq!(
            fill(t, &[("x", "{{y}}"), ("y", "2")]),
            "a {{y}} b 2 {{y}}{{z}}"
        );
        assert_eq!(placeholders(t), ["x", "y", "z"]);
        assert_eq!(fill("no }} {{ end", &[]), "no }} {{ end");
        assert_eq!(page("x\n{{l}}\n\n", &[("l", "- a\n")]), "x\n- a\n");
        assert_eq!(prompt("Q: {{q}}\n"), "Q: {{q}}");
    }
}
