#!/bin/bash
# A/B of `orch bench lifecycle` between release binaries, runs alternating
# (the host's drift falls on both sides alike; BENCHMARKS.md says why
# medians over alternating runs are the measure).
#
#   bench/ab/run.sh <rounds> <tag> <sqlite|pg> <sideA> <sideB> <lifecycle args...>
#
# runs $ORCH_AB_BIN/orch-<side> (default target/ab/orch-<side>: copy each
# build there under its side's name) and writes each run's JSON report to
# $ORCH_AB_OUT/<tag>-<side>-<round>.json (default target/ab/out), its stderr
# beside it. PostgreSQL runs use $ORCH_BENCH_PG_URL, or the local server.
# bench/ab/summ.py <tag> <sideA> <sideB> prints the medians and the ratio.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '6,12p' "$0"
  exit 2
fi
rounds=$1; tag=$2; backend=$3; a=$4; b=$5; shift 5
bin=${ORCH_AB_BIN:-target/ab}
out=${ORCH_AB_OUT:-target/ab/out}
pg=${ORCH_BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
case "$backend" in
  sqlite) embedded=sqlite ;;
  pg) embedded=$pg ;;
  *) echo "backend: sqlite or pg, not $backend" >&2; exit 2 ;;
esac
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for side in "$a" "$b"; do
    "$bin/orch-$side" bench --embedded "$embedded" --quiet lifecycle "$@" -o json \
      > "$out/$tag-$side-$round.json" 2> "$out/$tag-$side-$round.err"
  done
done
