#!/usr/bin/env bash
# The write-path benchmark of docs/benchmarks/server-load.md: appends over HTTP
# (`cairn load --mix write`) against `cairn serve`, for one or two builds side by side.
#
#   scripts/bench-writes.sh OUT_DIR BIN [BIN_B] [ROUNDS] [SECONDS]
#
# Each build gets a server of its own on a fresh data directory (embedded store). Every
# scenario (1 client; 32 clients on one session; 32 clients on 32 sessions) runs ROUNDS
# times (default 3), builds alternating within a round so both see the same machine
# load; each run measures SECONDS (default 15). Writes OUT_DIR/runs.jsonl (one
# `cairn --json load` report per run, with build and scenario) and OUT_DIR/summary.md
# (medians over rounds per build and scenario).
set -euo pipefail
OUT=${1:?usage: bench-writes.sh OUT_DIR BIN [BIN_B] [ROUNDS] [SECONDS]}
BINS=("${2:?a cairn binary}")
[ -n "${3:-}" ] && BINS+=("$3")
ROUNDS=${4:-3}
SECONDS_EACH=${5:-15}
KEY=bench-writes-admin-key-0123456789
mkdir -p "$OUT"
: > "$OUT/runs.jsonl"
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

for i in "${!BINS[@]}"; do
  port=$((7850 + i))
  CAIRN_ADMIN_KEY=$KEY "${BINS[$i]}" --dir "$WORK/data-$i" serve --bind "127.0.0.1:$port" \
    > "$WORK/serve-$i.log" 2>&1 &
  PIDS+=($!)
done
for i in "${!BINS[@]}"; do
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$((7850 + i))/v1/health" > /dev/null && break
    sleep 0.2
  done
done

SCENARIOS=("1 1" "32 1" "32 32")
for round in $(seq "$ROUNDS"); do
  for sc in "${SCENARIOS[@]}"; do
    set -- $sc
    for i in "${!BINS[@]}"; do
      report=$("${BINS[0]}" --json load --url "http://127.0.0.1:$((7850 + i))" --key "$KEY" \
        --space "w$round-$1-$2" --mix write --concurrency "$1" --sessions "$2" \
        --duration "$SECONDS_EACH")
      python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(build=int(sys.argv[2]), round=int(sys.argv[3]), clients=int(sys.argv[4]), sessions=int(sys.argv[5])); print(json.dumps(r))' \
        "$report" "$i" "$round" "$1" "$2" >> "$OUT/runs.jsonl"
      python3 -c 'import json,sys; w=json.loads(sys.argv[1])["write"]; print("round %s, build %s, %s clients, %s sessions: %.1f/s p50 %.1f ms p99 %.1f ms" % (*sys.argv[2:], w["per_second"], w["p50_ms"], w["p99_ms"]))' \
        "$report" "$round" "$i" "$1" "$2"
    done
  done
done

python3 - "$OUT" "${BINS[@]}" <<'EOF'
import json, statistics, sys
out, bins = sys.argv[1], sys.argv[2:]
runs = [json.loads(l) for l in open(f"{out}/runs.jsonl")]
lines = ["| build | clients | sessions | runs | appends/s (median) | p50 ms | p90 ms | p99 ms |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
for c, s in [(1, 1), (32, 1), (32, 32)]:
    for b in range(len(bins)):
        rs = [r for r in runs if r["build"] == b and r["clients"] == c and r["sessions"] == s]
        if not rs:
            continue
        med = lambda k: statistics.median(r["write"][k] for r in rs)
        lines.append(f"| {b}: `{bins[b]}` | {c} | {s} | {len(rs)} | {med('per_second'):.1f} | "
                     f"{med('p50_ms'):.1f} | {med('p90_ms'):.1f} | {med('p99_ms'):.1f} |")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
