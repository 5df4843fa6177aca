-- Issue 46: when a window ends, its pods get SIGTERM and the pool's grace
-- period before they are stopped (at most 30 s: policy
-- berth-session-devices caps what any session pod may ask for).
ALTER TABLE pool
    ADD COLUMN end_grace_seconds integer NOT NULL DEFAULT 30
        CONSTRAINT pool_end_grace_range CHECK (end_grace_seconds BETWEEN 0 AND 30);
