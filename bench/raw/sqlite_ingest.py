#!/usr/bin/env python3
"""Engine-only SQLite baseline for log ingest: what the SQLite library alone
does with the rows of ``orch bench ingest`` (batches of 500 tool-call rows),
with nothing in between (Python's stdlib ``sqlite3``, one thread, one
connection; no HTTP, no JSON bodies, no async driver).

Same storage set-up as the server (WAL, ``synchronous = NORMAL``) and the
``logs`` table of orchestrator-core/migrations/sqlite (0005, 0009): every
column and all five indexes. One transaction per batch. Two modes, each run
for ``--seconds``:

  bound      one multi-row INSERT of the batch with its 29 columns bound
             per row, as the server sends it (what the engine does with
             orch's statement; Python's binding of 14,500 values is in it)
  generated  the same rows made inside the engine by a recursive CTE: no
             binding at all, the table and its indexes alone (a ceiling)

  python3 bench/raw/sqlite_ingest.py [--batch 500] [--seconds 10]

Prints one JSON object: per mode rows_per_s and batches, plus the set-up.
"""
import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid

SCHEMA = """
CREATE TABLE logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id BLOB NOT NULL,
    created_at TEXT NOT NULL, trace_id BLOB, span_id BLOB, parent_span_id BLOB,
    source TEXT NOT NULL, category TEXT NOT NULL, level TEXT NOT NULL,
    operation TEXT NOT NULL, status TEXT, duration_ms INTEGER,
    payload TEXT NOT NULL, error TEXT, workspace_id BLOB, workflow_id BLOB,
    task_id BLOB, work_item_id BLOB, activation_id BLOB, stage_name TEXT,
    is_orchestrator_task INTEGER, execution_backend TEXT, tool_owner TEXT,
    role TEXT, actor_type TEXT, actor_id TEXT, actor_name TEXT,
    resource_type TEXT, resource_id TEXT, resource_name TEXT
);
CREATE INDEX logs_tenant_id ON logs (tenant_id, id);
CREATE INDEX logs_workflow ON logs (tenant_id, workflow_id, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX logs_task ON logs (tenant_id, task_id, id) WHERE task_id IS NOT NULL;
CREATE INDEX logs_operation ON logs (tenant_id, operation, id);
CREATE INDEX logs_trace ON logs (tenant_id, trace_id, id) WHERE trace_id IS NOT NULL;
"""

COLUMNS = (
    "tenant_id, created_at, trace_id, span_id, parent_span_id, source, category, level, "
    "operation, status, duration_ms, payload, error, workspace_id, workflow_id, task_id, "
    "work_item_id, activation_id, stage_name, is_orchestrator_task, execution_backend, "
    "tool_owner, role, actor_type, actor_id, actor_name, resource_type, resource_id, resource_name"
)

TENANT = uuid.UUID(int=1).bytes
ACTOR = str(uuid.UUID(int=2))


def open_db(directory):
    path = os.path.join(directory, "ingest.db")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(SCHEMA)
    return db


def bound(db, batch, seconds):
    """The server's statement: one multi-row INSERT, 29 values a row."""
    one = "(" + ",".join("?" * 29) + ")"
    sql = f"INSERT INTO logs ({COLUMNS}) VALUES " + ",".join([one] * batch)
    batches = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        values = []
        for i in range(batch):
            payload = json.dumps({"client": 0, "i": i, "cmd": "cargo test"}, separators=(",", ":"))
            values += [TENANT, now, None, None, None, "runtime", "tool", "info", "tool.exec",
                       "completed", i % 100, payload, None, None, None, None, None, None, None,
                       None, None, None, None, "api_key", ACTOR, None, None, None, None]
        db.execute("BEGIN IMMEDIATE")
        db.execute(sql, values)
        db.execute("COMMIT")
        batches += 1
    return batches, time.perf_counter() - start


def generated(db, batch, seconds):
    """The same rows built inside the engine: the table and indexes alone."""
    sql = (
        f"WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ?2 - 1) "
        f"INSERT INTO logs ({COLUMNS}) SELECT ?1, strftime('%Y-%m-%dT%H:%M:%fZ'), NULL, NULL, NULL, "
        "'runtime', 'tool', 'info', 'tool.exec', 'completed', i % 100, "
        "json_object('client', 0, 'i', i, 'cmd', 'cargo test'), NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL, NULL, NULL, NULL, NULL, 'api_key', ?3, NULL, NULL, NULL, NULL FROM s"
    )
    batches = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        db.execute("BEGIN IMMEDIATE")
        db.execute(sql, (TENANT, batch, ACTOR))
        db.execute("COMMIT")
        batches += 1
    return batches, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    result = {
        "workload": "sqlite-engine-ingest",
        "batch": args.batch,
        "sqlite_version": sqlite3.sqlite_version,
        "python": platform.python_version(),
    }
    with tempfile.TemporaryDirectory(prefix="orch-ingest-engine-") as directory:
        result["filesystem"] = os.popen(f"df --output=fstype {directory} | tail -1").read().strip() or "?"
        for name, mode in (("bound", bound), ("generated", generated)):
            db = open_db(os.path.join(directory))
            batches, elapsed = mode(db, args.batch, args.seconds)
            rows = db.execute("SELECT count(*) FROM logs").fetchone()[0]
            if rows != batches * args.batch:
                sys.exit(f"{name}: wrote {rows} rows, expected {batches * args.batch}")
            db.close()
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.remove(os.path.join(directory, "ingest.db" + suffix))
                except FileNotFoundError:
                    pass
            result[name] = {
                "batches": batches,
                "rows": rows,
                "seconds": round(elapsed, 3),
                "rows_per_s": round(rows / elapsed, 1),
            }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
