-- Kept homes and model caches are volumes of one cluster (issue 49): a
-- person's home on one cluster is not theirs on another, and each cluster's
-- worker offers, grows and lets go only its own. Existing ones are on the
-- cluster every pool was on before clusters were data, as is one written
-- without a cluster (as for pools). A removed cluster takes its records.
ALTER TABLE home
    ADD COLUMN cluster_id uuid NOT NULL DEFAULT default_cluster_id() REFERENCES cluster (id) ON DELETE CASCADE;
DROP INDEX home_one_per_person;
CREATE UNIQUE INDEX home_one_per_person ON home (cluster_id, user_id, storage_class, purpose) WHERE gone_at IS NULL;
