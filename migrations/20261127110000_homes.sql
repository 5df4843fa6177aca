-- Issue 46: a person's work outlives the window. Each person has one home
-- volume per storage class, kept (reclaim policy Retain) and bound again in
-- each of their sessions' namespaces; it is deleted a number of days after
-- their last session ended.

-- The home's size for the tenant's members, and how long a home is kept
-- after its owner's last session (null: the site default, 30 days).
ALTER TABLE tenant
    ADD COLUMN home_gib integer NOT NULL DEFAULT 50
        CONSTRAINT tenant_home_gib_range CHECK (home_gib BETWEEN 1 AND 65536),
    ADD COLUMN home_retention_days integer
        CONSTRAINT tenant_home_retention_range CHECK (home_retention_days BETWEEN 1 AND 3650);

-- The homes the worker keeps (it is their only writer but for a deletion
-- request): the PersistentVolume it labelled as this person's home. A home
-- that went stays as history (`gone_at`): reports count storage held.
CREATE TABLE home (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    -- '' for the cluster's default storage class.
    storage_class text NOT NULL,
    volume        text NOT NULL CONSTRAINT home_volume_key UNIQUE,
    size_gib      integer NOT NULL CHECK (size_gib > 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- Its owner or an admin asked for it to go (done once no session holds it).
    delete_requested_at timestamptz,
    -- The worker handed it back to the provisioner to delete.
    gone_at       timestamptz
);
-- One kept home per person and storage class.
CREATE UNIQUE INDEX home_one_per_person ON home (user_id, storage_class) WHERE gone_at IS NULL;

-- Which volume each session's home claim was bound to, decided once when
-- the session starts (a claim's volume cannot change afterwards): the
-- person's home, or null for a new volume (their first session, or their
-- home is held by another session of theirs that runs at the same time).
CREATE TABLE session_home (
    booking_id uuid PRIMARY KEY REFERENCES booking (id) ON DELETE CASCADE,
    volume     text,
    -- What the claim asks for: the home's recorded size, else the tenant's.
    size_gib   integer NOT NULL CHECK (size_gib > 0)
);

-- What a GiB of home storage costs per month (30 days), in the site's
-- currency: reports show storage held per tenant at this price. Admins set
-- it on the Homes page.
CREATE TABLE home_price (
    singleton     boolean PRIMARY KEY DEFAULT true CONSTRAINT home_price_one CHECK (singleton),
    per_gib_month double precision NOT NULL CONSTRAINT home_price_range CHECK (per_gib_month >= 0 AND per_gib_month <= 1000000)
);
