-- Issue 45: the PriorityClass and RuntimeClass a pool's session pods run
-- at. The worker writes them on the session's namespace, where admission
-- policies refuse any other (a pod at system-node-critical preempted other
-- tenants' pods on shared GPU nodes). NULL: the pods name none.
ALTER TABLE pool
    ADD COLUMN priority_class text
        CONSTRAINT pool_priority_class_name
        CHECK (priority_class ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$' AND priority_class NOT LIKE 'system-%'),
    ADD COLUMN runtime_class text
        CONSTRAINT pool_runtime_class_name CHECK (runtime_class ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$');
