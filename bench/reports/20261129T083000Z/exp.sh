#!/bin/bash
# usage: exp.sh <rounds> <tag> <droplist> <lifecycle args...>: same binary, indexes dropped by the template1 event trigger on side "drop"
rounds=$1; tag=$2; list=$3; shift 3
PG='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
for r in $(seq 1 $rounds); do
  for side in full drop; do
    if [ $side = drop ]; then v="$list"; else v=""; fi
    psql -qh 127.0.0.1 -U postgres -d postgres -c "ALTER ROLE postgres SET orch.exp_drop = '$v'"
    /work/bin/orch-base bench --embedded "$PG" --quiet lifecycle "$@" -o json > /tmp/ab/$tag-$side-$r.json 2>/tmp/ab/$tag-$side-$r.err
  done
done
psql -qh 127.0.0.1 -U postgres -d postgres -c "ALTER ROLE postgres RESET orch.exp_drop"
