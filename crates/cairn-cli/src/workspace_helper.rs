//! The helper script of an exported trajectory workspace (`scripts/inspect`): it calls the
//! inspection verbs through this binary (`cairn [global args] trajectories --space S
//! <verb>`), so its syntax is the CLI's and lives here; the workspace's documents come
//! from the engine and quote [`USAGE`].

/// The helper for `space`, calling `program args...` (the binary and the global
/// arguments that open this memory).
pub fn helper(program: &str, args: &[String], space: &str) -> cairn::WorkspaceHelper {
    cairn::WorkspaceHelper {
        script: helper_script(program, args, space),
        usage: USAGE.to_string(),
    }
}

/// What INSTRUCTION.md says of the helper: its usage, one line per form.
pub const USAGE: &str = "    scripts/inspect ID                   compact summary: a line per state
    scripts/inspect ID --state 7         one state with its whole page
    scripts/inspect ID --span 6:8        states 6 to 8 (indices start at 0, both ends included)
    scripts/inspect ID --match 'Save|Delete'   the states of ID whose lines match (regex, any case)
    scripts/inspect ID --words 'coupon code'   the same with plain words
    scripts/inspect --search 'coupon code exists'   states of every run holding the words, best first";

/// Quotes `s` for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `scripts/inspect`: calls `program args... trajectories --space SPACE <verb>`.
fn helper_script(program: &str, args: &[String], space: &str) -> String {
    let base = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>();
    let (bin, rest) = base
        .split_first()
        .map_or((String::new(), &[][..]), |(b, r)| (b.clone(), r));
    format!(
        r#"#!/bin/sh
# Inspect the trajectories of this workspace through Cairn: the same verbs as its MCP
# tools and HTTP API. Written by `cairn trajectories export-workspace`.
#
#   scripts/inspect ID                    compact summary of one trajectory
#   scripts/inspect ID --state N          one state with its page
#   scripts/inspect ID --span A:B         states A to B (inclusive)
#   scripts/inspect ID --match REGEX      states of ID matching a regex (any case)
#   scripts/inspect ID --words 'W1 W2'    states of ID holding any of the words
#   scripts/inspect --search 'W1 W2'      states of every trajectory holding the words
#   scripts/inspect --manifest [full]     the manifest
#
# CAIRN_BIN overrides the cairn binary; CAIRN_STORE (a PostgreSQL URL) is read by cairn
# itself when the memory lives there.
set -eu
CAIRN=${{CAIRN_BIN:-{bin}}}
SPACE={space}
cairn() {{ "$CAIRN" {rest} trajectories --space "$SPACE" "$@"; }}
usage() {{ sed -n '5,11p' "$0" | sed 's/^# \{{0,1\}}//'; }}
case "${{1:-}}" in
  ""|-h|--help) usage; exit 0 ;;
  --search) shift; [ $# -ge 1 ] || {{ usage >&2; exit 2; }}; cairn search --words "$*"; exit ;;
  --manifest) shift; if [ "${{1:-}}" = full ]; then cairn manifest --full; else cairn manifest; fi; exit ;;
esac
ID=$1; shift
case "${{1:-}}" in
  "") cairn summary "$ID" ;;
  --state) [ $# -ge 2 ] || {{ usage >&2; exit 2; }}; cairn state "$ID" "$2" ;;
  --span) [ $# -ge 2 ] || {{ usage >&2; exit 2; }}; cairn span "$ID" "$2" ;;
  --match) [ $# -ge 2 ] || {{ usage >&2; exit 2; }}; cairn match "$ID" "$2" ;;
  --words) [ $# -ge 2 ] || {{ usage >&2; exit 2; }}; cairn match --words "$ID" "$2" ;;
  *) echo "scripts/inspect: unknown option $1" >&2; usage >&2; exit 2 ;;
esac
"#,
        space = shell_quote(space),
        rest = rest.join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_survive_the_shell() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        let s = helper_script("/usr/bin/cairn", &["--dir".into(), "/d d".into()], "agent");
        assert!(s.contains("CAIRN=${CAIRN_BIN:-'/usr/bin/cairn'}"), "{s}");
        assert!(
            s.contains(
                "cairn() { \"$CAIRN\" '--dir' '/d d' trajectories --space \"$SPACE\" \"$@\"; }"
            ),
            "{s}"
        );
        // Every form the usage names is one the script handles.
        for form in [
            "--state",
            "--span",
            "--match",
            "--words",
            "--search",
            "--manifest",
        ] {
            assert!(USAGE.contains(form) || form == "--manifest", "{form}");
            assert!(s.contains(&format!("  {form})")), "{form}: {s}");
        }
    }
}
