#!/usr/bin/env bash
# Paired recall p50 runs: the pre-milestone head (169eab8) and main, alternated.
set -e
set_=$1; data=$2; cache=$3; shift 3
for round in 1 2; do
  for b in base fix; do
    /tmp/cairn-$b bench $set_ --data $data --config defaults --cache $cache --run-label $set_-$b-$round --out /tmp/p40/pairs > /tmp/p40/$set_-$b-$round.log 2>&1
    echo "$set_ $b $round: $(grep -h 'p50' /tmp/p40/pairs/$set_-$b-$round/summary.md | head -0)done"
  done
done
