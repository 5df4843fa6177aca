#!/usr/bin/env bash
# What row security costs a member cluster's worker (issue 60, 5b): the
# worker's own writes of a session (its status upsert, the booking's update,
# an event) with pgbench, once as the tables' owner (which bypasses row
# security, as the portal and the hub's worker do) and once as a member's
# role (`berth member-role`), alternating, on one throwaway PostgreSQL with
# 1 000 bookings on each of two clusters. Prepared statements, as sqlx
# sends them (the policies add to a statement's planning, paid once per
# connection, and a lookup per row written). Printed, not asserted.
# Usage: .ci/bench-member-rows.sh [seconds per run]   (default 15)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
SECONDS_PER_RUN="${1:-15}"
scratch memberbench
# Default durability: both roles commit the same way.
pg_up "$PG_DIR" "$PG_PORT"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE berth_memberbench"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_memberbench"
say "building berth (debug: only its migrations and member-role run here)"
cargo build -q -p server --bin berth
berth="$ROOT/target/debug/berth"
$berth seed-demo >/dev/null
psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 <<'SQL'
-- A second cluster with a copy of the demo pool, and 1 000 running bookings on each.
INSERT INTO cluster (name, access) VALUES ('east', 'in-cluster');
CREATE TEMP TABLE p AS SELECT * FROM pool ORDER BY name LIMIT 1;
CREATE TEMP TABLE k AS SELECT * FROM pool_kind WHERE pool_id = (SELECT id FROM p);
UPDATE p SET id = gen_random_uuid(), name = 'east-pool', cluster_id = (SELECT id FROM cluster WHERE name = 'east');
UPDATE k SET pool_id = (SELECT id FROM p);
INSERT INTO pool SELECT * FROM p;
INSERT INTO pool_kind SELECT * FROM k;
INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
SELECT pk.pool_id, pk.kind, m.user_id, m.tenant_id, 1, 'interactive', now(), now() + interval '1 day', 'active'
FROM pool_kind pk CROSS JOIN generate_series(1, 1000)
CROSS JOIN (SELECT user_id, tenant_id FROM membership LIMIT 1) m
WHERE pk.kind = (SELECT kind FROM k LIMIT 1);
CREATE TABLE bench_own AS
SELECT row_number() OVER () AS n, b.id FROM booking b JOIN pool p ON p.id = b.pool_id WHERE p.name = 'east-pool';
CREATE ROLE bench_member LOGIN;
SQL
$berth member-role --cluster east --role bench_member >/dev/null
cat > "$WORK/worker-writes.sql" <<'SQL'
\set n random(1, 1000)
INSERT INTO session_status (booking_id, namespace, steps) SELECT id, 'ns', '[]' FROM bench_own WHERE n = :n
  ON CONFLICT (booking_id) DO UPDATE SET steps = '[]', updated_at = now();
UPDATE booking SET updated_at = now() WHERE id = (SELECT id FROM bench_own WHERE n = :n);
INSERT INTO booking_event (booking_id, to_state, reason) SELECT id, 'active', 'bench' FROM bench_own WHERE n = :n;
SQL
run() {
  local out="$WORK/pgbench-$1.out"
  pgbench -n -M prepared -h 127.0.0.1 -p "$PG_PORT" -U "$1" -c 8 -j 2 -T "$SECONDS_PER_RUN" -f "$WORK/worker-writes.sql" \
    berth_memberbench > "$out" 2>&1 || { cat "$out" >&2; return 1; }
  awk '/^tps/ {printf "%.0f", $3}' "$out"
}
say "the worker's writes, 8 clients, ${SECONDS_PER_RUN}s per run"
printf '%-26s %10s %10s\n' "signed in as" "run 1 tps" "run 2 tps"
owner1=$(run postgres); member1=$(run bench_member); owner2=$(run postgres); member2=$(run bench_member)
printf '%-26s %10s %10s\n' "owner (row security off)" "$owner1" "$owner2" "member role (confined)" "$member1" "$member2"
awk -v o="$((owner1 + owner2))" -v m="$((member1 + member2))" \
  'BEGIN { printf "member / owner: %.0f %%\n", 100 * m / o }'
