#!/usr/bin/env python3
"""Engine-only SQLite baseline: orch's task lifecycle with nothing but the
SQLite library in between (Python's stdlib ``sqlite3``, one thread, one
connection; no HTTP, no auth, no JSON envelopes, no async driver).

It answers "how fast could the database engine alone go with the commits the
server makes", the physical anchor for ``orch bench lifecycle --embedded
sqlite``. Same storage set-up as the server (WAL, ``synchronous = NORMAL``),
tables shaped like orch's ``tasks`` and ``events`` (every column and every
index from orchestrator-core/migrations/sqlite, no foreign keys), and per
task the four steps the server runs:

  create    INSERT the task + INSERT its ``task.created`` event
  claim     UPDATE ... RETURNING the oldest pending task (the claim-index
            shape, skipped when the agent already holds one) + an event
  start     UPDATE claimed -> in_progress + an event
  complete  UPDATE in_progress -> completed + an event

All N tasks are created first, then drained by ``--agents`` agent ids taking
turns (as ``orch bench lifecycle`` creates, then drains).

  --batch 1   (default) each step is its own transaction: one commit per
              step, as the server does today (one commit per request).
  --batch N   commit every N steps: the ceiling a group commit of N waiting
              requests could reach on this engine.

  python3 bench/raw/sqlite_engine.py --tasks 10000 --agents 32 [--batch 256]

Prints one JSON object: tasks, seconds, tasks_per_s, steps_per_s (4 steps a
task), create_per_s, drain_tasks_per_s, commits.
"""
import argparse
import datetime
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid

TENANT = uuid.UUID(int=1).bytes

# The columns and indexes of orch's `tasks` and `events` tables
# (orchestrator-core/migrations/sqlite 0001, 0003, 0004, 0006, 0007, 0009),
# without the foreign keys, as bench/raw/pg_schema.sql does for PostgreSQL.
SCHEMA = """
CREATE TABLE tasks (
    id                   BLOB PRIMARY KEY NOT NULL,
    tenant_id            BLOB NOT NULL,
    title                TEXT NOT NULL,
    type                 TEXT NOT NULL,
    task_kind            TEXT NOT NULL,
    description          TEXT,
    priority             TEXT NOT NULL,
    priority_rank        INTEGER NOT NULL,
    state                TEXT NOT NULL,
    workflow_id          BLOB,
    work_item_id         BLOB,
    workspace_id         BLOB,
    activation_id        BLOB,
    stage_name           TEXT,
    role                 TEXT,
    required_tags        TEXT NOT NULL,
    input                TEXT NOT NULL,
    context              TEXT NOT NULL,
    output               TEXT,
    error                TEXT,
    metrics              TEXT,
    git_info             TEXT,
    verification         TEXT,
    execution_backend    TEXT NOT NULL,
    timeout_minutes      INTEGER NOT NULL,
    token_budget         DOUBLE PRECISION,
    cost_cap_usd         DOUBLE PRECISION,
    max_iterations       INTEGER,
    llm_max_retries      INTEGER,
    auto_retry           INTEGER NOT NULL,
    max_retries          INTEGER NOT NULL,
    retry_count          INTEGER NOT NULL,
    metadata             TEXT NOT NULL,
    assigned_agent_id    BLOB,
    assigned_worker_id   BLOB,
    preferred_agent_id   BLOB,
    preferred_worker_id  BLOB,
    claimed_at           TEXT,
    started_at           TEXT,
    completed_at         TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    execution_environment_id BLOB,
    execution_environment TEXT
);
CREATE INDEX tasks_claimable ON tasks (tenant_id, priority_rank DESC, created_at, id) WHERE state = 'pending';
CREATE INDEX tasks_claimable_preferred_agent ON tasks (preferred_agent_id, priority_rank DESC, created_at, id) WHERE state = 'pending' AND preferred_agent_id IS NOT NULL;
CREATE INDEX tasks_claimable_preferred_worker ON tasks (preferred_worker_id, priority_rank DESC, created_at, id) WHERE state = 'pending' AND preferred_worker_id IS NOT NULL;
CREATE UNIQUE INDEX tasks_held_by_agent ON tasks (assigned_agent_id) WHERE state IN ('claimed', 'in_progress');
CREATE INDEX tasks_held_since ON tasks (claimed_at) WHERE state IN ('claimed', 'in_progress');
CREATE INDEX tasks_tenant_created ON tasks (tenant_id, created_at DESC, id DESC);
CREATE INDEX tasks_workflow ON tasks (workflow_id, state) WHERE workflow_id IS NOT NULL;
CREATE INDEX tasks_work_item ON tasks (work_item_id) WHERE work_item_id IS NOT NULL;
CREATE INDEX tasks_execution_environment ON tasks (execution_environment_id) WHERE execution_environment_id IS NOT NULL;

CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     BLOB NOT NULL,
    type          TEXT NOT NULL,
    entity_type   TEXT NOT NULL,
    entity_id     BLOB NOT NULL,
    workflow_id   BLOB,
    workspace_id  BLOB,
    actor_type    TEXT,
    actor_id      BLOB,
    data          TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX events_tenant_id ON events (tenant_id, id);
CREATE INDEX events_workflow ON events (workflow_id, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX events_workspace ON events (workspace_id, id) WHERE workspace_id IS NOT NULL;
CREATE INDEX events_entity ON events (entity_id, id);
"""

