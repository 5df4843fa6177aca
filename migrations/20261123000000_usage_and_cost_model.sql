-- Issue 12: measured GPU use per booking, and each pool's cost model.

-- The worker's sampler writes one row per live booking and minute from the
-- DCGM metrics in Prometheus. `busy` is the mean over the booking's devices
-- (0-1: GPU_UTIL / 100, or GR_ENGINE_ACTIVE for a MIG slice). Minutes are
-- kept for 14 days (sparklines, idle detection); reports read `usage_hour`.
CREATE TABLE usage_minute (
    booking_id      uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    minute          timestamptz NOT NULL,
    busy            real NOT NULL CONSTRAINT usage_minute_busy_fraction CHECK (busy >= 0 AND busy <= 1),
    memory_used_mib real NOT NULL,
    power_w         real,
    devices         smallint NOT NULL,
    simulated       boolean NOT NULL,
    PRIMARY KEY (booking_id, minute)
);
CREATE INDEX usage_minute_by_minute ON usage_minute (minute);

-- The hourly roll-up, written in the same transaction as the minutes: a year
-- of 200 live sessions is 1.75 M rows instead of 105 M. `busy_unit_minutes`
-- is sum(busy x the booking's units) over the sampled minutes.
CREATE TABLE usage_hour (
    booking_id        uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    hour              timestamptz NOT NULL,
    pool_id           uuid NOT NULL,
    tenant_id         uuid NOT NULL,
    user_id           uuid NOT NULL,
    samples           integer NOT NULL,
    busy_unit_minutes double precision NOT NULL,
    memory_max_mib    real NOT NULL,
    energy_wh         double precision NOT NULL,
    simulated         boolean NOT NULL,
    PRIMARY KEY (booking_id, hour)
);
CREATE INDEX usage_hour_by_pool ON usage_hour (pool_id, hour);
CREATE INDEX usage_hour_by_tenant ON usage_hour (tenant_id, hour);

-- Minutes the sampler could not read Prometheus: shown as gaps, never filled in.
CREATE TABLE usage_gap (
    minute timestamptz PRIMARY KEY,
    reason text NOT NULL
);

-- Tokenomics inputs per pool (managers and admins edit them; audited).
CREATE TABLE pool_cost_model (
    pool_id    uuid PRIMARY KEY REFERENCES pool (id) ON DELETE CASCADE,
    model      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by uuid REFERENCES app_user (id) ON DELETE SET NULL
);

-- When a booking's owner (or co-owner) last opened the workspace through the
-- portal: the simulated cluster's GPUs are busy while it is open, and a
-- session never opened and idle after its start is a no-show.
CREATE TABLE workspace_open (
    booking_id uuid PRIMARY KEY REFERENCES booking (id) ON DELETE CASCADE,
    first_at   timestamptz NOT NULL DEFAULT now(),
    last_at    timestamptz NOT NULL DEFAULT now()
);
