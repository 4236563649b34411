#!/bin/bash
# Alternating A/B of two orch release binaries: base (228823e) and clock (8454a5f+).
# usage: run.sh <rounds> ; writes /work/ab/<backend>-<side>-<i>.json
set -u
PG="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
for i in $(seq 1 "$1"); do
  for side in base clock; do
    /work/bin/orch-$side bench --embedded sqlite --quiet lifecycle --tasks 40000 --agents 32 -o json > /work/ab/sqlite-$side-$i.json 2>/work/ab/err.log
    /work/bin/orch-$side bench --embedded "$PG" --quiet lifecycle --tasks 40000 --agents 32 --batch 32 -o json > /work/ab/pgbatch-$side-$i.json 2>>/work/ab/err.log
  done
done
echo done
