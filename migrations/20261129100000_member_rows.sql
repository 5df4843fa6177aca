-- Issue 60 (5b): a worker inside a member cluster signs in to PostgreSQL as
-- a role of its own, and writes its own cluster's rows only.
--
-- `berth member-role --cluster aws --role berth_aws` (run as the tables'
-- owner) records the role in `member_role` and grants it what a cluster's worker needs:
-- reading (every table but the ones that hold secrets) and writing the
-- tables below, where these policies keep each write to the cluster's rows.
-- Every other role keeps every row: the owner (the portal, the hub's worker)
-- bypasses row security, and `berth_not_member` admits any role never made
-- a member's, so a deployment whose tables belong to another role sees no
-- difference.
-- Every role ever made a member's: one that lost its cluster (removed, or
-- given another role) stays here with none, and so may write nothing.
CREATE TABLE member_role (
    role       text PRIMARY KEY,
    cluster_id uuid REFERENCES cluster (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX member_role_one_per_cluster ON member_role (cluster_id) WHERE cluster_id IS NOT NULL;

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

-- Each table a member writes, and which of its rows are the member's: its
-- cluster (`mine`, one lookup per statement) owns the row's pool, or the
-- pool of the row's booking (one index lookup per row written).
DO $$
DECLARE
    mine constant text := '(SELECT m.cluster_id FROM member_role m WHERE m.role = current_user)';
    of_pool constant text := 'EXISTS (SELECT 1 FROM pool p WHERE p.id = %I.pool_id AND p.cluster_id = %s)';
    of_booking constant text :=
        'EXISTS (SELECT 1 FROM booking b JOIN pool p ON p.id = b.pool_id WHERE b.id = %I.%I AND p.cluster_id = %s)';
    own record;
    rows text;
BEGIN
    FOR own IN SELECT * FROM (VALUES
        ('booking', 'pool'), ('booking_refusal', 'pool'), ('waitlist_entry', 'pool'),
        ('lent_hour', 'pool'), ('lent_sample', 'pool'),
        ('booking_event', 'booking'), ('session_status', 'booking'), ('session_home', 'booking'),
        ('notification', 'booking'), ('session_continuation', 'booking and follows'),
        ('home', 'cluster'), ('cluster_status', 'cluster'),
        ('worker_process', 'process')
    ) AS t (name, owned_by)
    LOOP
        rows := CASE own.owned_by
            WHEN 'pool' THEN format(of_pool, own.name, mine)
            WHEN 'booking' THEN format(of_booking, own.name, 'booking_id', mine)
            WHEN 'booking and follows' THEN format(of_booking, own.name, 'booking_id', mine) || ' AND '
                                            || format(of_booking, own.name, 'follows', mine)
            WHEN 'cluster' THEN format('%I.cluster_id = %s', own.name, mine)
            WHEN 'process' THEN format('%I.db_role = current_user', own.name)
        END;
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', own.name);
        EXECUTE format('CREATE POLICY berth_not_member ON %I USING (NOT EXISTS (SELECT 1 FROM member_role m WHERE m.role = current_user))
                        WITH CHECK (NOT EXISTS (SELECT 1 FROM member_role m WHERE m.role = current_user))', own.name);
        EXECUTE format('CREATE POLICY berth_member_reads ON %I FOR SELECT USING (true)', own.name);
        EXECUTE format('CREATE POLICY berth_member_inserts ON %I FOR INSERT WITH CHECK (%s)', own.name, rows);
        EXECUTE format('CREATE POLICY berth_member_updates ON %I FOR UPDATE USING (%s) WITH CHECK (%s)',
                       own.name, rows, rows);
        EXECUTE format('CREATE POLICY berth_member_deletes ON %I FOR DELETE USING (%s)', own.name, rows);
    END LOOP;
END $$;
