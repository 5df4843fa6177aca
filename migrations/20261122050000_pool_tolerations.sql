-- Where a pool's sessions run: the node selector (already on pool) and the
-- tolerations of the pool nodes' taints, both copied into every session pod.
-- Kubernetes toleration objects, validated by the application before writing.
ALTER TABLE pool ADD COLUMN tolerations jsonb NOT NULL DEFAULT '[]';
