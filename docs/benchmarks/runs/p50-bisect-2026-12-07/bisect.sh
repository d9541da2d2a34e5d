#!/usr/bin/env bash
# The p50 bisect of issue 52: build each commit in a worktree of its own target directory,
# then run the `defaults` row of a dev set with each binary in turn, ROUNDS times.
#   BISECT=/tmp/bisect bisect.sh build SHA...
#   BISECT=/tmp/bisect SET=friendsqa DATA=.../friendsqa_dev.json bisect.sh run ROUNDS label=SHA ...
# An embedding cache shared by every binary ($BISECT/cache.sqlite3, a copy of a warm one)
# keeps the model out of the timings; the first run of a set fills what it lacks.
set -e
B=${BISECT:?set BISECT to a scratch folder}
case $1 in
build)
  shift
  [ -d $B/wt ] || git worktree add -f $B/wt HEAD
  for sha in "$@"; do
    (cd $B/wt && git checkout -q -f $sha && CARGO_TARGET_DIR=$B/target cargo build --release -q -p cairn-cli)
    cp $B/target/release/cairn $B/cairn-$sha
  done ;;
run)
  rounds=$2; shift 2
  for r in $(seq 1 $rounds); do
    for pair in "$@"; do
      label=${pair%%=*}; sha=${pair#*=}
      $B/cairn-$sha bench $SET --data $DATA --config defaults --cache $B/cache.sqlite3 \
        --run-label $SET-$label-$r --out $B/runs > $B/runs-$SET-$label-$r.log 2>&1
      s=$B/runs/$SET-$label-$r/summary.md
      echo "$label r$r p50 $(grep -m1 'recall, engine' $s | awk -F'|' '{print $5}') | $(grep -m1 'Mean engine stages' $s)"
    done
  done ;;
esac
