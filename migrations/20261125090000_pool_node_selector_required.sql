-- A pool's node selector is never empty (an empty one matches every node,
-- control-plane nodes and other pools' GPU nodes included). Pools saved
-- without one get the label Berth now gives such pools at creation:
-- berth.io/pool=<the pool's name as a label value> (rules::pool_spec::default_node_selector).
UPDATE pool
SET node_selector = jsonb_build_object('berth.io/pool', coalesce(nullif(
        trim(both '-._' from left(trim(both '-' from regexp_replace(lower(trim(name)), '[^a-z0-9._]+', '-', 'g')), 63)),
        ''), 'pool'))
WHERE node_selector = '{}'::jsonb;
