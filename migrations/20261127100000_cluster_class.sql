-- Issue 45: the cluster's PriorityClasses and RuntimeClasses as the worker
-- last read them (at every sweep). A pool may name only a class the cluster
-- has; the portal never talks to the cluster, so this is how it knows.
CREATE TABLE cluster_class (
    kind text NOT NULL CONSTRAINT cluster_class_kind_known CHECK (kind IN ('priority', 'runtime')),
    name text NOT NULL,
    PRIMARY KEY (kind, name)
);

-- When the worker last read them. No row: never (a fresh install before its
-- worker's first sweep), and the pools' classes are not checked yet.
CREATE TABLE cluster_class_read (
    singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT cluster_class_read_one CHECK (singleton),
    read_at   timestamptz NOT NULL
);
