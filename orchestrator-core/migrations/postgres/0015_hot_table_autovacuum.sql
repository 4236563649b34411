-- The append-mostly hot tables get their own autovacuum and analyze
-- thresholds (tasks has had its own since 0004): orch should not depend on
-- the cluster's defaults for the statistics its hot statements are planned
-- with, nor for the visibility map its index-only scans need.
ALTER TABLE events SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);
ALTER TABLE logs SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);
