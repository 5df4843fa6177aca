-- Tenant quotas per pool+kind, the pool's time zone (weekly quotas count ISO
-- weeks in it), and the audit trail of admin actions (booking changes keep
-- theirs in booking_event).

ALTER TABLE pool ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';

CREATE TABLE tenant_quota (
    tenant_id          uuid NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    pool_id            uuid NOT NULL,
    kind               text NOT NULL,
    -- NULL: no limit.
    max_units          integer CONSTRAINT tenant_quota_max_units_not_negative CHECK (max_units >= 0),
    gpu_hours_per_week double precision
                       CONSTRAINT tenant_quota_hours_not_negative CHECK (gpu_hours_per_week >= 0),
    PRIMARY KEY (tenant_id, pool_id, kind),
    CONSTRAINT tenant_quota_pool_kind_fkey FOREIGN KEY (pool_id, kind)
        REFERENCES pool_kind (pool_id, kind) ON DELETE CASCADE
);

-- Weekly quotas read a tenant's bookings of one kind, including completed ones.
CREATE INDEX booking_by_tenant_kind ON booking (tenant_id, pool_id, kind, ends_at)
    WHERE state IN ('pending', 'approved', 'active', 'completed');

CREATE TABLE audit_event (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    actor_id  uuid REFERENCES app_user (id) ON DELETE SET NULL,
    -- e.g. tenant.create, quota.set, pool.update, user.disable
    action    text NOT NULL,
    -- What was acted on, as people name it (a tenant slug, a pool name, an email).
    target    text NOT NULL,
    tenant_id uuid REFERENCES tenant (id) ON DELETE SET NULL,
    pool_id   uuid REFERENCES pool (id) ON DELETE SET NULL,
    detail    text NOT NULL DEFAULT ''
);
CREATE INDEX audit_event_by_time ON audit_event (at);

-- The worker rejects pending bookings whose window opens unapproved, and
-- wakes up for the next such start.
CREATE INDEX booking_pending_by_start ON booking (starts_at) WHERE state = 'pending';

-- A retired pool takes no new bookings; the ones it has are kept.
ALTER TABLE pool ADD COLUMN retired_at timestamptz;

-- What each worker process last did, for the admins' worker page: written by
-- the worker after each pass (one row per process), read by the portal.
CREATE TABLE worker_process (
    name               text PRIMARY KEY,
    simulated          boolean NOT NULL,
    started_at         timestamptz NOT NULL DEFAULT now(),
    heartbeat_at       timestamptz NOT NULL DEFAULT now(),
    leading_since      timestamptz,
    start_pass_at      timestamptz,
    start_pass_ms      integer,
    start_pass_error   text,
    repair_pass_at     timestamptz,
    repair_pass_ms     integer,
    repair_pass_error  text,
    next_wake_at       timestamptz,
    sweep_at           timestamptz,
    sweep_collected    text[] NOT NULL DEFAULT '{}',
    sweep_stuck        text[] NOT NULL DEFAULT '{}'
);

-- Maintenance windows: while one lasts, its pool (or one kind of it) takes no
-- new bookings or extensions; bookings it overlapped were kept or canceled
-- by the admin who created it.
CREATE TABLE blackout (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    pool_id    uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    -- NULL: every kind of the pool.
    kind       text,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    reason     text NOT NULL CONSTRAINT blackout_reason_given CHECK (reason <> ''),
    created_by uuid REFERENCES app_user (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT blackout_window_not_empty CHECK (ends_at > starts_at)
);
CREATE INDEX blackout_by_pool ON blackout (pool_id, ends_at);
