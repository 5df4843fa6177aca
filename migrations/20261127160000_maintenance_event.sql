-- Issue 47: the owner of a booking kept inside a maintenance window hears of it.
ALTER TABLE notification DROP CONSTRAINT notification_event_known;
ALTER TABLE notification ADD CONSTRAINT notification_event_known CHECK (event IN (
    'booking.pending', 'booking.approved', 'booking.rejected', 'waitlist.promoted',
    'booking.starting', 'booking.ending', 'workspace.ready', 'booking.failed', 'booking.idle', 'session.stuck',
    'home.expiring', 'booking.maintenance'));
