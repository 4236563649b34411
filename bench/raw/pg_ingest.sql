-- Engine-only PostgreSQL baseline for log ingest, run by pgbench (see
-- bench/run-all.sh): one transaction inserts a batch of 500 rows shaped like
-- `orch bench ingest`'s into bench_logs (orch's `logs` table with its five
-- indexes, bench/raw/pg_schema.sql). The rows are made by the server itself
-- (generate_series): no parameters cross the wire, so this is a ceiling for
-- the table and its indexes, not for a client's statement.
-- rows/s = tps * 500.
INSERT INTO bench_logs (tenant_id, created_at, source, category, level, operation, status,
    duration_ms, payload, actor_type, actor_id)
SELECT '00000000-0000-0000-0000-000000000001', now(), 'runtime', 'tool', 'info', 'tool.exec',
    'completed', i % 100, jsonb_build_object('client', 0, 'i', i, 'cmd', 'cargo test'),
    'api_key', '00000000-0000-0000-0000-000000000002'
FROM generate_series(0, 499) AS i;
