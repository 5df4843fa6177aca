-- Independent check of the waitlist, in SQL only. One row per violation:
-- ('promoted_twice', entry) when more than one booking says it came from the
-- entry; ('unrecorded', entry) when an admitted entry's booking has no event
-- naming it; ('out_of_turn', entry) when an entry was admitted while an
-- earlier identical one (same pool, kind, tenant, units and window, so it fit
-- whenever the later one did) was still waiting.
WITH promotion AS (
    SELECT substring(reason FROM 'entry ([0-9a-f-]{36})')::uuid AS entry_id, booking_id
    FROM booking_event WHERE reason LIKE 'admitted from the waitlist (entry %)'
)
SELECT 'promoted_twice' AS which, entry_id FROM promotion GROUP BY entry_id HAVING count(*) > 1
UNION ALL
SELECT 'unrecorded', e.id FROM waitlist_entry e
WHERE e.state = 'admitted'
  AND NOT EXISTS (SELECT 1 FROM promotion p WHERE p.entry_id = e.id AND p.booking_id = e.booking_id)
UNION ALL
SELECT 'out_of_turn', b.id FROM waitlist_entry a JOIN waitlist_entry b
    ON (a.pool_id, a.kind, a.tenant_id, a.quantity, a.starts_at, a.ends_at)
     = (b.pool_id, b.kind, b.tenant_id, b.quantity, b.starts_at, b.ends_at)
WHERE a.seq < b.seq AND b.state = 'admitted'
  AND (a.resolved_at IS NULL OR a.resolved_at > b.resolved_at)
