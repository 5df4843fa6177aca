-- Issue 36: what a pool tells the cluster's schedulers (both only act with
-- the worker's `--kueue` / `--scale-ahead` switches).
--
-- A kind that lends its idle booked units (`lend_idle`): a session of it may
-- lend its whole booking to the pool's backfill ClusterQueue, whose Jobs are
-- preempted the moment the session's owner submits work. The backfill
-- LocalQueue lives in the namespace the admin names here.
ALTER TABLE pool_kind ADD COLUMN lend_idle boolean NOT NULL DEFAULT false;
ALTER TABLE pool
    ADD COLUMN backfill_namespace text
        CONSTRAINT pool_backfill_namespace_dns_label
        CHECK (backfill_namespace ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
    -- The pool's own lead time for room held ahead of a window; NULL follows
    -- the site's `--scale-ahead`, 0 holds none for this pool.
    ADD COLUMN scale_ahead_minutes integer
        CONSTRAINT pool_scale_ahead_minutes_range CHECK (scale_ahead_minutes BETWEEN 0 AND 1440);

-- Booked units the pool's backfill queue used, measured by the worker from
-- the backfill ClusterQueue's usage, per hour: unit-seconds, so GPU-hours
-- are `unit_seconds / 3600 * gpu_share(pool, kind)` like every other figure.
CREATE TABLE lent_hour (
    pool_id uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    kind text NOT NULL,
    hour timestamptz NOT NULL CHECK (date_trunc('hour', hour) = hour),
    unit_seconds double precision NOT NULL CHECK (unit_seconds >= 0),
    PRIMARY KEY (pool_id, kind, hour)
);

-- The worker's last reading of each backfill queue's use: the next reading
-- credits these units for the time between (at most a few minutes: a
-- worker that was away does not credit what it did not see).
CREATE TABLE lent_sample (
    pool_id uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    kind text NOT NULL,
    at timestamptz NOT NULL,
    units double precision NOT NULL CHECK (units >= 0),
    PRIMARY KEY (pool_id, kind)
);

-- One pool's backfill per namespace: its LocalQueue is always `backfill`.
CREATE UNIQUE INDEX pool_backfill_namespace_once ON pool (backfill_namespace) WHERE backfill_namespace IS NOT NULL;
