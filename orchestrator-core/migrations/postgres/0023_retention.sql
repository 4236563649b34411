-- Retention deletes idempotency records oldest first, in bounded chunks
-- (maintenance.rs); without this index every chunk would read the table.
CREATE INDEX idempotency_records_created ON idempotency_records (created_at);
