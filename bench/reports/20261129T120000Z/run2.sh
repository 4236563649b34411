#!/bin/bash
# usage: run2.sh <rounds> <tag> <sqlite|pg> <sideA> <sideB> <lifecycle args...>: /work/bin/orch-<side>, alternating
rounds=$1; tag=$2; be=$3; a=$4; b=$5; shift 5
PG='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
for r in $(seq 1 $rounds); do
  for side in $a $b; do
    emb=sqlite; [ "$be" = pg ] && emb=$PG
    /work/bin/orch-$side bench --embedded "$emb" --quiet lifecycle "$@" -o json > /tmp/ab/$tag-$side-$r.json 2>/tmp/ab/$tag-$side-$r.err
  done
done
