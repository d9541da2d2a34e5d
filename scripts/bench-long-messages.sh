#!/usr/bin/env bash
# Recall over long messages against recall over short ones (issue #22): two spaces of the
# same 25 sessions x 10 rounds, whose assistant replies are ~100 KB of pasted code in one
# and ~300 bytes in the other, same questions; the recall's engine time without the query
# embedding (`total_ms - embed_ms`, so a cached query embedding does not favour either).
#
#   scripts/bench-long-messages.sh OUT_DIR [CAIRN_BIN] [REPEATS] [cli|http]
#
# cli (the default) runs one `cairn recall` process per recall; http recalls through one
# warm `cairn serve` over the same data, as an agent's server does (and as the issue
# measured), after one unmeasured pass of the questions.
# Writes OUT_DIR/recalls.jsonl (one line per recall: space, query, timings) and prints
# the median and max per space.
set -euo pipefail
OUT=${1:?usage: bench-long-messages.sh OUT_DIR [CAIRN_BIN] [REPEATS] [cli|http]}
BIN=${2:-${CARGO_TARGET_DIR:-target}/release/cairn}
REPEATS=${3:-3}
MODE=${4:-cli}
mkdir -p "$OUT"
WORK=$(mktemp -d)
SERVER=
trap '[ -z "$SERVER" ] || { kill "$SERVER"; wait "$SERVER" || true; }; rm -rf "$WORK"' EXIT

python3 - "$WORK" <<'EOF'
import json, random, sys
random.seed(7)
words = ("alpha beta gamma delta server client config token budget recall memory index "
         "vector query session user file code function return value error retry parse "
         "json table row column").split()
def blob(n):
    out, size = [], 0
    while size < n:
        line = "    " + " ".join(random.choice(words) for _ in range(12)) + "();"
        out.append(line); size += len(line) + 1
    return "\n".join(out)
topics = ["my sister's wedding in Porto", "the red bicycle I lent to Sam",
          "the sourdough starter recipe", "the trip to Kyoto in April",
          "the new job at the bakery", "my dog's vet appointment", "the broken dishwasher",
          "the chess tournament", "learning the cello", "the garden tomatoes"]
for name, size in [("long", 100_000), ("short", 300)]:
    with open(f"{sys.argv[1]}/{name}.jsonl", "w") as f:
        for s in range(25):
            msgs = []
            for r in range(10):
                t = topics[(s * 10 + r) % len(topics)]
                msgs.append({"role": "user", "text": f"Session {s} round {r}: tell me about {t} and paste the code again."})
                msgs.append({"role": "assistant", "text": f"Here is what I know about {t}.\n" + blob(size)})
            f.write(json.dumps({"id": f"s{s}", "date": f"2024-0{1 + s % 9}-1{s % 10}", "messages": msgs}) + "\n")
EOF

for space in long short; do
  "$BIN" --dir "$WORK/data" ingest --space "$space" "$WORK/$space.jsonl" | tail -1
done
: > "$OUT/recalls.jsonl"
QUESTIONS=("what did I lend to Sam?" "when is the vet appointment for my dog?"
           "how is the cello going?" "tell me about the trip to Kyoto")
case "$MODE" in
cli)
  for _ in $(seq "$REPEATS"); do
    for space in long short; do
      for q in "${QUESTIONS[@]}"; do
        "$BIN" --dir "$WORK/data" --json recall --space "$space" "$q" --top-k 10 --token-budget 2000 \
          | python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"space": sys.argv[1], "query": sys.argv[2], "timings": r["timings"]}))' "$space" "$q" \
          >> "$OUT/recalls.jsonl"
      done
    done
  done
  ;;
http)
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$BIN" --dir "$WORK/data" serve --bind "127.0.0.1:$PORT" --no-auth > "$WORK/serve.log" 2>&1 &
  SERVER=$!
  python3 - "$PORT" "$REPEATS" "$OUT/recalls.jsonl" "${QUESTIONS[@]}" <<'EOF'
import json, sys, time, urllib.request
port, repeats, out, questions = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
base = f"http://127.0.0.1:{port}"
for _ in range(100):
    try:
        urllib.request.urlopen(f"{base}/v1/ready").read()
        break
    except OSError:
        time.sleep(0.1)
def recall(space, q):
    body = json.dumps({"query": q, "top_k": 10, "token_budget": 2000}).encode()
    req = urllib.request.Request(f"{base}/v1/spaces/{space}/recall", data=body,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
with open(out, "a") as f:
    for i in range(repeats + 1):
        for space in ["long", "short"]:
            for q in questions:
                r = recall(space, q)
                if i:  # the first pass warms the server and is not measured
                    f.write(json.dumps({"space": space, "query": q, "timings": r["timings"]}) + "\n")
EOF
  ;;
*) echo "mode must be cli or http, not $MODE" >&2; exit 2 ;;
esac
python3 - "$OUT/recalls.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for space in ["long", "short"]:
    ms = sorted(r["timings"]["total_ms"] - r["timings"]["embed_ms"] for r in rows if r["space"] == space)
    print(f"{space}: {len(ms)} recalls, engine time without the query embedding: "
          f"median {statistics.median(ms):.1f} ms, max {ms[-1]:.1f} ms")
EOF
