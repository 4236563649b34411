-- Whether the operator has been given an admin key of the default tenant
-- (a generated one printed by a start that succeeded, a configured one, or
-- one made by `orch admin create-key`). A database set up before this
-- marker existed had its key shown by that first start.
INSERT INTO server_secrets (name, value, created_at)
SELECT 'bootstrap:admin:shown', 'done', created_at FROM server_secrets WHERE name = 'bootstrap:admin';
