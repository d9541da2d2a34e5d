#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, lints, then every test.
# Release profile for everything, so tests and `cargo run --release` share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
# The server's own build links no database (ARCHITECTURE.md, cairn-server): it is handed
# an open memory, and the store backends are features of `cairn` that the binary turns
# on. Its build alone also compiles the facade without them.
if cargo tree -p cairn-server -e normal --prefix none | grep -E '^(rusqlite|libsqlite3-sys|sqlx|cairn-store|cairn-store-postgres) '; then
  echo "cairn-server links a database (see ARCHITECTURE.md, cairn-server)" >&2
  exit 1
fi
cargo clippy --release -p cairn-server -- -D warnings
# Every test, among them every example of the docs (crates/cairn-cli/tests/docs.rs; its
# Python and TypeScript blocks need the clients' dependencies, which .ci/run installs).
cargo test --release --workspace
# The clients against a real `cairn serve` (built just above). The framework adapters'
# tests say SKIPPED when their framework is not installed (.ci/run installs them all).
export CAIRN_BIN="${CAIRN_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cairn}"
if python3 -c "import httpx, pytest" 2>/dev/null; then
  python3 -m pytest -q -rs clients/python
else
  echo "SKIPPED: Python client tests (need python3 with httpx and pytest: pip install './clients/python[test,adapters]')"
fi
if command -v node >/dev/null && [ -d clients/typescript/node_modules ]; then
  (cd clients/typescript && npm test --silent)
else
  echo "SKIPPED: TypeScript client tests (need Node 18+ and \`npm ci\` in clients/typescript)"
fi
# The inspector (/ui) end to end: Debian's headless Chromium, driven by playwright-core,
# against a real `cairn serve` (built above). CI installs both (.ci/run) and sets
# CAIRN_REQUIRE_UI, which makes their absence a failure instead of a skip.
UI_TESTS=crates/cairn-server/ui-tests
CAIRN_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/cairn"
if command -v node >/dev/null && [ -x "${CHROMIUM:-/usr/bin/chromium}" ] && [ -d "$UI_TESTS/node_modules/playwright-core" ]; then
  (cd "$UI_TESTS" && CAIRN_BIN="$CAIRN_BIN" node --test --test-concurrency=1)
elif [ -n "${CAIRN_REQUIRE_UI:-}" ]; then
  echo "inspector tests required (CAIRN_REQUIRE_UI) but node, /usr/bin/chromium or $UI_TESTS/node_modules is missing" >&2
  exit 1
else
  echo "SKIPPED: inspector tests (need node, apt-get install chromium, and npm ci in $UI_TESTS)"
fi
