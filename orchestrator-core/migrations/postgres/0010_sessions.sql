-- Sessions: one row per refresh family. Access tokens name their session
-- (the `sid` claim) and every request authenticated by one checks that the
-- session is not revoked, so revoking a family (reuse of a rotated refresh
-- token, logout) also ends the access tokens issued from it. A refresh
-- updates the row (`refreshed_at`) under the `revoked_at IS NULL` guard, so a
-- rotation and a revocation of one family are serialised on this row.
CREATE TABLE auth_sessions (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    created_at    TIMESTAMPTZ NOT NULL,
    refreshed_at  TIMESTAMPTZ,
    revoked_at    TIMESTAMPTZ
);

-- Families opened before this table: a family with any revoked token was
-- revoked as a whole.
INSERT INTO auth_sessions (id, tenant_id, created_at, revoked_at)
SELECT f.family_id,
       (SELECT r.tenant_id FROM refresh_sessions r WHERE r.family_id = f.family_id LIMIT 1),
       f.created_at,
       f.revoked_at
FROM (SELECT family_id, MIN(created_at) AS created_at, MAX(revoked_at) AS revoked_at
      FROM refresh_sessions GROUP BY family_id) f;
