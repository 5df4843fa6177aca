-- Issue 46: back-to-back bookings continue one session. When a window ends
-- and the same person's next booking on the same pool, kind, mode and image
-- starts no later than that end plus the pool's granularity, the worker
-- keeps the namespace, workspace and running processes and moves them to
-- the next booking. `session_id` is the first booking of the chain (it names
-- the namespace, the workspace's host and its pods' selector); `follows`
-- is the booking this one took the session over from.
CREATE TABLE session_continuation (
    booking_id uuid PRIMARY KEY REFERENCES booking (id) ON DELETE CASCADE,
    session_id uuid NOT NULL,
    follows    uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE
);
