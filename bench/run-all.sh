#!/usr/bin/env bash
# Runs the full benchmark set (both backends, every workload, the baselines
# and the peer) and writes JSON reports, a Markdown summary with ratios and
# targets, and SVG charts.
#
#   bench/run-all.sh                       # SQLite and PostgreSQL
#   ORCH_BENCH_BACKENDS=sqlite bench/run-all.sh
#   ORCH_BENCH_PG_URL='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/run-all.sh
#
# Baselines measured in the same session, beside orch:
#   SQLite      bench/raw/sqlite_engine.py (the engine alone, Python sqlite3,
#               one commit per step, then one commit per ORCH_BENCH_ENGINE_BATCH
#               steps) and the raw_sqlx example (same SQL through sqlx)
#   PostgreSQL  pgbench with bench/raw/pg_lifecycle.sql (one commit per step,
#               then ORCH_BENCH_ENGINE_BATCH steps per commit from
#               ORCH_BENCH_PG_WRITERS connections), and the peer
#               graphile-worker (bench/peers/graphile-worker: out of the box,
#               then with its own batching) on the same server
#
# The PostgreSQL URL names a server and a database to connect to for
# CREATE/DROP DATABASE: each run works in a fresh database it drops after.
# Results go to bench/results/<UTC time>/ (summary.md, one JSON per run, the
# charts as SVG); the charts are also copied to bench/charts/ (committed, for
# BENCHMARKS.md) unless ORCH_BENCH_PUBLISH=0.
# ORCH_BENCH_NO_BUILD=1 uses the release binaries already built.
# First run: creates bench/.venv (pinned matplotlib, bench/requirements.txt)
# and runs `npm ci` in bench/peers/graphile-worker; both from the package
# registries, nothing is downloaded after that.
# A full set takes about 6 minutes on a 2-core machine. Run it on a quiet
# machine: figures from a shared machine are not comparable.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${ORCH_BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
BACKENDS="${ORCH_BENCH_BACKENDS:-sqlite postgres}"
TASKS="${ORCH_BENCH_TASKS:-10000}"
AGENTS="${ORCH_BENCH_AGENTS:-32}"
SECONDS_PER_RUN="${ORCH_BENCH_SECONDS:-10}"
ENGINE_BATCH="${ORCH_BENCH_ENGINE_BATCH:-256}"
PG_WRITERS="${ORCH_BENCH_PG_WRITERS:-2}"
PUBLISH="${ORCH_BENCH_PUBLISH:-1}"
GW_DIR=bench/peers/graphile-worker
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"

if [ "${ORCH_BENCH_NO_BUILD:-0}" != 1 ]; then
  echo "building (release)..." >&2
  cargo build --release --locked -p orchestrator-cli --bin orch --example raw_sqlite_lifecycle >&2
fi
# CARGO_TARGET_DIR, when set, is where cargo builds anyway: no need to ask.
TARGET_DIR="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
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
  echo "temp dir: ${TMPDIR:-/tmp} on $(df --output=fstype "${TMPDIR:-/tmp}" 2>/dev/null | tail -1) (SQLite data of orch and the baselines)"
  echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

# Chart dependencies (pinned) and the peer's packages (locked), installed
# once; a missing tool skips the charts or the peer, never the whole set.
CHARTS=1
if [ ! -x bench/.venv/bin/python ]; then
  echo "creating bench/.venv (matplotlib, pinned)..." >&2
  if ! { python3 -m venv bench/.venv && bench/.venv/bin/pip install -q -r bench/requirements.txt; } >&2; then
    echo "warning: could not create bench/.venv: no charts" >&2
    rm -rf bench/.venv
    CHARTS=0
  fi
fi
PEER=1
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "warning: node/npm not found: no graphile-worker peer" >&2
  PEER=0
elif [ ! -d "$GW_DIR/node_modules" ]; then
  echo "npm ci in $GW_DIR..." >&2
  (cd "$GW_DIR" && npm ci --no-audit --no-fund >&2) || { echo "warning: npm ci failed: no graphile-worker peer" >&2; PEER=0; }
fi

