#!/usr/bin/env bash
# One retrieval experiment on the LongMemEval dev split: `scripts/experiment.sh NAME [TOML]`
# runs `cairn bench longmemeval` with the engine settings in TOML (a cairn.toml) and prints
# the headline line of each config row. Results land in bench-out/exp-NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
name="$1"; shift
data="${CAIRN_DATA_DIR:-../shared/data}/longmemeval/longmemeval_s_dev.json.gz"
args=(bench longmemeval --data "$data" --config both --run-label "exp-$name" --out bench-out)
[ $# -gt 0 ] && args+=(--memory-config "$1")
rm -rf "bench-out/exp-$name"
./target/release/cairn "${args[@]}" 2>&1 | grep -E '^\S+ \[(defaults|bench)\]'
