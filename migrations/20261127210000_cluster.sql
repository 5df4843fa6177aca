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
