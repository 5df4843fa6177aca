-- Issue 60 (5b): a worker inside a member cluster signs in to PostgreSQL as
-- a role of its own, and writes its own cluster's rows only.
--
-- `berth member-role --cluster aws --role berth_aws` (run as the tables'
-- owner) records the role in `member_role` and grants it what a cluster's
-- worker needs: reading (every table but the ones that hold secrets) and
-- inserting and updating the tables below (by column: never an identity
-- column, and of a booking only what the worker's moves change; nothing is
-- deleted), where these policies keep each write to the cluster's rows.
-- Every other role keeps every row: the owner (the portal, the hub's
-- worker) bypasses row security, and `berth_not_member` admits any role
-- never made a member's, so a deployment whose tables belong to another
-- role sees no difference.

-- Every role ever made a member's: one that lost its cluster (removed, or
-- given another role) stays here with none, and so may write nothing.
CREATE TABLE member_role (
    role       text PRIMARY KEY,
    cluster_id uuid REFERENCES cluster (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX member_role_one_per_cluster ON member_role (cluster_id) WHERE cluster_id IS NOT NULL;

-- Which worker process wrote a row: a member rewrites its own processes only.
ALTER TABLE worker_process ADD COLUMN db_role text NOT NULL DEFAULT current_user;

-- Who is a member's is no secret, and every role's policies read it.
GRANT SELECT ON member_role TO PUBLIC;

-- What triggers write follows from a change already judged (a booking's
-- event, a workspace turning ready, a settled month going stale): they
-- write as the owner, so a member needs no grant on those tables.
DO $$
DECLARE
    definer text;
BEGIN
    FOREACH definer IN ARRAY ARRAY['notification_from_booking_event()', 'notification_workspace_ready()',
        'notification_idle_warning()', 'booking_unsettle()', 'booking_unsettle_all()']
    LOOP
        -- Never a temporary table of the caller's in their way.
        EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = %I, pg_temp', definer, current_schema());
    END LOOP;
END $$;

-- Each table a member writes, and which of its rows are the member's: its
-- cluster (`mine`, once per statement) owns the row's pool, or the pool of
-- the row's booking (one index lookup per row written). Inline, not in
-- functions: a policy's tables are bound when it is made (no temporary
-- table of the caller's can stand in), and a call per statement costs more
-- than the write it guards.
DO $$
DECLARE
    mine constant text := '(SELECT m.cluster_id FROM member_role m WHERE m.role = current_user)';
    of_pool constant text := 'EXISTS (SELECT 1 FROM pool p WHERE p.id = %I.pool_id AND p.cluster_id = %s)';
    of_booking constant text :=
        'EXISTS (SELECT 1 FROM booking b JOIN pool p ON p.id = b.pool_id WHERE b.id = %I.%I AND p.cluster_id = %s)';
    others constant text := 'NOT EXISTS (SELECT 1 FROM member_role m WHERE m.role = current_user)';
    own record;
    rows text;
BEGIN
    FOR own IN SELECT * FROM (VALUES
        -- (table, whose rows, what the member does)
        ('booking', 'pool', 'update'),
        ('lent_hour', 'pool', 'insert update'), ('lent_sample', 'pool', 'insert update'),
        ('booking_event', 'booking', 'insert'),
        ('session_status', 'booking', 'insert update'), ('session_home', 'booking', 'insert update'),
        ('session_continuation', 'continuation', 'insert update'),
        -- The one notification it makes itself: a namespace stuck terminating.
        ('notification', 'stuck', 'insert'),
        ('home', 'cluster', 'insert update'), ('cluster_status', 'cluster', 'insert update'),
        ('worker_process', 'process', 'insert update')
    ) AS t (name, owned_by, does)
    LOOP
        rows := CASE own.owned_by
            WHEN 'pool' THEN format(of_pool, own.name, mine)
            WHEN 'booking' THEN format(of_booking, own.name, 'booking_id', mine)
            WHEN 'continuation' THEN format(of_booking, own.name, 'booking_id', mine)
                || ' AND ' || format(of_booking, own.name, 'follows', mine)
                || ' AND ' || format(of_booking, own.name, 'session_id', mine)
            WHEN 'stuck' THEN format(of_booking, own.name, 'booking_id', mine)
                || ' AND notification.event = ''session.stuck'' AND notification.dedupe = ''stuck:'' || notification.booking_id'
            WHEN 'cluster' THEN format('%I.cluster_id = %s', own.name, mine)
            WHEN 'process' THEN format('%I.db_role = current_user', own.name)
        END;
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', own.name);
        EXECUTE format('CREATE POLICY berth_not_member ON %I USING (%s) WITH CHECK (%s)', own.name, others, others);
        EXECUTE format('CREATE POLICY berth_member_reads ON %I FOR SELECT USING (true)', own.name);
        IF own.does LIKE '%insert%' THEN
            EXECUTE format('CREATE POLICY berth_member_inserts ON %I FOR INSERT WITH CHECK (%s)', own.name, rows);
        END IF;
        IF own.does LIKE '%update%' THEN
            EXECUTE format('CREATE POLICY berth_member_updates ON %I FOR UPDATE USING (%s) WITH CHECK (%s)',
                           own.name, rows, rows);
        END IF;
    END LOOP;
END $$;