# A fresh scratch database on the PostgreSQL server of PG_URL: prints its URL.
fresh_db() { # name
  psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >&2
  python3 -c 'import sys; u=sys.argv[1]; b,_,q=u.partition("?"); s=b.find("://")+3; h=b.find("/",s); b=b if h<0 else b[:h]; print(b+"/"+sys.argv[2]+("?"+q if q else ""))' "$PG_URL" "$1"
}
drop_db() { psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >&2; }

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
  # The same server with group commit off: every request commits alone.
  ORCH_GROUP_COMMIT_MAX=1 run "$backend" lifecycle-no-group-commit lifecycle --tasks "$TASKS" --agents "$AGENTS"
  run "$backend" claim-latency claim-latency --duration "$SECONDS_PER_RUN"
  run "$backend" ingest ingest --batch 500 --clients 8 --duration "$SECONDS_PER_RUN"
  run "$backend" stream stream --tasks 1000 --interval-ms 5
  if [ "$backend" = sqlite ]; then
    echo "== raw sqlite lifecycle" >&2
    "$RAW_SQLITE" --tasks "$TASKS" --agents "$AGENTS" > "$OUT/sqlite-raw.json"
    echo "== engine-only sqlite lifecycle (one commit per step)" >&2
    python3 bench/raw/sqlite_engine.py --tasks "$TASKS" --agents "$AGENTS" > "$OUT/sqlite-engine.json"
    echo "== engine-only sqlite lifecycle (one commit per $ENGINE_BATCH steps)" >&2
    python3 bench/raw/sqlite_engine.py --tasks "$TASKS" --agents "$AGENTS" --batch "$ENGINE_BATCH" > "$OUT/sqlite-engine-batch.json"
  else
    echo "== raw postgres lifecycle (pgbench)" >&2
    db="orch_bench_raw_$$"
    raw_url="$(fresh_db "$db")"
    psql "$raw_url" -q -f bench/raw/pg_schema.sql
    pgbench -n -f bench/raw/pg_lifecycle.sql -c "$AGENTS" -j 2 -T "$SECONDS_PER_RUN" "$raw_url" > "$OUT/postgres-raw.txt" 2>&1 || true
    # The same SQL with ENGINE_BATCH steps per commit from a small writer set:
    # the group-commit ceiling on PostgreSQL (tasks/s = tps * lifecycles).
    echo "== raw postgres lifecycle, $((ENGINE_BATCH / 4)) lifecycles per transaction, $PG_WRITERS writers (pgbench)" >&2
    python3 bench/raw/pg_lifecycle_batched.py "$(( ENGINE_BATCH / 4 > 0 ? ENGINE_BATCH / 4 : 1 ))" > "$OUT/pg_lifecycle_batched.sql"
    pgbench -n -f "$OUT/pg_lifecycle_batched.sql" -c "$PG_WRITERS" -j "$PG_WRITERS" -T "$SECONDS_PER_RUN" "$raw_url" > "$OUT/postgres-raw-batch.txt" 2>&1 || true
    drop_db "$db"
    if [ "$PEER" = 1 ]; then
      # Out of the box, then with graphile-worker's own batching (a local
      # queue of agents+1 jobs per fetch, completions batched): the peer's
      # best answer to the same group-commit idea.
      for variant in default batched; do
        echo "== peer graphile-worker ($variant): $TASKS no-op jobs, $AGENTS clients, concurrency $AGENTS" >&2
        db="orch_bench_gw_$$"
        gw_url="$(fresh_db "$db")"
        extra=()
        [ "$variant" = batched ] && extra=(--local-queue "$((AGENTS + 1))" --complete-batch-delay 0)
        suffix=""
        [ "$variant" = batched ] && suffix="-batched"
        node "$GW_DIR/bench.js" --url "$gw_url" --jobs "$TASKS" --clients "$AGENTS" --concurrency "$AGENTS" "${extra[@]}" \
          > "$OUT/postgres-graphile-worker$suffix.json" || echo "warning: graphile-worker ($variant) failed" >&2
        drop_db "$db"
      done
    fi
  fi
done

if [ "$CHARTS" = 1 ]; then
  publish=()
  [ "$PUBLISH" = 1 ] && publish=(--publish bench/charts)
  bench/.venv/bin/python bench/charts.py "$OUT" "${publish[@]}" >&2 || echo "warning: charts failed" >&2
fi
python3 bench/summarise.py "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"
echo "reports in $OUT" >&2
