-- Admins hear when an ended session's namespace is still terminating after
-- two minutes (a pod or finalizer that will not go may hold its GPUs).
ALTER TABLE notification DROP CONSTRAINT notification_event_known;
ALTER TABLE notification ADD CONSTRAINT notification_event_known CHECK (event IN (
    'booking.pending', 'booking.approved', 'booking.rejected', 'waitlist.promoted',
    'booking.starting', 'booking.ending', 'workspace.ready', 'booking.failed', 'booking.idle', 'session.stuck'));
