#!/bin/bash
# usage: run.sh <rounds> <tag> <backend sqlite|pg> <extra args...>
rounds=$1; tag=$2; be=$3; shift 3
PG='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
for r in $(seq 1 $rounds); do
  for side in base new; do
    emb=sqlite; [ "$be" = pg ] && emb=$PG
    /work/bin/orch-$side bench --embedded "$emb" --quiet lifecycle "$@" -o json > /tmp/ab/$tag-$side-$r.json 2>/tmp/ab/$tag-$side-$r.err
  done
done
