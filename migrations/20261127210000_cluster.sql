-- Issue 49: clusters are data. Each pool runs on one cluster; a worker
-- drives a cluster it can reach (its own credentials, a kubeconfig Secret
-- in Berth's namespace, or the built-in simulated one).
--
-- A switch left NULL follows the driving worker's flag (--kueue,
-- --workspace-domain, --expose, --scale-ahead[-mode], --image-cache): the
-- cluster that existed before this migration keeps behaving exactly as its
-- worker's configuration says, and a cluster added later sets its own.
CREATE TABLE cluster (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL UNIQUE
        CONSTRAINT cluster_name_label CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$'),
    access text NOT NULL CONSTRAINT cluster_access_known CHECK (access IN ('in-cluster', 'kubeconfig', 'simulated')),
    kubeconfig_secret text,
    workspace_domain text,
    expose text CONSTRAINT cluster_expose_known CHECK (expose IN ('ingress', 'route')),
    kueue boolean,
    scale_ahead_mode text CONSTRAINT cluster_ahead_mode_known CHECK (scale_ahead_mode IN ('capacity-buffer', 'placeholder')),
    scale_ahead_minutes integer CONSTRAINT cluster_ahead_range CHECK (scale_ahead_minutes BETWEEN 1 AND 1440),
    image_cache boolean,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- A kubeconfig names its Secret; nothing else does.
    CONSTRAINT cluster_kubeconfig_secret CHECK ((access = 'kubeconfig') = (kubeconfig_secret IS NOT NULL))
);

INSERT INTO cluster (name, access) VALUES ('default', 'in-cluster');

ALTER TABLE pool ADD COLUMN cluster_id uuid REFERENCES cluster (id) ON DELETE RESTRICT;
UPDATE pool SET cluster_id = (SELECT id FROM cluster WHERE name = 'default');
ALTER TABLE pool ALTER COLUMN cluster_id SET NOT NULL;
CREATE INDEX pool_cluster ON pool (cluster_id);

-- Each cluster's worker lease: a PostgreSQL advisory lock on this key
-- (provisioning::try_lead). The default cluster keeps the key the single
-- worker took before, so an older worker and a newer one never both drive it.
CREATE SEQUENCE cluster_lease_key START 7243815063;
ALTER TABLE cluster ADD COLUMN lease_key bigint NOT NULL UNIQUE DEFAULT nextval('cluster_lease_key');
UPDATE cluster SET lease_key = 7243815062 WHERE name = 'default';

-- How each cluster's worker is doing, one row per cluster, written by the
-- worker that holds its lease: the worker page lists it, and sessions and
-- pools on a cluster that fails say so ("cluster aws unreachable since …").
CREATE TABLE cluster_status (
    cluster_id uuid PRIMARY KEY REFERENCES cluster (id) ON DELETE CASCADE,
    worker text NOT NULL,
    leading_since timestamptz NOT NULL DEFAULT now(),
    pass_at timestamptz,
    pass_ms integer,
    last_success_at timestamptz,
    error text,
    -- The first failed pass of a run of failures talking to the cluster.
    unreachable_since timestamptz
);

-- A pool written without naming its cluster (by hand, or an older script)
-- lands on the default cluster, as every pool did before; the portal
-- always names one (clusters::for_new_pool).
CREATE FUNCTION default_cluster_id() RETURNS uuid LANGUAGE sql STABLE
    AS $$ SELECT id FROM cluster WHERE name = 'default' $$;
ALTER TABLE pool ALTER COLUMN cluster_id SET DEFAULT default_cluster_id();
