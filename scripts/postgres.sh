#!/usr/bin/env bash
# A throwaway PostgreSQL 15 + pgvector cluster on loopback for the PostgreSQL backend
# tests. Idempotent: every step is skipped when its result is already there.
#
#   eval "$(./scripts/postgres.sh)"   # exports CAIRN_TEST_DATABASE_URL
#
# Steps: Debian's postgresql-15 and postgresql-server-dev-15 (apt, if missing); pgvector
# 0.8.0 built from Debian's own source package of the next release (no binary package fits
# bookworm; the build takes seconds) if the `vector` extension is absent; a cluster in
# $CAIRN_PG_DIR on 127.0.0.1:$CAIRN_PG_PORT (trust auth on loopback only), started if it
# is not running; the database `cairn_test`. Progress goes to stderr, the export line to
# stdout. Fails loudly (non-zero exit) when any step fails.
set -euo pipefail

PG_VERSION=15
PGVECTOR_VERSION=0.8.0
PORT="${CAIRN_PG_PORT:-5433}"
DB=cairn_test
BIN="/usr/lib/postgresql/$PG_VERSION/bin"
log() { echo "postgres.sh: $*" >&2; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && SUDO=(sudo)
fi

# 1. PostgreSQL 15 and its server headers.
if [ ! -x "$BIN/postgres" ] || [ ! -x "$BIN/pg_config" ] || [ ! -d "/usr/include/postgresql/$PG_VERSION/server" ]; then
  log "installing postgresql-$PG_VERSION postgresql-server-dev-$PG_VERSION"
  "${SUDO[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq \
    "postgresql-$PG_VERSION" "postgresql-server-dev-$PG_VERSION" dpkg-dev make gcc >&2
fi
SHAREDIR="$("$BIN/pg_config" --sharedir)"

# 2. pgvector from Debian's source package (trixie carries 0.8.0; bookworm has none).
if [ ! -f "$SHAREDIR/extension/vector.control" ]; then
  log "building pgvector $PGVECTOR_VERSION from Debian source"
  SRC_LIST=/etc/apt/sources.list.d/cairn-pgvector-src.sources
  if [ ! -f "$SRC_LIST" ]; then
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      | "${SUDO[@]}" tee "$SRC_LIST" >/dev/null
  fi
  "${SUDO[@]}" apt-get update -qq >&2
  command -v dpkg-source >/dev/null || DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq dpkg-dev >&2
  WORK="$(mktemp -d)"
  (
    cd "$WORK"
    apt-get source -qq "pgvector=$PGVECTOR_VERSION-1" >&2 2>&1 || apt-get source -qq pgvector >&2 2>&1
    cd pgvector-*/
    make -s PG_CONFIG="$BIN/pg_config" >&2
    "${SUDO[@]}" make -s install PG_CONFIG="$BIN/pg_config" >&2
  )
  rm -rf "$WORK"
  [ -f "$SHAREDIR/extension/vector.control" ] || { log "pgvector install failed"; exit 1; }
fi

# 3. The cluster. As root it runs as the postgres user, in a directory that user owns.
if [ "$(id -u)" -eq 0 ]; then
  PGDIR="${CAIRN_PG_DIR:-/var/lib/postgresql/cairn-test-$PG_VERSION}"
  AS=(runuser -u postgres --)
else
  PGDIR="${CAIRN_PG_DIR:-$HOME/.cache/cairn-postgres-$PG_VERSION}"
  AS=()
fi
if [ ! -f "$PGDIR/PG_VERSION" ]; then
  log "initdb $PGDIR"
  if [ "$(id -u)" -eq 0 ]; then
    mkdir -p "$PGDIR" && chown postgres:postgres "$PGDIR" && chmod 700 "$PGDIR"
  fi
  "${AS[@]}" "$BIN/initdb" -D "$PGDIR" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $PORT"
    echo "unix_socket_directories = '$PGDIR'"
    echo "max_connections = 200"
    echo "fsync = on"
  } >>"$PGDIR/postgresql.conf"
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$PGDIR/pg_hba.conf"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDIR/postgresql.conf" "$PGDIR/pg_hba.conf"
fi
if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
  log "starting the cluster on 127.0.0.1:$PORT"
  "${AS[@]}" "$BIN/pg_ctl" -D "$PGDIR" -l "$PGDIR/server.log" -w -t 60 start >/dev/null
fi

# 4. The test database with the extension (creating it needs a superuser).
export PGOPTIONS="-c client_min_messages=warning"
PSQL=("$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres)
if [ "$("${PSQL[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$DB'")" != 1 ]; then
  "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null
fi
"${PSQL[@]}" -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null

echo "export CAIRN_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PORT/$DB"
