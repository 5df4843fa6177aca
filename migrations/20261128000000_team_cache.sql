-- Issue 46: a team's shared model cache. A pool may name a ReadWriteMany
-- storage class whose PersistentVolumes the cluster admin made for a tenant
-- (labelled berth.io/team-cache=<tenant>, all on the team's one backing
-- export); each session of that tenant on the pool binds a free one at
-- /models, so the team downloads a model once. NULL: caches are personal.
ALTER TABLE pool
    ADD COLUMN team_cache_class text
        CONSTRAINT pool_team_cache_class_name CHECK (team_cache_class ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$');

-- The session's model cache claim binds one of its team's volumes, of this
-- storage class (the volume column names it), not a kept volume of
-- anyone's. Recorded with the decision: the pool's setting may change
-- while the session runs, its claim cannot.
ALTER TABLE session_home
    ADD COLUMN team_class text;
