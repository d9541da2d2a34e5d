#!/usr/bin/env bash
# Builds Cairn's OCI container image from scratch: no base image, only the `cairn` binary,
# the shared libraries it links (as `ldd` finds them, with the dynamic loader), the
# embedding model, and a non-root user. Needs `buildah` (Debian: apt-get install buildah);
# no container engine or daemon. docs/deployment.md says how to run it.
#
#   scripts/image.sh [--tag cairn:VERSION] [--binary PATH] [--model DIR]
#                    [--oci-archive FILE] [--rootfs DIR]
#
#   --tag          image name (default cairn:<version of the binary>)
#   --binary       the cairn binary (default $CAIRN_BIN, else the release build of
#                  $CARGO_TARGET_DIR or target/, built with cargo when missing)
#   --model        the model directory (default $CAIRN_MODEL_DIR, else Cairn's cache, where
#                  ./scripts/setup.sh installs it)
#   --oci-archive  also write the image to FILE (an OCI archive: `podman load`, `docker
#                  load` after `skopeo copy`, or any registry through `buildah push`)
#   --rootfs DIR   only assemble the image's root filesystem into DIR (no buildah): what
#                  the image holds, for a test to run by chroot (crates/cairn-cli/tests/image.rs)
#
# The image: entrypoint /usr/local/bin/cairn, command `serve --bind 0.0.0.0:7700`, data
# directory /data (a volume; CAIRN_DIR), the model at /models/all-MiniLM-L6-v2
# (CAIRN_MODEL_DIR, HF_HUB_OFFLINE=1: it never downloads), user 10001, port 7700.
set -euo pipefail
cd "$(dirname "$0")/.."

TAG="" BINARY="${CAIRN_BIN:-}" MODEL="${CAIRN_MODEL_DIR:-}" ARCHIVE="" ROOTFS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="$2"; shift 2 ;;
    --binary) BINARY="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    --oci-archive) ARCHIVE="$2"; shift 2 ;;
    --rootfs) ROOTFS="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$BINARY" ]; then
  BINARY="${CARGO_TARGET_DIR:-$PWD/target}/release/cairn"
  [ -x "$BINARY" ] || cargo build --release -p cairn-cli
fi
[ -x "$BINARY" ] || { echo "image.sh: no cairn binary at $BINARY" >&2; exit 1; }
if [ -z "$MODEL" ]; then
  MODEL="${CAIRN_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}/models/sentence-transformers/all-MiniLM-L6-v2"
fi
for f in config.json tokenizer.json model.safetensors; do
  [ -f "$MODEL/$f" ] || { echo "image.sh: no model at $MODEL (run ./scripts/setup.sh, or pass --model)" >&2; exit 1; }
done
VERSION="$("$BINARY" --version | awk '{print $2}')"
TAG="${TAG:-cairn:$VERSION}"

# The root filesystem, assembled in a folder first.
if [ -n "$ROOTFS" ]; then
  STAGE="$ROOTFS"
  mkdir -p "$STAGE"
else
  STAGE="$(mktemp -d)"
  trap 'rm -rf "$STAGE"' EXIT
fi
mkdir -p "$STAGE/usr/local/bin" "$STAGE/models" "$STAGE/data" "$STAGE/tmp" "$STAGE/etc"
chmod 1777 "$STAGE/tmp"
install -m 0755 "$BINARY" "$STAGE/usr/local/bin/cairn"
# Every library the binary links, at the path the loader looks for it, and the loader.
ldd "$BINARY" | awk '/=> \// {print $3} /^[ \t]*\/[^ ]+ \(/ {print $1}' | sort -u | while read -r lib; do
  mkdir -p "$STAGE$(dirname "$lib")"
  cp -L "$lib" "$STAGE$lib"
done
cp -rL "$MODEL" "$STAGE/models/all-MiniLM-L6-v2"
printf 'root:x:0:0:root:/root:/nonexistent\ncairn:x:10001:10001:cairn:/data:/nonexistent\n' > "$STAGE/etc/passwd"
printf 'root:x:0:\ncairn:x:10001:\n' > "$STAGE/etc/group"
chown -R 10001:10001 "$STAGE/data" 2>/dev/null || true
echo "root filesystem: $STAGE ($(du -sh "$STAGE" | cut -f1))" >&2
[ -n "$ROOTFS" ] && exit 0

command -v buildah >/dev/null || { echo "image.sh: buildah not found (apt-get install buildah)" >&2; exit 1; }
CTR="$(buildah from scratch)"
trap 'buildah rm "$CTR" >/dev/null 2>&1 || true; rm -rf "$STAGE"' EXIT
buildah copy "$CTR" "$STAGE" / >/dev/null
buildah config \
  --entrypoint '["/usr/local/bin/cairn"]' \
  --cmd '["serve", "--bind", "0.0.0.0:7700"]' \
  --env CAIRN_DIR=/data \
  --env CAIRN_MODEL_DIR=/models/all-MiniLM-L6-v2 \
  --env HF_HUB_OFFLINE=1 \
  --port 7700 \
  --volume /data \
  --workingdir /data \
  --user 10001:10001 \
  --label org.opencontainers.image.title=cairn \
  --label org.opencontainers.image.version="$VERSION" \
  --label org.opencontainers.image.description="Long-term memory for AI agents" \
  "$CTR"
buildah commit --quiet "$CTR" "$TAG" >/dev/null
echo "image: $TAG" >&2
if [ -n "$ARCHIVE" ]; then
  buildah push --quiet "$TAG" "oci-archive:$ARCHIVE:$TAG"
  echo "OCI archive: $ARCHIVE" >&2
fi
