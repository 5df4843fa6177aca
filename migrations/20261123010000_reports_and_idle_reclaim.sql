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
-- GPU. The same rule as `app::rules::tokenomics::gpus_per_unit`.
CREATE FUNCTION gpu_share(kind text) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(least(substring(kind FROM '^nvidia\.com/mig-([0-9]+)g')::double precision / 7, 1), 1);
