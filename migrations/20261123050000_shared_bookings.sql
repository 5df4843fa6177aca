-- Issue 14: shared bookings. The owner adds co-owners from the booking's
-- tenant; they see the booking in full, are bound to the session's role,
-- open the workspace, extend and end it. Only the owner cancels.
CREATE TABLE booking_co_owner (
    booking_id uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    added_by   uuid REFERENCES app_user (id) ON DELETE SET NULL,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (booking_id, user_id)
);

-- "My bookings", the calendar feed and notifications look co-owned
-- bookings up by user.
CREATE INDEX booking_co_owner_by_user ON booking_co_owner (user_id, booking_id);
