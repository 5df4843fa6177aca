#!/usr/bin/env bash
# The calendar's numbers: release WASM size (raw, gzip, brotli), server time
# to render the week view with 500 bookings in the visible week (wrk, one
# connection, so latency is server time), the bytes a browser receives cold
# and warm, and time until the calendar is interactive in Chromium
# (navigation start → hydrated) on loopback and at 10 Mbit/s with 40 ms RTT.
# Printed, not asserted.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
command -v wrk >/dev/null || apt_install wrk
command -v brotli >/dev/null || apt_install brotli
ensure_chromium
SECONDS_PER_RUN="${1:-10}"

bash .ci/build-site.sh release
berth="$ROOT/target/release/berth"
pkg="$ROOT/target/site/pkg"
say "WASM bundles"
# Two: every page's (console pages load it) and the people's pages' (the
# calendar loads it); see app/src/pages/mod.rs, `pages!`.
for bundle in berth berth-people; do
  total=0
  for file in "$pkg/$bundle.wasm" "$pkg/$bundle.js"; do
    raw=$(stat -c %s "$file")
    gz=$(gzip -9 -c "$file" | wc -c)
    br=$(brotli -q 11 -c "$file" | wc -c)
    total=$((total + br))
    printf '%s: raw %d KB, gzip -9 %d KB, brotli -q 11 %d KB\n' "$(basename "$file")" $((raw / 1024)) $((gz / 1024)) $((br / 1024))
  done
  printf '%s bundle: %d KB brotli\n' "$bundle" $((total / 1024))
done

scratch calbench
pg_up "$PG_DIR" "$PG_PORT"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE berth_calbench"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_calbench"
$berth seed-demo >/dev/null
token="$($berth token create --email ada@berth.local 2>/dev/null)"

say "500 bookings in the week from yesterday of one pool (two kinds), a fifth of them ada's; 100 of them yesterday's, measured (the used-time bars)"
psql "$DATABASE_URL" -qv ON_ERROR_STOP=1 <<'SQL'
-- Room for every booking: the calendar's cost, not admission, is measured.
UPDATE pool_kind SET capacity = 1000 WHERE pool_id = (SELECT id FROM pool WHERE name = 'lab-h100');
-- Whose the bookings are: a fifth ada's, the rest the admin's, all the demo tenant's.
CREATE TEMP TABLE who AS
SELECT (SELECT id FROM pool WHERE name = 'lab-h100') AS pool,
       (SELECT id FROM app_user WHERE email = 'ada@berth.local') AS ada,
       (SELECT id FROM app_user WHERE email = 'admin@berth.local') AS admin,
       (SELECT id FROM tenant WHERE slug = 'demo') AS tenant;
-- Yesterday's 100 (i ≤ 100), completed, each with an hour of measured use:
-- the week view draws a used-time bar under ada's (and, for admins,
-- everyone's); then 400 approved over the next five days (j = i - 100).
INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
SELECT pool, CASE WHEN i % 3 = 0 THEN 'nvidia.com/gpu' ELSE 'nvidia.com/mig-1g.24gb' END,
       CASE WHEN i % 5 = 0 THEN ada ELSE admin END, tenant, 1 + i % 3, 'interactive',
       CASE WHEN i <= 100 THEN date_trunc('day', now()) - interval '1 day' + (i % 22) * interval '1 hour'
            ELSE date_trunc('hour', now()) + (j % 120) * interval '1 hour' + (j % 4) * interval '15 minutes' END,
       CASE WHEN i <= 100 THEN date_trunc('day', now()) - interval '1 day' + (i % 22) * interval '1 hour' + interval '90 minutes'
            ELSE date_trunc('hour', now()) + (j % 120) * interval '1 hour' + (1 + j % 8) * interval '45 minutes' END,
       CASE WHEN i <= 100 THEN 'completed' ELSE 'approved' END
FROM generate_series(1, 500) AS i, LATERAL (SELECT i - 100 AS j) AS later, who;
INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                        active_unit_minutes, memory_max_mib, energy_wh, simulated)
SELECT id, date_trunc('hour', starts_at), pool_id, tenant_id, user_id, 60, 30 * quantity, 40 * quantity, 1000, 0, true
-- Every booking but the 400 upcoming: yesterday's and the demo's own.
FROM booking WHERE state <> 'approved';
SQL
pool=$(psql "$DATABASE_URL" -tAc "SELECT id FROM pool WHERE name = 'lab-h100'")

PORT=$((PG_PORT + 1))
$berth serve --listen "127.0.0.1:$PORT" --site-root target/site --dev-login 2>/dev/null &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
yesterday=$(date -u -d yesterday +%F)
url="http://127.0.0.1:$PORT/calendar?pool=$pool&tz=UTC&date=$yesterday"
bars=$(curl -sf -H "Authorization: Bearer $token" "$url" | grep -o 'class="used-bar' | wc -l)
say "the week from $yesterday draws $bars used-time bars"
bytes=$(curl -sf -H "Authorization: Bearer $token" "$url" | wc -c)
visible=$(curl -sf -H "Authorization: Bearer $token" "$url" | grep -o 'class="slot' | wc -l)
say "server render of the week view ($((bytes / 1024)) KB of HTML, $visible slot cells), 1 connection, ${SECONDS_PER_RUN}s"
wrk -t1 -c1 -d"${SECONDS_PER_RUN}s" --latency -H "Authorization: Bearer $token" "$url" | grep -E 'Latency|50%|90%|99%|Requests/sec'
# Many people at once: every page must arrive whole. A render that never
# ends shows as a timeout (10 s, far above the slowest render here).
say "the same page, 32 connections at once, ${SECONDS_PER_RUN}s"
wrk -t2 -c32 -d"${SECONDS_PER_RUN}s" --timeout 10s --latency -H "Authorization: Bearer $token" "$url" |
  grep -E 'Latency|50%|99%|requests in|Requests/sec|Socket errors|Non-2xx' || true

say "the calendar in Chromium: bytes on the wire, time until interactive (navigation start → hydrated)"
BERTH_URL="http://127.0.0.1:$PORT" BERTH_POOL="$pool" BERTH_DATE="$yesterday" node end2end/bench/interactive.mjs
