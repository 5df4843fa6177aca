-- The worker decides from the notification itself whether a change needs a
-- pass now, or only an earlier wake-up: the payload carries the window and
-- the state change (it was the id alone). Under booking load almost every
-- change is a future window, and a pass per change taxed admission.
CREATE OR REPLACE FUNCTION booking_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('berth_bookings', json_build_object(
        'id', NEW.id,
        'state', NEW.state,
        'was', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,
        'starts_at', NEW.starts_at,
        'ends_at', NEW.ends_at)::text);
    RETURN NEW;
END;
$$;
