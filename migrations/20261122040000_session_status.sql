-- What the provisioning worker last reported for a booking's session: each
-- step's state for the booking page, the workspace URL once it is ready, and
-- how many passes in a row failed (enough of them fail the booking). The
-- worker writes a row only when something in it changed, so a converged pass
-- stays write-free. Never holds the workspace's access token.
CREATE TABLE session_status (
    booking_id    uuid PRIMARY KEY REFERENCES booking (id) ON DELETE CASCADE,
    namespace     text NOT NULL,
    workspace_url text,
    -- [{"step": "...", "state": "done|working|failed", "detail": "..."}] in order.
    steps         jsonb NOT NULL DEFAULT '[]',
    failures      integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
