#!/usr/bin/env bash
# The API contract: schemathesis (PyPI) fuzzes /api/v1/openapi.json against
# the real server and PostgreSQL, as a user and as an admin, with every check,
# in every phase (examples, coverage, fuzzing, stateful). Any server error or
# contract failure fails the run.
# Usage: .ci/contract.sh [BERTH_BINARY [EXAMPLES]]  (EXAMPLES per operation,
# default 100; without a binary, a debug build). With DATABASE_URL set, its
# server holds the contract's database; else a throwaway PostgreSQL does.
source "$(dirname "$0")/lib.sh"
ensure_schemathesis
cd "$ROOT"
berth="${1:-}"; examples="${2:-100}"
if [ -z "$berth" ]; then cargo build -q; berth="$ROOT/target/debug/berth"; fi
if [ -z "${DATABASE_URL:-}" ]; then
  PG_DIR="$(mktemp -d /tmp/berth-contract-pg.XXXXXX)"; PG_PORT=$((20000 + RANDOM % 20000))
  pg_up "$PG_DIR" "$PG_PORT" -c fsync=off
  export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
fi

base="${DATABASE_URL%/*}"
psql "$base/postgres" -qc "DROP DATABASE IF EXISTS berth_contract" -c "CREATE DATABASE berth_contract"
export DATABASE_URL="$base/berth_contract"
WORK="$(mktemp -d /tmp/berth-contract.XXXXXX)"
# Each role's full schemathesis report stays here after the run.
REPORTS="$ROOT/target/contract"; mkdir -p "$REPORTS"
cleanup() {
  [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
  [ -n "${PG_DIR:-}" ] && { pg_down "$PG_DIR"; rm -rf "$PG_DIR"; }
  rm -rf "$WORK"
}
trap cleanup EXIT

$berth migrate >/dev/null
$berth user add --email admin@contract.test --name Admin --role admin --tenant contract >/dev/null
$berth user add --email user@contract.test --name User --tenant contract >/dev/null
admin="$($berth token create --email admin@contract.test 2>/dev/null)"
user="$($berth token create --email user@contract.test 2>/dev/null)"
port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port"
# Fuzzing sends thousands of requests and many bad tokens from one address
# and person: the limits are raised so every answer is the operation's own.
$berth serve --listen "127.0.0.1:$port" --auth-rate-limit 1000000 --token-failure-limit 1000000 --token-rate-limit 0 \
  --expensive-rate-limit 1000000 \
  2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$url/healthz" >/dev/null && break; sleep 0.1; done
export CONTRACT_POOL
load_pools "$url" "$admin" contract >"$WORK/pools"
CONTRACT_POOL="$(head -1 "$WORK/pools")"
start="$(date -u -d 'tomorrow 10:00' +%Y-%m-%dT%H:%M:%SZ)"; end="$(date -u -d 'tomorrow 12:00' +%Y-%m-%dT%H:%M:%SZ)"
export CONTRACT_CLUSTER
CONTRACT_CLUSTER="$(curl -sf -X POST "$url/api/v1/clusters" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"contract","access":"simulated"}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
export CONTRACT_BOOKING
CONTRACT_BOOKING="$(curl -sf -X POST "$url/api/v1/bookings" -H "Authorization: Bearer $user" \
  -H 'Content-Type: application/json' \
  -d "{\"pool_id\":\"$CONTRACT_POOL\",\"kind\":\"nvidia.com/gpu\",\"quantity\":1,\"start\":\"$start\",\"end\":\"$end\",\"mode\":\"interactive\"}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"

status=0
for role in user admin; do
  say "contract as the $role: $examples examples per operation, every check"
  export CONTRACT_TOKEN; [ "$role" = admin ] && CONTRACT_TOKEN="$admin" || CONTRACT_TOKEN="$user"
  schemathesis --no-color --config-file .ci/schemathesis.toml run "$url/api/v1/openapi.json" \
    --checks all --max-examples "$examples" --seed 1 --workers 2 \
    --suppress-health-check all >"$REPORTS/$role.txt" 2>&1 || status=1
  failures="$(grep -E '^  ❌ ' "$REPORTS/$role.txt" || true)"
  cases="$(grep -E '^  [0-9]+ generated' "$REPORTS/$role.txt" || true)"
  echo "CONTRACT_$role ${cases:-no summary} | failures: ${failures:-none}"
  if [ -n "$failures" ]; then
    sed -n '/FAILURES/,/SUMMARY/p' "$REPORTS/$role.txt" >"$WORK/failures.txt"
    grep -E '^_+ |^- ST|^    `|^\[[0-9]+\]' "$WORK/failures.txt" | cut -c1-300 | head -150
  fi
done
exit $status