INSERT_TASK = """
INSERT INTO tasks (id, tenant_id, title, type, task_kind, priority, priority_rank, state,
    required_tags, input, context, execution_backend, timeout_minutes, auto_retry,
    max_retries, retry_count, metadata, created_at, updated_at)
VALUES (?, ?, 'bench task', 'analysis', 'standard', 'normal', 2, 'pending',
    '[]', ?, '{}', 'agent', 60, 0, 0, 0, '{}', ?, ?)
"""

# The server's claim (orchestrator-core/src/lifecycle/claim.rs) reduced to
# the branch a bench task takes: the oldest pending task with no preferred
# agent or worker and no required tags, unless the agent already holds one.
CLAIM = """
UPDATE tasks SET state = 'claimed', assigned_agent_id = ?1, assigned_worker_id = NULL,
    claimed_at = ?3, started_at = NULL, completed_at = NULL, updated_at = ?3
WHERE id = (SELECT t.id FROM tasks t
            WHERE t.state = 'pending' AND t.tenant_id = ?2
              AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL
              AND t.required_tags = '[]'
            ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1)
  AND NOT EXISTS (SELECT 1 FROM tasks h WHERE h.assigned_agent_id = ?1
                  AND h.state IN ('claimed', 'in_progress'))
RETURNING id
"""

START = """
UPDATE tasks SET state = 'in_progress', started_at = ?2, updated_at = ?2
WHERE id = ?1 AND state = 'claimed'
"""

COMPLETE = """
UPDATE tasks SET state = 'completed', output = '{"ok":true}', completed_at = ?2, updated_at = ?2
WHERE id = ?1 AND state = 'in_progress'
"""

EVENT = """
INSERT INTO events (tenant_id, type, entity_type, entity_id, data, created_at)
VALUES (?, ?, 'task', ?, ?, ?)
"""


