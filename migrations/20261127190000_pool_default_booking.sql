-- Issue 48: clicking a free slot on the calendar books the pool's default
-- length there, as a calendar's quick event does. A multiple of the pool's
-- granularity, at most its longest booking (checked where the pool is
-- written, `rules::pool_spec::validate_default_booking`).
ALTER TABLE pool ADD COLUMN default_booking_minutes integer NOT NULL DEFAULT 60
    CONSTRAINT pool_default_booking_positive CHECK (default_booking_minutes > 0);
-- Pools whose grid or longest booking an hour does not fit get one slot.
UPDATE pool SET default_booking_minutes = granularity_minutes
WHERE 60 % granularity_minutes <> 0 OR max_booking_minutes < 60;
