-- Issue 12: a year's report read all of its bookings twice (the table and
-- the charts), about 100 ms each for 100 000 bookings on a small machine.
-- Past UTC months change only in rare cases (an admin's late approval, a
-- fixture), so the worker's sweep rolls each settled month up once: booked,
-- returned and no-show figures per pool, kind, tenant and user, and booked
-- GPU-hours per hour for the charts. Reports read a month from the roll-ups
-- only while its `booking_month_settled` row exists, and every other hour
-- from the bookings themselves.
CREATE TABLE booking_month (
    month               date NOT NULL CONSTRAINT booking_month_first_day CHECK (extract(day FROM month) = 1),
    pool_id             uuid NOT NULL,
    kind                text NOT NULL,
    tenant_id           uuid NOT NULL,
    user_id             uuid NOT NULL,
    -- Unit-hours (not GPU-hours): the report applies `gpu_share` and the
    -- pool's price when it reads them, as it does for the bookings.
    booked_unit_hours   double precision NOT NULL,
    returned_unit_hours double precision NOT NULL,
    no_shows            bigint NOT NULL,
    PRIMARY KEY (month, pool_id, kind, tenant_id, user_id)
);

-- Booked whole-GPU hours per UTC hour, every pool and kind (the trend and
-- the heat map are drawn across pools).
CREATE TABLE booking_hour (
    hour      timestamptz PRIMARY KEY,
    gpu_hours double precision NOT NULL
);

CREATE TABLE booking_month_settled (
    month      date PRIMARY KEY CONSTRAINT booking_month_settled_first_day CHECK (extract(day FROM month) = 1),
    settled_at timestamptz NOT NULL DEFAULT now()
);

-- A settled month's figures go stale when a booking that had hours in it
-- changes. Only bookings that started more than a day ago can (the sweep
-- settles months that ended at least two days ago), so the trigger's WHEN
-- lets every ordinary booking, extension and cancellation through without
-- calling anything. The function forgets every settled month from the first
-- one the change can touch; the sweep settles them again. Settling takes the
-- same lock, so a change committed while a month is being rolled up is seen
-- by it or forgets it afterwards.
CREATE FUNCTION booking_unsettle() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    since timestamptz;
BEGIN
    IF TG_OP = 'INSERT' THEN
        since := NEW.starts_at;
    ELSIF TG_OP = 'DELETE' THEN
        since := OLD.starts_at;
    ELSIF (OLD.starts_at, OLD.quantity, OLD.kind, OLD.pool_id, OLD.tenant_id, OLD.user_id, OLD.released_as,
           OLD.state IN ('approved', 'active', 'completed'))
          IS DISTINCT FROM
          (NEW.starts_at, NEW.quantity, NEW.kind, NEW.pool_id, NEW.tenant_id, NEW.user_id, NEW.released_as,
           NEW.state IN ('approved', 'active', 'completed')) THEN
        since := least(OLD.starts_at, NEW.starts_at);
    ELSIF (OLD.ends_at, OLD.planned_ends_at) IS DISTINCT FROM (NEW.ends_at, NEW.planned_ends_at) THEN
        -- Ending early or extending: nothing before the earliest end moves.
        since := least(OLD.ends_at, NEW.ends_at, coalesce(OLD.planned_ends_at, 'infinity'),
                       coalesce(NEW.planned_ends_at, 'infinity'));
    ELSE
        RETURN NULL;
    END IF;
    IF since < clock_timestamp() - interval '1 day' THEN
        PERFORM pg_advisory_xact_lock(hashtext('berth.booking_rollups'));
        DELETE FROM booking_month_settled WHERE month >= date_trunc('month', since AT TIME ZONE 'UTC')::date;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER booking_unsettle_insert AFTER INSERT ON booking FOR EACH ROW
    WHEN (NEW.starts_at < clock_timestamp() - interval '1 day') EXECUTE FUNCTION booking_unsettle();
CREATE TRIGGER booking_unsettle_update AFTER UPDATE ON booking FOR EACH ROW
    WHEN (OLD.starts_at < clock_timestamp() - interval '1 day' OR NEW.starts_at < clock_timestamp() - interval '1 day')
    EXECUTE FUNCTION booking_unsettle();
CREATE TRIGGER booking_unsettle_delete AFTER DELETE ON booking FOR EACH ROW
    WHEN (OLD.starts_at < clock_timestamp() - interval '1 day') EXECUTE FUNCTION booking_unsettle();

CREATE FUNCTION booking_unsettle_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM booking_month_settled;
    RETURN NULL;
END $$;
CREATE TRIGGER booking_unsettle_truncate AFTER TRUNCATE ON booking FOR EACH STATEMENT
    EXECUTE FUNCTION booking_unsettle_all();

-- The report's returned hours ask for bookings cut short around a period's
-- edges; only those rows carry `planned_ends_at`, so the index stays small
-- and ordinary bookings never touch it.
CREATE INDEX booking_cut_short ON booking (planned_ends_at, ends_at) WHERE planned_ends_at IS NOT NULL;
