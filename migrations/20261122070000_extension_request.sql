-- An extension asked for in a pool that requires approval is a request, not
-- a change: a pending booking right after the one it extends (extends_id),
-- admitted under the same capacity rules, so the extra time is held while an
-- admin decides. Approving merges it into the booking it extends (the
-- request row goes, the booking ends later, both in one transaction under
-- the kind's lock); rejecting or withdrawing frees the capacity.
ALTER TABLE booking ADD COLUMN extends_id uuid
    CONSTRAINT booking_extends_fkey REFERENCES booking (id) ON DELETE CASCADE;
-- One open request per booking.
CREATE UNIQUE INDEX booking_one_open_extension ON booking (extends_id) WHERE state = 'pending';
