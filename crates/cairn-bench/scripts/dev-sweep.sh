#!/usr/bin/env bash
# One ranking experiment on the three dev sets (issue 27's columns):
#   crates/cairn-bench/scripts/dev-sweep.sh NAME [CAIRN_TOML] [extra bench flags...]
# runs `cairn bench longmemeval|locomo|friendsqa --config both` with the engine settings
# in CAIRN_TOML (a cairn.toml; "-" for stock) into bench-out/sweep-NAME-*/ and prints
# one line of the issue's metrics (dev-metrics.py).
set -euo pipefail
cd "$(dirname "$0")/../../.."
name="$1"; shift
cfg="${1:--}"; [ $# -gt 0 ] && shift
data="${CAIRN_DATA_DIR:-../shared/data}"
bin="${CAIRN_BIN:-./target/release/cairn}"
extra=("$@")
[ "$cfg" != "-" ] && extra+=(--memory-config "$cfg")
run() {
  local label="sweep-$name-$1"; shift
  rm -rf "bench-out/$label"
  "$bin" bench "$@" --config both --run-label "$label" --out bench-out "${extra[@]}" >/dev/null 2>&1 \
    || { echo "$label failed" >&2; return 1; }
}
run lme longmemeval --data "$data/longmemeval/longmemeval_s_dev.json.gz" &
run locomo locomo --data "$data/locomo/locomo10_dev.json"
run fqa friendsqa --data "$data/friendsqa/friendsqa_dev.json"
wait
python3 crates/cairn-bench/scripts/dev-metrics.py "$name" bench-out/sweep-"$name"-{lme,locomo,fqa}
