-- Independent check of tenant quotas, in SQL only. Returns one row per
-- violation: ('max_units', tenant, pool, kind, instant, used, limit) where a
-- tenant's running sum of units exceeds its max_units, and
-- ('gpu_hours_per_week', ..., week start, hours, limit) where the GPU-hours
-- (unit-hours / the kind's slices_per_gpu) a tenant booked inside one ISO
-- week of the pool's zone exceed its quota.
WITH live AS (
    SELECT b.* FROM booking b WHERE b.state IN ('pending', 'approved', 'active', 'completed')
), edge AS (
    SELECT tenant_id, pool_id, kind, starts_at AS at, quantity AS delta FROM live
    WHERE state <> 'completed'
    UNION ALL
    SELECT tenant_id, pool_id, kind, ends_at, -quantity FROM live
    WHERE state <> 'completed'
), per_instant AS (
    SELECT tenant_id, pool_id, kind, at, sum(delta) AS delta FROM edge GROUP BY tenant_id, pool_id, kind, at
), running AS (
    SELECT tenant_id, pool_id, kind, at,
           sum(delta) OVER (PARTITION BY tenant_id, pool_id, kind ORDER BY at) AS used
    FROM per_instant
), weeks AS (
    -- Every local Monday 00:00 a booking touches, as an instant.
    SELECT DISTINCT l.tenant_id, l.pool_id, l.kind,
           (w AT TIME ZONE p.time_zone) AS week_start,
           ((w + interval '7 days') AT TIME ZONE p.time_zone) AS week_end
    FROM live l JOIN pool p ON p.id = l.pool_id,
         generate_series(date_trunc('week', l.starts_at AT TIME ZONE p.time_zone),
                         date_trunc('week', (l.ends_at - interval '1 microsecond') AT TIME ZONE p.time_zone),
                         interval '7 days') AS w
), weekly AS (
    SELECT w.tenant_id, w.pool_id, w.kind, w.week_start,
           sum(extract(epoch FROM least(l.ends_at, w.week_end) - greatest(l.starts_at, w.week_start)) / 3600
               * l.quantity / k.slices_per_gpu) AS hours
    FROM weeks w JOIN live l ON l.tenant_id = w.tenant_id AND l.pool_id = w.pool_id AND l.kind = w.kind
                            AND l.starts_at < w.week_end AND l.ends_at > w.week_start
    JOIN pool_kind k ON k.pool_id = w.pool_id AND k.kind = w.kind
    GROUP BY w.tenant_id, w.pool_id, w.kind, w.week_start
)
SELECT 'max_units' AS which, r.tenant_id, r.pool_id, r.kind, r.at, r.used::float8 AS used,
       q.max_units::float8 AS allowed
FROM running r JOIN tenant_quota q USING (tenant_id, pool_id, kind)
WHERE r.used > q.max_units
UNION ALL
SELECT 'gpu_hours_per_week', w.tenant_id, w.pool_id, w.kind, w.week_start, w.hours::float8,
       q.gpu_hours_per_week
FROM weekly w JOIN tenant_quota q USING (tenant_id, pool_id, kind)
WHERE w.hours > q.gpu_hours_per_week + 1e-9
