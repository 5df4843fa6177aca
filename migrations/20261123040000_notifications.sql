-- Issue 14: notifications by email and webhook through an outbox.
--
-- A `notification` row is written in the same transaction as the change
-- that causes it — by triggers on the booking trail, the session report and
-- the idle mark, so no code path can change a booking and forget to tell —
-- or, for the times ("starts in 15 min", "ends in 15 min"), by the worker
-- with a key that makes a second insert a no-op. The worker then fans each
-- one out into deliveries (recipient × channel, by their preferences) in
-- one statement, and sends those, marking each delivered; a delivery's id is
-- its idempotency key (`X-Berth-Delivery`), so a resend after a crash
-- between send and mark carries the same key.
CREATE TABLE notification (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event         text NOT NULL CONSTRAINT notification_event_known CHECK (event IN (
                      'booking.pending', 'booking.approved', 'booking.rejected', 'waitlist.promoted',
                      'booking.starting', 'booking.ending', 'workspace.ready', 'booking.failed', 'booking.idle')),
    booking_id    uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    -- What makes two inserts the same event (e.g. the window's end for "ending").
    dedupe        text NOT NULL CONSTRAINT notification_dedupe_key UNIQUE,
    detail        text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    fanned_out_at timestamptz
);
CREATE INDEX notification_to_fan_out ON notification (created_at) WHERE fanned_out_at IS NULL;
CREATE INDEX notification_by_booking ON notification (booking_id);

-- Webhooks: a user's own (their bookings' events, as their preferences say)
-- or a tenant's (every event of the tenant's bookings; admins manage them).
CREATE TABLE webhook (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid REFERENCES app_user (id) ON DELETE CASCADE,
    tenant_id  uuid REFERENCES tenant (id) ON DELETE CASCADE,
    url        text NOT NULL CONSTRAINT webhook_url_length CHECK (length(url) <= 2000),
    -- Signs each body (HMAC-SHA256); the receiver was shown it once.
    secret     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT webhook_one_owner CHECK ((user_id IS NULL) <> (tenant_id IS NULL))
);
CREATE INDEX webhook_by_user ON webhook (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX webhook_by_tenant ON webhook (tenant_id) WHERE tenant_id IS NOT NULL;

-- Only the choices that differ from the default (every event on every channel).
CREATE TABLE notification_preference (
    user_id uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    event   text NOT NULL,
    channel text NOT NULL CONSTRAINT notification_preference_channel CHECK (channel IN ('email', 'webhook')),
    enabled boolean NOT NULL,
    PRIMARY KEY (user_id, event, channel)
);

CREATE TABLE notification_delivery (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    notification_id uuid NOT NULL REFERENCES notification (id) ON DELETE CASCADE,
    user_id         uuid REFERENCES app_user (id) ON DELETE CASCADE,
    channel         text NOT NULL CONSTRAINT notification_delivery_channel CHECK (channel IN ('email', 'webhook')),
    webhook_id      uuid REFERENCES webhook (id) ON DELETE CASCADE,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    gave_up_at      timestamptz,
    last_error      text NOT NULL DEFAULT '',
    CONSTRAINT notification_delivery_once UNIQUE NULLS NOT DISTINCT (notification_id, user_id, channel, webhook_id)
);
CREATE INDEX notification_delivery_due ON notification_delivery (next_attempt_at)
    WHERE delivered_at IS NULL AND gave_up_at IS NULL;

-- The booking trail's changes that someone wants to hear about. The
-- waitlist's reason is `WAITLIST_REASON` in app/src/backend/bookings/admit.rs;
-- an approved extension is recorded on the booking it extends.
CREATE FUNCTION notification_from_booking_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    kind text := CASE
        WHEN NEW.from_state IS NULL AND NEW.reason LIKE 'admitted from the waitlist%' THEN 'waitlist.promoted'
        WHEN NEW.to_state = 'pending' AND NEW.from_state IS NULL THEN 'booking.pending'
        WHEN NEW.from_state = 'pending' AND NEW.to_state = 'approved' THEN 'booking.approved'
        WHEN NEW.from_state = NEW.to_state AND NEW.reason LIKE 'extension to % approved%' THEN 'booking.approved'
        WHEN NEW.from_state = 'pending' AND NEW.to_state = 'rejected' THEN 'booking.rejected'
        WHEN NEW.to_state = 'failed' THEN 'booking.failed'
    END;
BEGIN
    IF kind IS NOT NULL THEN
        INSERT INTO notification (event, booking_id, dedupe, detail)
        VALUES (kind, NEW.booking_id, 'event:' || NEW.id, NEW.reason);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER booking_event_notifies AFTER INSERT ON booking_event
    FOR EACH ROW EXECUTE FUNCTION notification_from_booking_event();

-- The worker sets the workspace URL once the workspace reports ready.
CREATE FUNCTION notification_workspace_ready() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification (event, booking_id, dedupe, detail)
    VALUES ('workspace.ready', NEW.booking_id, 'ready:' || NEW.booking_id, NEW.workspace_url)
    ON CONFLICT (dedupe) DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER session_ready_insert_notifies AFTER INSERT ON session_status
    FOR EACH ROW WHEN (NEW.workspace_url IS NOT NULL) EXECUTE FUNCTION notification_workspace_ready();
CREATE TRIGGER session_ready_update_notifies AFTER UPDATE OF workspace_url ON session_status
    FOR EACH ROW WHEN (NEW.workspace_url IS NOT NULL AND OLD.workspace_url IS NULL)
    EXECUTE FUNCTION notification_workspace_ready();

-- Idle reclaim marks a live booking idle: its warning.
CREATE FUNCTION notification_idle_warning() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification (event, booking_id, dedupe)
    VALUES ('booking.idle', NEW.id, 'idle:' || NEW.id || ':' || extract(epoch FROM NEW.idle_since)::bigint)
    ON CONFLICT (dedupe) DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER booking_idle_notifies AFTER UPDATE OF idle_since ON booking
    FOR EACH ROW WHEN (NEW.idle_since IS NOT NULL AND OLD.idle_since IS NULL)
    EXECUTE FUNCTION notification_idle_warning();
