#!/usr/bin/env bash
# Booking throughput and latency at 64 clients against the release server with
# a real PostgreSQL, next to `pgbench -N` on the same PostgreSQL instance, then
# the capacity invariant check; then, in the same run, booking and finding
# free time through MCP beside the same REST calls (MCP's overhead as a
# ratio). Results are printed, not asserted.
# Usage: .ci/bench.sh [seconds]   (default 30)
source "$(dirname "$0")/lib.sh"
SECONDS_PER_RUN="${1:-30}"
CLIENTS=64
cd "$ROOT"
command -v wrk >/dev/null || apt_install wrk
ensure_postgres

say "building the release server"
cargo build --release -p server --bin berth
berth="$ROOT/target/release/berth"

scratch bench
# Default durability settings: both workloads commit the same way.
# pg_stat_statements shows afterwards which statements the time went to.
pg_up "$PG_DIR" "$PG_PORT" -c shared_preload_libraries=pg_stat_statements ${BENCH_PG_OPTS:-}
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE berth_bench" -c "CREATE DATABASE pgbench"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d berth_bench -qc "CREATE EXTENSION pg_stat_statements"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_bench"

say "seeding 8 pools (2 kinds each) and $CLIENTS users"
$berth migrate >/dev/null
$berth user add --email admin@bench.test --name Admin --role admin --tenant bench >/dev/null
admin="$($berth token create --email admin@bench.test 2>/dev/null)"
: > "$WORK/tokens"
for i in $(seq 1 $CLIENTS); do
  $berth user add --email "u$i@bench.test" --name "User $i" --tenant "bench-$((i % 4))" >/dev/null
  $berth token create --email "u$i@bench.test" 2>/dev/null >> "$WORK/tokens"
done

PORT=$((PG_PORT + 1))
# The per-person budget of expensive requests would refuse the free-time
# runs after 60 a minute: lifted, as throughput is what is measured.
$berth serve --listen "127.0.0.1:$PORT" --db-connections "${BENCH_DB_CONNECTIONS:-16}" \
  --expensive-rate-limit 100000000 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
load_pools "http://127.0.0.1:$PORT" "$admin" bench > "$WORK/pools"

say "booking load: $CLIENTS connections for ${SECONDS_PER_RUN}s"
# CPU seconds used by the server and by PostgreSQL during the run, to tell where time goes.
cpu_of() { awk '{s += $14 + $15} END {printf "%.1f", s / 100}' $(for p in "$@"; do echo "/proc/$p/stat"; done) 2>/dev/null || echo 0; }
pg_pids() { pgrep -u postgres -f "postgres" | tr '\n' ' '; }
server_cpu0=$(cpu_of "$SERVER_PID"); pg_cpu0=$(cpu_of $(pg_pids))
psql "$DATABASE_URL" -qtAc "SELECT pg_stat_statements_reset()" >/dev/null
# BENCH_PERF=1: a system-wide CPU profile of the middle of the run, for digging.
if [ "${BENCH_PERF:-}" = 1 ]; then
  (sleep 2; perf record -a -g -e cpu-clock -o "$ROOT/target/bench-perf.data" -- sleep $((SECONDS_PER_RUN - 4)) >/dev/null 2>&1) &
fi
BENCH_TOKENS="$WORK/tokens" BENCH_POOLS="$WORK/pools" \
  wrk -t2 -c$CLIENTS -d"${SECONDS_PER_RUN}s" -s .ci/bench/booking.lua "http://127.0.0.1:$PORT" | tee "$WORK/wrk.txt"
echo "CPU_SERVER_S $(awk -v a="$(cpu_of "$SERVER_PID")" -v b="$server_cpu0" 'BEGIN {print a - b}')" >> "$WORK/wrk.txt"
echo "CPU_POSTGRES_S $(awk -v a="$(cpu_of $(pg_pids))" -v b="$pg_cpu0" 'BEGIN {print a - b}')" >> "$WORK/wrk.txt"
say "statements by total execution time during the load"
psql "$DATABASE_URL" -P pager=off -c "SELECT calls, round(total_exec_time::numeric / calls * 1000) AS mean_us,
  round(total_exec_time::numeric) AS total_ms, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query
  FROM pg_stat_statements WHERE calls > 100 ORDER BY total_exec_time DESC LIMIT 8"
echo "WORKER_STATEMENTS $(psql "$DATABASE_URL" -tAF' ' -f .ci/bench/worker-statements.sql)" >> "$WORK/wrk.txt"
for run in mcp:book rest:find_free mcp:find_free; do
  say "${run%%:*} ${run#*:}: $CLIENTS connections for ${SECONDS_PER_RUN}s"
  BENCH_VIA="${run%%:*}" BENCH_TOOL="${run#*:}" BENCH_TOKENS="$WORK/tokens" BENCH_POOLS="$WORK/pools" \
    wrk -t2 -c$CLIENTS -d"${SECONDS_PER_RUN}s" -s .ci/bench/booking.lua "http://127.0.0.1:$PORT" > "$WORK/$run.txt"
