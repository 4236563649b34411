-- Flow limits: the rows of a new task's concurrency key, and of the group
-- without a key that fair claiming orders by, made by the task's INSERT.
--
-- The create made them with a statement of its own, and on SQLite every
-- statement of the writer costs two thread hand-offs (the writer's task to
-- sqlx's worker thread and back), which made a keyed create twice the work
-- of a plain one (`orch bench limits`). PostgreSQL makes them with one
-- statement per write batch (`tasks::insert`), so it needs no trigger.
CREATE TRIGGER tasks_concurrency_key_rows AFTER INSERT ON tasks
WHEN NEW.concurrency_key IS NOT NULL
BEGIN
    INSERT INTO concurrency_keys (tenant_id, key, created_at, updated_at)
    VALUES (NEW.tenant_id, NEW.concurrency_key, NEW.created_at, NEW.created_at),
           (NEW.tenant_id, '', NEW.created_at, NEW.created_at)
    ON CONFLICT (tenant_id, key) DO NOTHING;
END;
