-- Berth's core schema: who books (users, tenants), what can be booked (pools
-- and their resource kinds), the bookings themselves, their audit trail, and
-- API tokens. Constraint names are part of the API contract: the services map
-- them to client errors.

CREATE TABLE tenant (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug       text NOT NULL CONSTRAINT tenant_slug_key UNIQUE
               CONSTRAINT tenant_slug_format CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$'),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE app_user (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email        text NOT NULL CONSTRAINT app_user_email_key UNIQUE,
    name         text NOT NULL,
    role         text NOT NULL DEFAULT 'user'
                 CONSTRAINT app_user_role_known CHECK (role IN ('user', 'admin', 'manager')),
    -- OIDC identity; a user is identified by issuer + subject because email may change.
    oidc_issuer  text,
    oidc_subject text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT app_user_oidc_key UNIQUE (oidc_issuer, oidc_subject)
);

CREATE TABLE membership (
    user_id   uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    tenant_id uuid NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, tenant_id)
);

CREATE TABLE pool (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text NOT NULL CONSTRAINT pool_name_key UNIQUE,
    description         text NOT NULL DEFAULT '',
    gpu_model           text NOT NULL DEFAULT '',
    node_selector       jsonb NOT NULL DEFAULT '{}',
    requires_approval   boolean NOT NULL DEFAULT false,
    -- 1440 must be a multiple so that day boundaries are always slot boundaries.
    granularity_minutes integer NOT NULL DEFAULT 15
                        CONSTRAINT pool_granularity_divides_day CHECK (granularity_minutes > 0 AND 1440 % granularity_minutes = 0),
    max_booking_minutes integer NOT NULL DEFAULT 10080 CONSTRAINT pool_max_booking_positive CHECK (max_booking_minutes > 0),
    horizon_days        integer NOT NULL DEFAULT 28 CONSTRAINT pool_horizon_positive CHECK (horizon_days > 0),
    min_notice_minutes  integer NOT NULL DEFAULT 0 CONSTRAINT pool_min_notice_not_negative CHECK (min_notice_minutes >= 0),
    -- A showback estimate in the organisation's currency, not a billing amount.
    price_per_unit_hour double precision NOT NULL DEFAULT 0 CONSTRAINT pool_price_not_negative CHECK (price_per_unit_hour >= 0),
    images              text[] NOT NULL DEFAULT '{}',
    created_at          timestamptz NOT NULL DEFAULT now()
);

-- Which tenants may book a pool; a pool without rows here is open to every tenant.
CREATE TABLE pool_tenant (
    pool_id   uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    tenant_id uuid NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    PRIMARY KEY (pool_id, tenant_id)
);

CREATE TABLE pool_kind (
    pool_id              uuid NOT NULL REFERENCES pool (id) ON DELETE CASCADE,
    -- The extended resource name: nvidia.com/gpu or a MIG profile such as nvidia.com/mig-1g.24gb.
    kind                 text NOT NULL CONSTRAINT pool_kind_name_format CHECK (kind ~ '^nvidia\.com/(gpu|mig-[0-9]+g\.[0-9]+gb)$'),
    -- Physical units; the capacity invariant counts these, never time-slice replicas.
    capacity             integer NOT NULL CONSTRAINT pool_kind_capacity_not_negative CHECK (capacity >= 0),
    replicas_per_unit    integer NOT NULL DEFAULT 1 CONSTRAINT pool_kind_replicas_positive CHECK (replicas_per_unit >= 1),
    vram_gb_per_unit     integer NOT NULL DEFAULT 0 CHECK (vram_gb_per_unit >= 0),
    cpu_millis_per_unit  integer NOT NULL DEFAULT 4000 CHECK (cpu_millis_per_unit >= 0),
    memory_mib_per_unit  integer NOT NULL DEFAULT 32768 CHECK (memory_mib_per_unit >= 0),
    storage_gib_per_unit integer NOT NULL DEFAULT 100 CHECK (storage_gib_per_unit >= 0),
    PRIMARY KEY (pool_id, kind)
);

CREATE TABLE booking (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    pool_id    uuid NOT NULL,
    kind       text NOT NULL,
    user_id    uuid NOT NULL REFERENCES app_user (id),
    tenant_id  uuid NOT NULL REFERENCES tenant (id),
    quantity   integer NOT NULL CONSTRAINT booking_quantity_positive CHECK (quantity > 0),
    mode       text NOT NULL CONSTRAINT booking_mode_known CHECK (mode IN ('interactive', 'inference')),
    image      text NOT NULL DEFAULT '',
    note       text NOT NULL DEFAULT '',
    -- Half-open window [starts_at, ends_at).
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    state      text NOT NULL CONSTRAINT booking_state_known
               CHECK (state IN ('pending', 'approved', 'active', 'completed', 'canceled', 'rejected', 'failed')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT booking_window_not_empty CHECK (ends_at > starts_at),
    -- RESTRICT: a kind with bookings cannot silently disappear.
    CONSTRAINT booking_pool_kind_fkey FOREIGN KEY (pool_id, kind) REFERENCES pool_kind (pool_id, kind) ON DELETE RESTRICT
);

-- Admission's overlap query reads only capacity-holding bookings of one pool and kind.
CREATE INDEX booking_live_by_window ON booking (pool_id, kind, ends_at, starts_at)
    WHERE state IN ('pending', 'approved', 'active');
CREATE INDEX booking_by_user ON booking (user_id, ends_at);
CREATE INDEX booking_by_window ON booking (ends_at, starts_at);

-- Every state change, including creation (from_state NULL). actor_id NULL means the system.
CREATE TABLE booking_event (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    booking_id uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    actor_id   uuid REFERENCES app_user (id),
    at         timestamptz NOT NULL DEFAULT now(),
    from_state text,
    to_state   text NOT NULL,
    reason     text NOT NULL DEFAULT ''
);
CREATE INDEX booking_event_by_booking ON booking_event (booking_id, at);

CREATE TABLE api_token (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '',
    -- SHA-256 of the token; the token itself is shown once and never stored.
    token_hash   bytea NOT NULL CONSTRAINT api_token_hash_key UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