done
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=

say "pgbench -N: $CLIENTS clients for ${SECONDS_PER_RUN}s on the same instance"
pgbench -h 127.0.0.1 -p "$PG_PORT" -U postgres -i -q -s 10 pgbench 2>/dev/null
pgbench -h 127.0.0.1 -p "$PG_PORT" -U postgres -N -c $CLIENTS -j 2 -T "$SECONDS_PER_RUN" pgbench 2>/dev/null | tee "$WORK/pgbench.txt"

violations="$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM ($(cat server/tests/sql/capacity-sweep.sql)) v")"
rows="$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM booking")"
python3 - "$WORK/wrk.txt" "$WORK/pgbench.txt" "$violations" "$rows" "$SECONDS_PER_RUN" "$WORK" <<'PY'
import re, sys
wrk, pgb, violations, rows, secs = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
status = {int(s): int(n) for s, n in re.findall(r"STATUS (\d+) (\d+)", wrk)}
lat = {int(p): float(v) for p, v in re.findall(r"LATENCY_P(\d+)_MS ([\d.]+)", wrk)}
rps = float(re.search(r"REQUESTS_PER_S ([\d.]+)", wrk).group(1))
tps = float(re.search(r"tps = ([\d.]+)", pgb).group(1))
other = sum(n for s, n in status.items() if s not in (201, 409))
print("\n== Booking benchmark summary ==")
refused_share = status.get(409, 0) / max(1, status.get(201, 0) + status.get(409, 0))
print(f"booking attempts/s : {rps:.0f}  (201 admitted: {status.get(201, 0)}, 409 refused: {status.get(409, 0)} = {refused_share:.0%}, other: {other})")
print(f"admitted bookings/s: {status.get(201, 0) / secs:.0f}")
print(f"latency p50 / p99  : {lat[50]:.1f} ms / {lat[99]:.1f} ms")
print(f"pgbench -N tps     : {tps:.0f}")
print(f"attempts / pgbench : {rps / tps:.0%}")
# Both booking runs (REST, then MCP) add rows; each may leave up to 64 in flight.
mcp_booked = sum(int(n) for s, n in re.findall(r"STATUS (\d+) (\d+)", open(f"{sys.argv[6]}/mcp:book.txt").read()) if s == "201")
in_flight = rows - status.get(201, 0) - mcp_booked
print(f"rows in booking    : {rows} = {status.get(201, 0)} + {mcp_booked} answered 201 (REST + MCP) + {in_flight} still in flight when wrk stopped (must be 0..128: {'yes' if 0 <= in_flight <= 128 else 'NO'})")
print(f"capacity violations: {violations}")
calls, worker_ms = map(float, re.search(r"WORKER_STATEMENTS (\S+) (\S+)", wrk).groups())
print(f"worker's queries   : {calls / secs:.1f}/s, {worker_ms / secs:.1f} ms of database time per second of load")
cpu = dict(re.findall(r"CPU_(SERVER|POSTGRES)_S ([\d.-]+)", wrk))
total = status.get(201, 0) + status.get(409, 0)
if total:
    print(f"CPU per attempt    : server {float(cpu.get('SERVER', 0)) / total * 1e6:.0f} us, PostgreSQL {float(cpu.get('POSTGRES', 0)) / total * 1e6:.0f} us (backends that ended during the run are not counted)")
def figures(name):
    text = open(f"{sys.argv[6]}/{name}.txt").read()
    counted = {int(s): int(n) for s, n in re.findall(r"STATUS (\d+) (\d+)", text)}
    p99 = float(re.search(r"LATENCY_P99_MS ([\d.]+)", text).group(1))
    return float(re.search(r"REQUESTS_PER_S ([\d.]+)", text).group(1)), p99, counted
print("\n== The same through MCP (same server, same run) ==")
book_rps, book_p99, book_counts = figures("mcp:book")
print(f"MCP book attempts/s: {book_rps:.0f}, p99 {book_p99:.1f} ms  {dict(sorted(book_counts.items()))}; REST {rps:.0f}, p99 {lat[99]:.1f} ms: MCP/REST {book_rps / rps:.2f}")
rest_free, rest_free_p99, rest_counts = figures("rest:find_free")
mcp_free, mcp_free_p99, mcp_counts = figures("mcp:find_free")
print(f"find_free/s        : MCP {mcp_free:.0f}, p99 {mcp_free_p99:.1f} ms {dict(mcp_counts)}; REST {rest_free:.0f}, p99 {rest_free_p99:.1f} ms {dict(rest_counts)}: MCP/REST {mcp_free / rest_free:.2f}")
PY
