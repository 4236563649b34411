-- Outbound webhooks and bulk actions (issue 32).
--
-- `webhooks.secret` (and `previous_secret` during a rotation's 24 h
-- overlap) are sealed with the deployment's key, bound to the webhook.
-- `event_types` is a JSON array of exact types or `prefix.*` patterns.
CREATE TABLE webhooks (
    id                        UUID PRIMARY KEY,
    tenant_id                 UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    url                       TEXT NOT NULL,
    description               TEXT,
    event_types               JSONB NOT NULL,
    workspace_id              UUID,
    enabled                   BOOLEAN NOT NULL,
    secret                    TEXT NOT NULL,
    previous_secret           TEXT,
    previous_secret_until     TIMESTAMPTZ,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhooks_tenant_created ON webhooks (tenant_id, created_at DESC, id DESC);
CREATE INDEX webhooks_enabled ON webhooks (tenant_id) WHERE enabled;

-- One row per delivery attempt. `id` is the delivery (the `webhook-id`
-- header, the same on every attempt of one event to one webhook); the
-- outbox writes attempt 1 in the transaction that writes the event. A
-- failed attempt with retries left writes the next one, so at most one
-- attempt of a delivery is pending (unique index) and each attempt number
-- exists once. `locked_until` is the lease of the replica sending it.
CREATE TABLE webhook_deliveries (
    row_id                    UUID PRIMARY KEY,
    id                        UUID NOT NULL,
    tenant_id                 UUID NOT NULL,
    webhook_id                UUID NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id                  BIGINT NOT NULL,
    event_type                TEXT NOT NULL,
    attempt                   INTEGER NOT NULL,
    status                    TEXT NOT NULL,
    response_status           INTEGER,
    last_error                TEXT,
    next_attempt_at           TIMESTAMPTZ NOT NULL,
    locked_until              TIMESTAMPTZ,
    duration_ms               BIGINT,
    created_at                TIMESTAMPTZ NOT NULL,
    delivered_at              TIMESTAMPTZ
);
CREATE UNIQUE INDEX webhook_deliveries_attempt ON webhook_deliveries (id, attempt);
CREATE UNIQUE INDEX webhook_deliveries_one_pending ON webhook_deliveries (id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, attempt DESC);

-- Bulk actions: the matched set is fixed at creation (`bulk_action_items`,
-- in order); the background runner applies them in chunks, each chunk one
-- transaction that sets the items' outcomes and the counts together.
-- `actor_*` is who created it: the entities' events name them.
CREATE TABLE bulk_actions (
    id                        UUID PRIMARY KEY,
    tenant_id                 UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    target                    TEXT NOT NULL,
    action                    TEXT NOT NULL,
    status                    TEXT NOT NULL,
    dry_run                   BOOLEAN NOT NULL,
    run_at                    TIMESTAMPTZ,
    reason                    TEXT,
    matched                   BIGINT NOT NULL,
    succeeded                 BIGINT NOT NULL,
    skipped                   BIGINT NOT NULL,
    failed                    BIGINT NOT NULL,
    actor_key_id              UUID NOT NULL,
    actor_type                TEXT NOT NULL,
    actor_id                  UUID,
    locked_until              TIMESTAMPTZ,
    created_at                TIMESTAMPTZ NOT NULL,
    finished_at               TIMESTAMPTZ
);
CREATE INDEX bulk_actions_tenant_created ON bulk_actions (tenant_id, created_at DESC, id DESC);
CREATE INDEX bulk_actions_running ON bulk_actions (created_at) WHERE status = 'running';

CREATE TABLE bulk_action_items (
    bulk_action_id            UUID NOT NULL REFERENCES bulk_actions(id) ON DELETE CASCADE,
    position                  INTEGER NOT NULL,
    entity_id                 UUID NOT NULL,
    outcome                   TEXT,
    PRIMARY KEY (bulk_action_id, position)
);
