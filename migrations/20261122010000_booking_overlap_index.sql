-- Admission asks "which live bookings of this pool+kind overlap [start, end)?".
-- A btree on (ends_at, starts_at) answers that by scanning every booking that
-- ends after the start — most of the horizon. A GiST index over the window as
-- a range answers it in O(log n + overlaps). btree_gist lets the same index
-- lead with pool_id and kind; it is a trusted extension (no superuser needed).
-- Queries must use exactly `tstzrange(starts_at, ends_at) && tstzrange($a, $b)`;
-- the default '[)' bounds are the half-open windows Berth uses.
CREATE EXTENSION IF NOT EXISTS btree_gist;

DROP INDEX booking_live_by_window;

CREATE INDEX booking_live_overlap ON booking
    USING gist (pool_id, kind, tstzrange(starts_at, ends_at))
    WHERE state IN ('pending', 'approved', 'active');
