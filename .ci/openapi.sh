#!/usr/bin/env bash
# The OpenAPI document's checks (issue 15):
#   1. openapi-spec-validator on docs/openapi.json (tests/openapi.rs keeps it
#      equal to what the server serves);
#   2. schemathesis against a real `orch serve` with an admin key, on SQLite and
#      (when ORCH_FUZZ_POSTGRES_URL is set) on PostgreSQL: no 5xx, every
#      response matches its schema. Deterministic (fixed seed, derandomized
#      generation, no example database) and bounded (--max-examples).
# Both tools come pinned from PyPI into a virtualenv (ORCH_OPENAPI_VENV,
# default /tmp/orch-openapi-venv).
#
#   .ci/openapi.sh                      # SQLite only
#   ORCH_FUZZ_POSTGRES_URL=postgres://... .ci/openapi.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# openapi-spec-validator 0.9.0 and schemathesis 4.32.5, every dependency pinned.
REQUIREMENTS=.ci/openapi-requirements.txt
VENV="${ORCH_OPENAPI_VENV:-/tmp/orch-openapi-venv}"
MAX_EXAMPLES="${ORCH_FUZZ_MAX_EXAMPLES:-15}"
SEED=15

if ! cmp -s "$REQUIREMENTS" "$VENV/installed-requirements.txt"; then
    echo "== installing $REQUIREMENTS into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS"
    cp "$REQUIREMENTS" "$VENV/installed-requirements.txt"
fi

echo "== openapi-spec-validator docs/openapi.json"
"$VENV/bin/openapi-spec-validator" docs/openapi.json

[ -n "${ORCH_FUZZ_SKIP_BUILD:-}" ] || cargo build --locked -q -p orchestrator-cli
ORCH_BIN="${CARGO_TARGET_DIR:-target}/debug/orch"

WORK="$(mktemp -d /tmp/orch-fuzz.XXXXXX)"
SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Streams never end and would only time out; logout ends the caller's
# session, and revoking keys would revoke the fuzzer's own (it finds the id in
# GET /api-keys).
EXCLUDE='^/api/v1/(tasks/\{id\}/stream|events/stream|logs/stream|a2a/tasks/\{id\}/events|auth/logout|api-keys/\{id\})$'

fuzz() {
    local name="$1" database_url="$2"
    local port key data
    port="$(free_port)"
    key="orch_admin_$(python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(32)))')"
    data="$WORK/$name"
    mkdir -p "$data"
    echo "== schemathesis on $name (max-examples $MAX_EXAMPLES, seed $SEED)"
    local database=()
    [ -n "$database_url" ] && database=(--database-url "$database_url")
    env -u ORCH_DATABASE_URL ORCH_BOOTSTRAP_ADMIN_KEY="$key" \
        "$ORCH_BIN" serve "${database[@]}" --listen "127.0.0.1:$port" --data-dir "$data" \
        --rate-limit-per-minute 0 --liveness-interval-seconds 3600 \
        >"$data/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 60); do
        curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
        sleep 0.5
    done
    local status=0
    # From the scratch directory: schemathesis keeps a cache in its cwd.
    (cd "$data" && "$VENV/bin/schemathesis" run "http://127.0.0.1:$port/api/v1/openapi.json" \
        --url "http://127.0.0.1:$port" \
        -H "Authorization: Bearer $key" \
        --checks not_a_server_error,response_schema_conformance \
        --phases examples,coverage,fuzzing \
        --max-examples "$MAX_EXAMPLES" --seed "$SEED" --generation-deterministic \
        --no-shrink --workers 1 --generation-with-security-parameters false \
        --request-timeout 20 \
        --exclude-path-regex "$EXCLUDE" \
        --no-color) || status=$?
    stop_server
    if [ "$status" -ne 0 ]; then
        echo "== schemathesis failed on $name; the server's log:"
        tail -50 "$data/server.log"
        return "$status"
    fi
}

fuzz sqlite ""
if [ -n "${ORCH_FUZZ_POSTGRES_URL:-}" ]; then
    fuzz postgres "$ORCH_FUZZ_POSTGRES_URL"
fi
