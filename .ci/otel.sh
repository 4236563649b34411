#!/usr/bin/env bash
# The optional `otel` feature (OTLP trace export), off in the default build:
# clippy with it on, then its one test (a loopback OTLP receiver gets the
# request spans) on SQLite and on a PostgreSQL database made for it here and
# dropped at the end. Called by .ci/run after its clippy stage; PGHOST,
# PGPORT and PGUSER come from there (or the defaults below).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}" "${PGUSER:=postgres}"
export PGHOST PGPORT PGUSER

echo "== otel: cargo clippy --features otel -- -D warnings"
cargo clippy --locked -p orchestrator-server -p orchestrator-cli --features otel -- -D warnings

OTEL_TEST=(cargo nextest run --locked -p orchestrator-tests --features otel --test otel)

echo "== otel: tests/otel.rs on SQLite"
env -u ORCH_TEST_DATABASE_URL "${OTEL_TEST[@]}"

OTEL_DB="orch_otel_$(date +%s)_$$"
drop_otel_databases() {
    psql -d postgres -qtAc "SELECT datname FROM pg_database WHERE datname LIKE '${OTEL_DB}%'" 2>/dev/null \
        | while read -r db; do psql -d postgres -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; done
}
trap drop_otel_databases EXIT
psql -d postgres -qc "CREATE DATABASE \"$OTEL_DB\""
echo "== otel: tests/otel.rs on PostgreSQL ($OTEL_DB)"
ORCH_TEST_DATABASE_URL="postgres://$PGUSER@$PGHOST:$PGPORT/$OTEL_DB?sslmode=disable" "${OTEL_TEST[@]}"
