-- Issue 46: the model cache outlives the window too. It is kept like the
-- home (one volume per person and storage class, bound again in each of
-- their sessions), with its own size and retention per tenant, and an
-- admin may switch a tenant back to a cache that ends with each session.

ALTER TABLE tenant
    ADD COLUMN cache_gib integer NOT NULL DEFAULT 200
        CONSTRAINT tenant_cache_gib_range CHECK (cache_gib BETWEEN 1 AND 65536),
    ADD COLUMN cache_retention_days integer
        CONSTRAINT tenant_cache_retention_range CHECK (cache_retention_days BETWEEN 1 AND 3650),
    -- false: each session gets its own cache, deleted with it (as before).
    ADD COLUMN cache_kept boolean NOT NULL DEFAULT true;

-- What a kept volume holds: the person's home, or their model cache.
ALTER TABLE home
    ADD COLUMN purpose text NOT NULL DEFAULT 'home' CONSTRAINT home_purpose_known CHECK (purpose IN ('home', 'cache'));
DROP INDEX home_one_per_person;
CREATE UNIQUE INDEX home_one_per_person ON home (user_id, storage_class, purpose) WHERE gone_at IS NULL;

-- A session's decision per volume; `kept` false: a volume of the session's
-- own that ends with it (a tenant whose cache is per session).
ALTER TABLE session_home
    ADD COLUMN purpose text NOT NULL DEFAULT 'home' CONSTRAINT session_home_purpose_known CHECK (purpose IN ('home', 'cache')),
    ADD COLUMN kept boolean NOT NULL DEFAULT true,
    DROP CONSTRAINT session_home_pkey,
    ADD PRIMARY KEY (booking_id, purpose);
