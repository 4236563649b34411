#!/usr/bin/env bash
# Runs the full benchmark set (both backends, every workload, the raw
# baselines) and writes JSON reports plus a Markdown summary with ratios.
#
#   bench/run-all.sh                       # SQLite and PostgreSQL
#   ORCH_BENCH_BACKENDS=sqlite bench/run-all.sh
#   ORCH_BENCH_PG_URL='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/run-all.sh
#
# The PostgreSQL URL names a server and a database to connect to for
# CREATE/DROP DATABASE: each run works in a fresh database it drops after.
# Results go to bench/results/<UTC time>/ (summary.md, one JSON per run).
# A full set takes about 5 minutes on a 2-core machine. Run it on a quiet
# machine: figures from a shared machine are not comparable.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${ORCH_BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
BACKENDS="${ORCH_BENCH_BACKENDS:-sqlite postgres}"
TASKS="${ORCH_BENCH_TASKS:-10000}"
AGENTS="${ORCH_BENCH_AGENTS:-32}"
SECONDS_PER_RUN="${ORCH_BENCH_SECONDS:-10}"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"

echo "building (release)..." >&2
cargo build --release --locked -p orchestrator-cli --bin orch --example raw_sqlite_lifecycle >&2
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
ORCH="$TARGET_DIR/release/orch"
RAW_SQLITE="$TARGET_DIR/release/examples/raw_sqlite_lifecycle"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cores: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "memory: $(grep MemTotal /proc/meminfo | awk '{print $2/1024/1024 " GiB"}')"
  echo "kernel: $(uname -r)"
  echo "postgres: $(psql "$PG_URL" -Atc 'SHOW server_version' 2>/dev/null || echo n/a)"
  echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

run() { # backend name args...
  local backend="$1" name="$2"; shift 2
  local embedded=sqlite
  [ "$backend" = postgres ] && embedded="$PG_URL"
  echo "== $backend $name: orch bench $* --embedded ..." >&2
  "$ORCH" bench "$@" --embedded "$embedded" -o json > "$OUT/$backend-$name.json"
}

for backend in $BACKENDS; do
  run "$backend" noop noop --clients "$AGENTS" --duration "$SECONDS_PER_RUN"
  run "$backend" lifecycle lifecycle --tasks "$TASKS" --agents "$AGENTS"
  run "$backend" claim-latency claim-latency --duration "$SECONDS_PER_RUN"
  run "$backend" ingest ingest --batch 500 --clients 8 --duration "$SECONDS_PER_RUN"
  run "$backend" stream stream --tasks 1000 --interval-ms 5
  if [ "$backend" = sqlite ]; then
    echo "== raw sqlite lifecycle" >&2
    "$RAW_SQLITE" --tasks "$TASKS" --agents "$AGENTS" > "$OUT/sqlite-raw.json"
  else
    echo "== raw postgres lifecycle (pgbench)" >&2
    db="orch_bench_raw_$$"
    psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    raw_url="$(python3 -c 'import sys,re; u=sys.argv[1]; b,_,q=u.partition("?"); s=b.find("://")+3; h=b.find("/",s); b=b if h<0 else b[:h]; print(b+"/"+sys.argv[2]+("?"+q if q else ""))' "$PG_URL" "$db")"
    psql "$raw_url" -q -f bench/raw/pg_schema.sql
    pgbench -n -f bench/raw/pg_lifecycle.sql -c "$AGENTS" -j 2 -T "$SECONDS_PER_RUN" "$raw_url" > "$OUT/postgres-raw.txt" 2>&1 || true
    psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  fi
done

python3 bench/summarise.py "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"
echo "reports in $OUT" >&2
