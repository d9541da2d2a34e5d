#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, lints, then every test.
# Release profile for everything, so tests and `cargo run --release` share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
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
