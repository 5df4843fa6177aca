-- The demo history `make run` seeds (`berth seed-demo --history`): one row
-- when there is one, so that the reports and the dashboard say their
-- figures before `last_day` are made up.
CREATE TABLE demo_history (
    only_row  boolean PRIMARY KEY DEFAULT true CONSTRAINT demo_history_one_row CHECK (only_row),
    seeded_at timestamptz NOT NULL DEFAULT now(),
    first_day date NOT NULL,
    last_day  date NOT NULL
);
