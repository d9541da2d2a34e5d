#!/usr/bin/env bash
# The long form of the fuzz test (docs/reliability.md): every cargo-fuzz (libFuzzer)
# target in fuzz/ for SECONDS each (default 600), one after another, starting from the
# targets' seeds and the committed regressions. Stops at the first crash; libFuzzer
# writes the input under fuzz/artifacts/<target>/, which then belongs in
# fuzz/regressions/<target>/ with its fix.
#
#   ./scripts/fuzz-long.sh [SECONDS] [TARGET ...]
#
# cargo-fuzz needs nightly flags (-Z sanitizer coverage); RUSTC_BOOTSTRAP=1 lets the
# stable toolchain accept them. Builds without a sanitizer (-s none): the code under test
# is safe Rust, and the sanitizer build costs minutes per target on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo build --release --bin cairn
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/cairn"
"$bin" reliability fuzz --write-seeds fuzz/corpus
for t in fuzz/regressions/*/; do
  name="$(basename "$t")"
  mkdir -p "fuzz/corpus/$name"
  cp "$t"* "fuzz/corpus/$name/" 2>/dev/null || true
done
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
cd fuzz
# Only cargo-fuzz's own builds get RUSTC_BOOTSTRAP: set for the workspace build above, it
# would change every crate's fingerprint and rebuild the whole workspace each time.
export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none --release
mkdir -p logs
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  if ! cargo fuzz run -s none --release "$t" "corpus/$t" -- \
    -max_total_time="$seconds" -print_final_stats=1 -max_len=65536 >"logs/$t.log" 2>&1; then
    tail -30 "logs/$t.log" >&2
    echo "CRASH (or failure) in $t: see fuzz/logs/$t.log and fuzz/artifacts/$t" >&2
    exit 1
  fi
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "logs/$t.log" || true
done
echo "fuzz-long: ${#targets[@]} targets x ${seconds}s, no crash"
