#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, lints, then every test.
# Release profile for everything, so tests and `cargo run --release` share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
cargo test --release --workspace
# The Python client against a real `cairn serve` (built just above).
if python3 -c "import httpx, pytest" 2>/dev/null; then
  CAIRN_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/cairn" python3 -m pytest -q clients/python
else
  echo "SKIPPED: Python client tests (need python3 with httpx and pytest: pip install httpx pytest)"
fi
