-- One orch task lifecycle as plain SQL, one pgbench "transaction" per task:
-- create, claim (FOR UPDATE SKIP LOCKED, oldest pending first), start,
-- complete; each step is its own transaction writing the task and one
-- event, as the server does. pgbench's tps is therefore tasks/s.
--   pgbench -n -f bench/raw/pg_lifecycle.sql -c 32 -j 2 -T 20 <db>
\set n random(1, 1000000000)
BEGIN;
INSERT INTO bench_tasks (id, tenant_id, title, type, priority_rank, state, required_tags, input, context, metadata, created_at, updated_at)
VALUES (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', 'bench task', 'analysis', 2, 'pending', '[]', jsonb_build_object('n', :n), '{}', '{}', now(), now())
RETURNING id AS new_id \gset
INSERT INTO bench_events (tenant_id, type, entity_type, entity_id, data, created_at)
VALUES ('00000000-0000-0000-0000-000000000001', 'task.created', 'task', ':new_id'::uuid, '{"to_state": "pending"}', now());
COMMIT;
BEGIN;
UPDATE bench_tasks SET state = 'claimed', assigned_agent_id = md5(:client_id || '')::uuid, claimed_at = now(), updated_at = now()
WHERE id = (SELECT t.id FROM bench_tasks t
            WHERE t.state = 'pending' AND t.tenant_id = '00000000-0000-0000-0000-000000000001'
              AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL
              AND t.required_tags <@ '[]'::jsonb
            ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1
            FOR UPDATE OF t SKIP LOCKED)
RETURNING id AS task_id \gset
INSERT INTO bench_events (tenant_id, type, entity_type, entity_id, data, created_at)
VALUES ('00000000-0000-0000-0000-000000000001', 'task.state_changed', 'task', ':task_id'::uuid, '{"from_state": "pending", "to_state": "claimed"}', now());
COMMIT;
BEGIN;
UPDATE bench_tasks SET state = 'in_progress', started_at = now(), updated_at = now()
WHERE id = ':task_id'::uuid AND state = 'claimed';
INSERT INTO bench_events (tenant_id, type, entity_type, entity_id, data, created_at)
VALUES ('00000000-0000-0000-0000-000000000001', 'task.state_changed', 'task', ':task_id'::uuid, '{"from_state": "claimed", "to_state": "in_progress"}', now());
COMMIT;
BEGIN;
UPDATE bench_tasks SET state = 'completed', output = '{"ok": true}', completed_at = now(), updated_at = now()
WHERE id = ':task_id'::uuid AND state = 'in_progress';
INSERT INTO bench_events (tenant_id, type, entity_type, entity_id, data, created_at)
VALUES ('00000000-0000-0000-0000-000000000001', 'task.state_changed', 'task', ':task_id'::uuid, '{"from_state": "in_progress", "to_state": "completed"}', now());
COMMIT;
