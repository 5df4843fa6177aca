-- Issue 35.5: one meaning of "GPU-hours". A GPU-hour is one whole GPU for an
-- hour; a unit of a kind (a whole GPU, or one MIG slice) is 1/slices_per_gpu
-- of a GPU. The share used to be the constant N/7 of a profile `Ng`, wrong
-- for the product's own reference hardware: four 1g.24gb slices fill an RTX
-- PRO 6000 or an H100 NVL. Now each pool kind states it (the admin edits
-- it; new kinds default from the profile, `rules::pool_spec::default_slices_per_gpu`).
ALTER TABLE pool_kind
    ADD COLUMN slices_per_gpu integer CONSTRAINT pool_kind_slices_per_gpu_range CHECK (slices_per_gpu BETWEEN 1 AND 7),
    -- The price of one unit for an hour; NULL follows the pool's price per
    -- GPU-hour (its share of it).
    ADD COLUMN price_per_unit_hour double precision
        CONSTRAINT pool_kind_price_not_negative CHECK (price_per_unit_hour >= 0),
    -- Capacity counts from here: a kind added mid-week has no capacity before.
    ADD COLUMN created_at timestamptz;

-- The same rule as `default_slices_per_gpu`, once, for the kinds there are.
UPDATE pool_kind k SET
    slices_per_gpu = CASE
        WHEN k.kind NOT LIKE 'nvidia.com/mig-%' THEN 1
        WHEN split_part(substr(k.kind, 16), '.', 1) = '1g'
             AND split_part(substr(k.kind, 16), '.', 2) IN ('20gb', '24gb', '35gb', '45gb') THEN 4
        WHEN substr(k.kind, 16) = '2g.48gb' THEN 2
        ELSE greatest(7 / split_part(substr(k.kind, 16), 'g', 1)::integer, 1)
    END,
    created_at = p.created_at
FROM pool p WHERE p.id = k.pool_id;
ALTER TABLE pool_kind ALTER COLUMN slices_per_gpu SET NOT NULL,
                      ALTER COLUMN created_at SET NOT NULL, ALTER COLUMN created_at SET DEFAULT now();

-- The pool's price was charged per unit, so a MIG slice cost a whole GPU.
-- It is now the price of a whole GPU for an hour; a kind pays its share
-- unless it states its own price per unit-hour.
ALTER TABLE pool RENAME COLUMN price_per_unit_hour TO price_per_gpu_hour;
ALTER TABLE pool RENAME CONSTRAINT pool_price_not_negative TO pool_price_per_gpu_hour_not_negative;

-- Whole-GPU equivalents of one unit of a pool's kind. STABLE, not
-- IMMUTABLE: an admin may change `slices_per_gpu`. Reports call it once per
-- pool and kind after summing, the sampler once per live booking.
DROP FUNCTION gpu_share(text);
CREATE FUNCTION gpu_share(pool uuid, kind text) RETURNS double precision
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (SELECT 1.0 / k.slices_per_gpu FROM pool_kind k WHERE k.pool_id = pool AND k.kind = gpu_share.kind);

-- The price of one unit of a pool's kind for an hour.
CREATE FUNCTION unit_price(pool uuid, kind text) RETURNS double precision
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (SELECT coalesce(k.price_per_unit_hour, p.price_per_gpu_hour / k.slices_per_gpu)
            FROM pool_kind k JOIN pool p ON p.id = k.pool_id WHERE k.pool_id = pool AND k.kind = unit_price.kind);

-- The measured roll-ups hold whole-GPU minutes written with the old N/7
-- share: write them again from the hours they came from.
DELETE FROM usage_pool_hour;
INSERT INTO usage_pool_hour (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT u.pool_id, u.hour, sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)),
           sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)), bool_or(u.simulated)
    FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY u.pool_id, u.hour;
DELETE FROM usage_day;
INSERT INTO usage_day (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT (u.hour AT TIME ZONE 'UTC')::date, u.pool_id, u.tenant_id, u.user_id,
           sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)),
           sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)), bool_or(u.simulated)
    FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2, 3, 4;
DELETE FROM usage_month;
INSERT INTO usage_month (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT date_trunc('month', day::timestamp)::date, pool_id, tenant_id, user_id,
           sum(busy_gpu_minutes), sum(sampled_gpu_minutes), bool_or(simulated)
    FROM usage_day GROUP BY 1, 2, 3, 4;
-- The charts' booked GPU-hours per hour: forget the settled months so the
-- sweep rolls them up again with the new shares.
DELETE FROM booking_hour;
DELETE FROM booking_month;
DELETE FROM booking_month_settled;
