-- The waitlist: requests refused for capacity or quota that wait for exactly
-- their window. When capacity frees, the earliest entry (by `seq`, per
-- pool+kind) that now fits is admitted through the same admission path and
-- points at its booking; an entry whose window starts unadmitted expires.

CREATE TABLE waitlist_entry (
    id          uuid PRIMARY KEY,
    -- FIFO order: assigned under the kind's admission lock, so it is the order
    -- in which the entries were refused.
    seq         bigint GENERATED ALWAYS AS IDENTITY CONSTRAINT waitlist_entry_seq_key UNIQUE,
    pool_id     uuid NOT NULL,
    kind        text NOT NULL,
    user_id     uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    tenant_id   uuid NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    quantity    integer NOT NULL CHECK (quantity > 0),
    mode        text NOT NULL CHECK (mode IN ('interactive', 'inference')),
    image       text,
    note        text NOT NULL DEFAULT '',
    starts_at   timestamptz NOT NULL,
    ends_at     timestamptz NOT NULL CHECK (ends_at > starts_at),
    state       text NOT NULL DEFAULT 'waiting'
                CONSTRAINT waitlist_entry_state_known CHECK (state IN ('waiting', 'admitted', 'expired', 'left', 'closed')),
    -- Set exactly when admitted; unique, so no entry becomes two bookings.
    booking_id  uuid CONSTRAINT waitlist_entry_booking_key UNIQUE REFERENCES booking (id) ON DELETE SET NULL,
    -- Why it left the list, in words the requester reads.
    reason      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- When it left the waiting state: the clock at the change, not the
    -- transaction's start (a promotion may wait long for the kind's lock),
    -- so the order of these times is the order of the changes.
    resolved_at timestamptz,
    -- A kind that disappears takes its waiting entries with it.
    CONSTRAINT waitlist_entry_pool_kind_fkey FOREIGN KEY (pool_id, kind) REFERENCES pool_kind (pool_id, kind) ON DELETE CASCADE
);

-- Promotion reads one kind's waiting entries in order.
CREATE INDEX waitlist_entry_waiting ON waitlist_entry (pool_id, kind, seq) WHERE state = 'waiting';
CREATE INDEX waitlist_entry_by_user ON waitlist_entry (user_id, created_at DESC);
