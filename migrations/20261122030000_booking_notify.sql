-- Wakes the provisioning worker when a booking is created or changes state
-- or window; the payload is the booking id. The worker also resyncs on a
-- timer, so a missed notification only delays, never loses, a change.
CREATE FUNCTION booking_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('berth_bookings', NEW.id::text);
    RETURN NEW;
END;
$$;

CREATE TRIGGER booking_changed
    AFTER INSERT OR UPDATE OF state, starts_at, ends_at ON booking
    FOR EACH ROW EXECUTE FUNCTION booking_notify();
