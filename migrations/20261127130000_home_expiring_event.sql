-- Issue 46: a home's owner hears 7 days and 1 day before it is deleted.
ALTER TABLE notification DROP CONSTRAINT notification_event_known;
ALTER TABLE notification ADD CONSTRAINT notification_event_known CHECK (event IN (
    'booking.pending', 'booking.approved', 'booking.rejected', 'waitlist.promoted',
    'booking.starting', 'booking.ending', 'workspace.ready', 'booking.failed', 'booking.idle', 'session.stuck',
    'home.expiring'));
