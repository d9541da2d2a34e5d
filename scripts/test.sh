#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, lints, then every test.
# Release profile for everything, so tests and `cargo run --release` share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
cargo test --release --workspace
