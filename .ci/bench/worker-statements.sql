-- The statements of the worker's start and repair passes (app/src/backend/
-- worker/{provisioning,session_status,status}.rs, waitlist/) and of
-- its notifier (server/src/notify/outbox.rs), by the
-- start of their text: what the booking benchmark reports as the worker's
-- share of the database. Keep in step when a pass gains a query.
SELECT coalesce(sum(calls), 0) AS calls, coalesce(round(sum(total_exec_time)::numeric), 0) AS total_ms
FROM pg_stat_statements
WHERE query LIKE 'SELECT id, state, ends_at <= now() AS ended FROM booking%'
   OR query LIKE 'WITH expired AS (%UPDATE booking SET state = ''rejected''%'
   OR query LIKE 'SELECT least(%'
   OR query LIKE 'SELECT booking_id, namespace, workspace_url, steps, failures FROM session_status%'
   OR query LIKE 'UPDATE waitlist_entry SET state = ''expired''%'
   OR query LIKE 'SELECT DISTINCT pool_id, kind FROM waitlist_entry%'
   OR query LIKE 'UPDATE worker_process%'
   OR query LIKE 'SELECT pg_try_advisory_lock%'
   OR query LIKE 'INSERT INTO notification (event, booking_id, dedupe)%'
   OR query LIKE 'WITH batch AS (%'
   OR query LIKE 'WITH claimed AS (%'