def now():
    """The server's timestamp text (RFC 3339, UTC, microseconds)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def uuid7():
    """A time-ordered id (48-bit Unix milliseconds, version 7, random rest)."""
    ms = time.time_ns() // 1_000_000
    raw = bytearray(ms.to_bytes(6, "big") + os.urandom(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return bytes(raw)


def filesystem(path):
    """The type of the filesystem holding `path` (ext4, tmpfs, ...): per-step
    commits cost several times more on a disk filesystem than on tmpfs."""
    path = os.path.realpath(path)
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                point = fields[1]
                if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                    best, kind = point, fields[2]
    except OSError:
        pass
    return kind


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1, help="steps per commit (1 = one commit per step)")
    parser.add_argument("--ids", choices=("v4", "v7"), default="v4", help="task id kind (the server uses v4 today)")
    parser.add_argument("--db", help="database file (default: a fresh one in a temporary directory)")
    args = parser.parse_args()
    if args.tasks < 1 or args.agents < 1 or args.batch < 1:
        parser.error("--tasks, --agents and --batch must be at least 1")

    with tempfile.TemporaryDirectory(prefix="orch-sqlite-engine-") as tmp:
        path = args.db or os.path.join(tmp, "engine.db")
        # isolation_level=None: the module opens no transaction of its own;
        # BEGIN/COMMIT below are the only ones.
        db = sqlite3.connect(path, isolation_level=None, cached_statements=64)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA busy_timeout = 10000")
        db.executescript(SCHEMA)
        result = run(db, args)
        db.close()
        result["filesystem"] = filesystem(os.path.dirname(os.path.abspath(path)))
    result.update(
        sqlite_version=sqlite3.sqlite_version,
        python=platform.python_version(),
        cores=os.cpu_count(),
    )
    print(json.dumps(result))


def run(db, args):
    new_id = uuid7 if args.ids == "v7" else (lambda: uuid.uuid4().bytes)
    agents = [uuid.uuid4().bytes for _ in range(args.agents)]
    execute = db.execute
    pending = 0  # steps in the open transaction
    commits = 0

    def step_done():
        nonlocal pending, commits
        pending += 1
        if pending >= args.batch:
            execute("COMMIT")
            commits += 1
            pending = 0
            execute("BEGIN")

    started = time.perf_counter()
    execute("BEGIN")
    for n in range(args.tasks):
        task = new_id()
        at = now()
        execute(INSERT_TASK, (task, TENANT, f'{{"n":{n}}}', at, at))
        execute(EVENT, (TENANT, "task.created", task, '{"to_state":"pending"}', at))
        step_done()
    created_at = time.perf_counter()

    completed = 0
    for n in range(args.tasks):
        agent = agents[n % len(agents)]
        at = now()
        row = execute(CLAIM, (agent, TENANT, at)).fetchone()
        if row is None:
            break
        task = row[0]
        execute(EVENT, (TENANT, "task.state_changed", task, '{"from_state":"pending","to_state":"claimed"}', at))
        step_done()
        at = now()
        execute(START, (task, at))
        execute(EVENT, (TENANT, "task.state_changed", task, '{"from_state":"claimed","to_state":"in_progress"}', at))
        step_done()
        at = now()
        execute(COMPLETE, (task, at))
        execute(EVENT, (TENANT, "task.state_changed", task, '{"from_state":"in_progress","to_state":"completed"}', at))
        step_done()
        completed += 1
    execute("COMMIT")  # the last, partly filled batch (empty when pending == 0)
    commits += 1 if pending else 0
    finished = time.perf_counter()

    check = db.execute("SELECT count(*) FROM tasks WHERE state = 'completed'").fetchone()[0]
    if check != args.tasks or completed != args.tasks:
        sys.exit(f"sqlite_engine: {completed} lifecycles run, {check} tasks completed, expected {args.tasks}")
    seconds = finished - started
    r = lambda v: round(v, 1)  # noqa: E731
    return {
        "baseline": "sqlite_engine",
        "mode": "per-step" if args.batch == 1 else "batched",
        "batch": args.batch,
        "ids": args.ids,
        "tasks": args.tasks,
        "agents": args.agents,
        "tasks_completed": completed,
        "seconds": round(seconds, 3),
        "tasks_per_s": r(args.tasks / seconds),
        "steps_per_s": r(4 * args.tasks / seconds),
        "create_per_s": r(args.tasks / (created_at - started)),
        "drain_tasks_per_s": r(completed / (finished - created_at)),
        "commits": commits,
    }


if __name__ == "__main__":
    main()
