-- A year's report reads every booking of the year twice (the table and the
-- charts): per row, plain float arithmetic on hours since the Unix epoch
-- costs a fraction of interval arithmetic on timestamps. Kept by PostgreSQL,
-- so no writer can forget them. (`timestamptz - timestamptz` and
-- `date_part` of an interval are immutable, as generated columns require.)
ALTER TABLE booking
    ADD COLUMN starts_epoch_h double precision
        GENERATED ALWAYS AS (date_part('epoch', starts_at - timestamptz '1970-01-01 00:00:00+00') / 3600) STORED,
    ADD COLUMN ends_epoch_h double precision
        GENERATED ALWAYS AS (date_part('epoch', ends_at - timestamptz '1970-01-01 00:00:00+00') / 3600) STORED,
    ADD COLUMN planned_ends_epoch_h double precision
        GENERATED ALWAYS AS (date_part('epoch', planned_ends_at - timestamptz '1970-01-01 00:00:00+00') / 3600) STORED;

-- Measured use per UTC month, pool, tenant and user: a year's table reads
-- twelve months' rows rather than 365 days' (the period's partial months
-- come from `usage_day`, its partial days from `usage_hour`). Written by the
-- sampler in the statement that writes the minutes.
CREATE TABLE usage_month (
    month               date NOT NULL CONSTRAINT usage_month_first_day CHECK (extract(day FROM month) = 1),
    pool_id             uuid NOT NULL,
    tenant_id           uuid NOT NULL,
    user_id             uuid NOT NULL,
    busy_gpu_minutes    double precision NOT NULL,
    sampled_gpu_minutes double precision NOT NULL,
    simulated           boolean NOT NULL,
    PRIMARY KEY (month, pool_id, tenant_id, user_id)
);

INSERT INTO usage_month (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, simulated)
    SELECT date_trunc('month', day::timestamp)::date, pool_id, tenant_id, user_id,
           sum(busy_gpu_minutes), sum(sampled_gpu_minutes), bool_or(simulated)
    FROM usage_day GROUP BY 1, 2, 3, 4;
