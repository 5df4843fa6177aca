-- Issue 60 (5b): a worker inside a member cluster signs in to PostgreSQL as
-- a role of its own, and writes its own cluster's rows only.
--
-- `berth member-role --cluster aws --role berth_aws` (run as the database's
-- owner) records the role here and grants it what a cluster's worker needs:
-- reading (every table but the ones that hold secrets) and writing the
-- tables below, where these policies keep each write to the cluster's rows.
-- Every other role keeps every row: the owner (the portal, the hub's worker)
-- bypasses row security, and `berth_not_member` admits any role that is no
-- cluster's, so a deployment whose tables belong to another role sees no
-- difference.
ALTER TABLE cluster ADD COLUMN db_role text CONSTRAINT cluster_db_role_key UNIQUE;

-- The cluster whose worker signs in as the current role; NULL for any other role.
CREATE FUNCTION berth_member_cluster() RETURNS uuid LANGUAGE sql STABLE AS
    $$ SELECT id FROM cluster WHERE db_role = current_user $$;

CREATE FUNCTION berth_member_pool(pool uuid) RETURNS boolean LANGUAGE sql STABLE AS
    $$ SELECT EXISTS (SELECT 1 FROM pool p WHERE p.id = pool AND p.cluster_id = berth_member_cluster()) $$;

CREATE FUNCTION berth_member_booking(booking uuid) RETURNS boolean LANGUAGE sql STABLE AS
    $$ SELECT EXISTS (SELECT 1 FROM booking b JOIN pool p ON p.id = b.pool_id
                      WHERE b.id = booking AND p.cluster_id = berth_member_cluster()) $$;

-- Which worker process wrote a row: a member rewrites its own processes only.
ALTER TABLE worker_process ADD COLUMN db_role text NOT NULL DEFAULT current_user;

-- What triggers write follows from a change already judged (a booking's
-- event, a workspace turning ready, a settled month going stale): they
-- write as the owner, so a member needs no grant on those tables.
ALTER FUNCTION notification_from_booking_event() SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION notification_workspace_ready() SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION notification_idle_warning() SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION booking_unsettle() SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION booking_unsettle_all() SECURITY DEFINER SET search_path FROM CURRENT;

-- Each table a member writes, and which of its rows are the member's.
DO $$
DECLARE
    own record;
BEGIN
    FOR own IN SELECT * FROM (VALUES
        ('booking', 'berth_member_pool(pool_id)'),
        ('booking_refusal', 'berth_member_pool(pool_id)'),
        ('waitlist_entry', 'berth_member_pool(pool_id)'),
        ('lent_hour', 'berth_member_pool(pool_id)'),
        ('lent_sample', 'berth_member_pool(pool_id)'),
        ('booking_event', 'berth_member_booking(booking_id)'),
        ('session_status', 'berth_member_booking(booking_id)'),
        ('session_home', 'berth_member_booking(booking_id)'),
        ('notification', 'berth_member_booking(booking_id)'),
        ('session_continuation', 'berth_member_booking(booking_id) AND berth_member_booking(follows)'),
        ('home', 'cluster_id = berth_member_cluster()'),
        ('cluster_status', 'cluster_id = berth_member_cluster()'),
        ('worker_process', 'db_role = current_user')
    ) AS t (name, rows)
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', own.name);
        -- Evaluated once per statement (an init plan), not per row.
        EXECUTE format('CREATE POLICY berth_not_member ON %I USING ((SELECT berth_member_cluster()) IS NULL)
                        WITH CHECK ((SELECT berth_member_cluster()) IS NULL)', own.name);
        EXECUTE format('CREATE POLICY berth_member_reads ON %I FOR SELECT USING (true)', own.name);
        EXECUTE format('CREATE POLICY berth_member_inserts ON %I FOR INSERT WITH CHECK (%s)', own.name, own.rows);
        EXECUTE format('CREATE POLICY berth_member_updates ON %I FOR UPDATE USING (%s) WITH CHECK (%s)',
                       own.name, own.rows, own.rows);
        EXECUTE format('CREATE POLICY berth_member_deletes ON %I FOR DELETE USING (%s)', own.name, own.rows);
    END LOOP;
END $$;
