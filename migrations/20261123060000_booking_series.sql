-- Issue 14: recurring bookings. A series is the rule a user booked with;
-- each occurrence is an ordinary booking, admitted on its own under the
-- normal rules, that remembers its series (to cancel the rest of it).
CREATE TABLE booking_series (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL REFERENCES app_user (id),
    tenant_id  uuid NOT NULL REFERENCES tenant (id),
    -- "weekly on Mon, Wed until 2026-12-20, 09:00–12:00 Europe/Berlin": what
    -- the user chose, in words, for the booking cards and the audit log.
    rule       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE booking ADD COLUMN series_id uuid REFERENCES booking_series (id);

CREATE INDEX booking_by_series ON booking (series_id, starts_at) WHERE series_id IS NOT NULL;
