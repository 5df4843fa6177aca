-- Issue 12: what the reports count beyond bookings and measured use, and
-- each pool's idle-reclaim policy.

-- A booking cut short keeps the end it was booked with, and why it was cut:
-- the reports count the hours it returned and the no-shows.
ALTER TABLE booking ADD COLUMN planned_ends_at timestamptz;
ALTER TABLE booking ADD COLUMN released_as text
    CONSTRAINT booking_released_as_known CHECK (released_as IN ('ended_early', 'idle', 'no_show'));
-- Set while the sampler sees the booking's GPUs idle past the pool's limit;
-- its card warns the owner, and it is ended if they stay idle.
ALTER TABLE booking ADD COLUMN idle_since timestamptz;

-- Requests refused for capacity or quota (not the ones that joined the
-- waitlist, which keeps its own rows): unmet demand in the reports.
CREATE TABLE booking_refusal (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    pool_id   uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    kind      text NOT NULL,
    tenant_id uuid NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    user_id   uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    quantity  integer NOT NULL,
    starts_at timestamptz NOT NULL,
    ends_at   timestamptz NOT NULL,
    reason    text NOT NULL CONSTRAINT booking_refusal_reason_known CHECK (reason IN ('capacity', 'quota'))
);
CREATE INDEX booking_refusal_by_window ON booking_refusal (starts_at, ends_at);

-- Off unless a row says otherwise. A live booking whose GPUs stay below
-- `threshold_pct` for `idle_minutes` is warned; after `grace_minutes` more it
-- is ended. An interactive booking never opened and idle for `idle_minutes`
-- after its start is released as a no-show.
CREATE TABLE pool_idle_policy (
    pool_id       uuid PRIMARY KEY REFERENCES pool (id) ON DELETE CASCADE,
    enabled       boolean NOT NULL DEFAULT false,
    threshold_pct integer NOT NULL DEFAULT 5
                  CONSTRAINT pool_idle_threshold_range CHECK (threshold_pct BETWEEN 1 AND 100),
    idle_minutes  integer NOT NULL DEFAULT 30
                  CONSTRAINT pool_idle_minutes_range CHECK (idle_minutes BETWEEN 5 AND 1440),
    grace_minutes integer NOT NULL DEFAULT 30
                  CONSTRAINT pool_idle_grace_range CHECK (grace_minutes BETWEEN 5 AND 1440),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Reports read bookings by window across all pools.
CREATE INDEX usage_hour_by_hour ON usage_hour (hour);

-- Whole-GPU equivalents of one unit of a kind: a MIG slice `Ng` is N/7 of a
-- GPU. The same rule as `app::rules::tokenomics::gpus_per_unit`; string
-- functions rather than a regular expression, since reports call it per row.
CREATE FUNCTION gpu_share(kind text) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN kind LIKE 'nvidia.com/mig-%g.%'
                THEN least(split_part(substr(kind, 16), 'g', 1)::double precision / 7, 1)
                ELSE 1 END;

-- Roll-ups the reports read instead of a year of `usage_hour` (1.75 M rows
-- for 200 live sessions): per pool and hour (the trend, any zone), and per
-- UTC day, pool, tenant and user (the table; the period's partial days come
-- from `usage_hour`). Written by the sampler in the statement that writes
-- the minutes; busy and sampled are whole-GPU minutes.
CREATE TABLE usage_pool_hour (
    pool_id             uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    hour                timestamptz NOT NULL,
    busy_gpu_minutes    double precision NOT NULL,
    sampled_gpu_minutes double precision NOT NULL,
    simulated           boolean NOT NULL,
    PRIMARY KEY (pool_id, hour)
);
CREATE INDEX usage_pool_hour_by_hour ON usage_pool_hour (hour);

CREATE TABLE usage_day (
    day                 date NOT NULL,
    pool_id             uuid NOT NULL,
    tenant_id           uuid NOT NULL,
    user_id             uuid NOT NULL,
    busy_gpu_minutes    double precision NOT NULL,
    sampled_gpu_minutes double precision NOT NULL,
    simulated           boolean NOT NULL,
    PRIMARY KEY (day, pool_id, tenant_id, user_id)
);

INSERT INTO usage_pool_hour (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT u.pool_id, u.hour, sum(u.busy_unit_minutes * gpu_share(b.kind)),
           sum(u.samples * b.quantity * gpu_share(b.kind)), bool_or(u.simulated)
    FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY u.pool_id, u.hour;
INSERT INTO usage_day (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT (u.hour AT TIME ZONE 'UTC')::date, u.pool_id, u.tenant_id, u.user_id,
           sum(u.busy_unit_minutes * gpu_share(b.kind)), sum(u.samples * b.quantity * gpu_share(b.kind)), bool_or(u.simulated)
    FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2, 3, 4;
