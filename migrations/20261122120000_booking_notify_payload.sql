-- The worker decides from the notification itself whether a change needs a
-- pass now or only an earlier wake-up: the payload carries the window and
-- the state change (it was the id alone).
--
-- And only changes the worker must act on within a minute notify at all: a
-- live session's (started, ended, canceled, extended) and windows opening
-- within 60 s. PostgreSQL serializes the commits of notifying transactions
-- (a database-wide lock in PreCommit_Notify), so a NOTIFY per booking capped
-- booking throughput; windows further out are found by the worker's pass,
-- which runs at least every 30 s and sleeps only until the next boundary.
CREATE OR REPLACE FUNCTION booking_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END;
BEGIN
    IF NEW.state = 'active' OR was = 'active' OR NEW.starts_at <= now() + interval '60 seconds' THEN
        PERFORM pg_notify('berth_bookings', json_build_object(
            'id', NEW.id,
            'state', NEW.state,
            'was', was,
            'starts_at', NEW.starts_at,
            'ends_at', NEW.ends_at)::text);
    END IF;
    RETURN NEW;
END;
$$;
