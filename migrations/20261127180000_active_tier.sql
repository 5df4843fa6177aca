-- Issue 48: reports count three tiers — booked, occupied (a pod of the
-- session held the device: the DCGM exporter attributed it, which is what
-- a sampled minute already means) and active (the device's engine was busy
-- at or above the site's threshold). `active_devices` is how many of a
-- booking's devices were active in the minute; the roll-ups carry active
-- unit- or GPU-minutes beside the busy and sampled ones. Minutes sampled
-- before this migration count as not active: they were never judged.
ALTER TABLE usage_minute ADD COLUMN active_devices smallint NOT NULL DEFAULT 0;
ALTER TABLE usage_hour ADD COLUMN active_unit_minutes double precision NOT NULL DEFAULT 0;
ALTER TABLE usage_pool_hour ADD COLUMN active_gpu_minutes double precision NOT NULL DEFAULT 0;
ALTER TABLE usage_day ADD COLUMN active_gpu_minutes double precision NOT NULL DEFAULT 0;
ALTER TABLE usage_month ADD COLUMN active_gpu_minutes double precision NOT NULL DEFAULT 0;

-- The threshold the sampler judged by, so reports can say it: one row,
-- written by the worker that samples (`berth worker --active-threshold`).
CREATE TABLE usage_policy (
    only_row         boolean PRIMARY KEY DEFAULT true CONSTRAINT usage_policy_one_row CHECK (only_row),
    active_threshold real NOT NULL CONSTRAINT usage_policy_threshold_fraction
                         CHECK (active_threshold > 0 AND active_threshold <= 1),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
