-- Independent check of the capacity invariant, in SQL only: for every pool,
-- kind and instant where usage changes, the running sum of +quantity at
-- starts and -quantity at ends (summed per instant first, so [a,b) and [b,c)
-- never count as overlapping) must not exceed the kind's capacity.
-- Returns one row per violating instant; an empty result means no violation.
WITH edge AS (
    SELECT pool_id, kind, starts_at AS at, quantity AS delta
    FROM booking WHERE state IN ('pending', 'approved', 'active')
    UNION ALL
    SELECT pool_id, kind, ends_at, -quantity
    FROM booking WHERE state IN ('pending', 'approved', 'active')
), per_instant AS (
    SELECT pool_id, kind, at, sum(delta) AS delta FROM edge GROUP BY pool_id, kind, at
), running AS (
    SELECT pool_id, kind, at, sum(delta) OVER (PARTITION BY pool_id, kind ORDER BY at) AS used
    FROM per_instant
)
SELECT r.pool_id, r.kind, r.at, r.used::bigint AS used, k.capacity
FROM running r JOIN pool_kind k USING (pool_id, kind)
WHERE r.used > k.capacity
