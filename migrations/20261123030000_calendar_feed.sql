-- Issue 14: each user's secret calendar feed (ICS).
--
-- The feed's token is derived from the server's calendar key, the user and
-- `generation` (so Settings can show the URL again), and only its SHA-256
-- is stored: a copy of the database does not open anyone's feed.
-- Regenerating bumps the generation; the old URL then matches nothing.
CREATE TABLE calendar_feed (
    user_id    uuid PRIMARY KEY REFERENCES app_user (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE,
    generation integer NOT NULL CONSTRAINT calendar_feed_generation_positive CHECK (generation > 0),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- RFC 5545's SEQUENCE: calendar clients replace an event only when it
-- grows, so every change of window or state counts one.
ALTER TABLE booking ADD COLUMN sequence integer NOT NULL DEFAULT 0;

CREATE FUNCTION booking_count_revision() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    NEW.sequence := OLD.sequence + 1;
    RETURN NEW;
END $$;

CREATE TRIGGER booking_revision BEFORE UPDATE ON booking
    FOR EACH ROW
    WHEN ((OLD.starts_at, OLD.ends_at, OLD.state) IS DISTINCT FROM (NEW.starts_at, NEW.ends_at, NEW.state))
    EXECUTE FUNCTION booking_count_revision();
