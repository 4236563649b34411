-- Reads of one entity's events (a task's stream, entity filters).
CREATE INDEX events_entity ON events (entity_id, id);
