#!/usr/bin/env bash
# `make reliability`: the real server against a real PostgreSQL under load
# and abuse, one table at the end (docs/benchmarks.md quotes it). Rows:
#   booking load at 64 and 256 clients (server/benches/reliability.rs:
#     mixed book / cancel / extend / end early / waitlist with touching,
#     running and DST-crossing windows, then a history check against the
#     database and the capacity sweep);
#   a database restart a third of the way into a load run;
#   the worker killed with SIGKILL at random moments while sessions start
#     and end (server/benches/worker_kills.rs), then an audit of the cluster;
#   OIDC refusals and slow / abusive clients (their tests, which print figures);
#   the API contract (.ci/contract.sh: schemathesis against the OpenAPI document).
# Printed, not asserted: the tests assert the behaviour, this measures it.
# ATTEMPTS (default 100000), RESTART_ATTEMPTS (30000), PROVISIONINGS (100)
# and CONTRACT_EXAMPLES (100 per operation) shorten a run.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_postgres
ATTEMPTS="${ATTEMPTS:-100000}"
RESTART_ATTEMPTS="${RESTART_ATTEMPTS:-30000}"
USERS=64

say "building the release server and the load client"
# One build: a bench build makes the package's binaries too (with the same
# features, so a separate `cargo build --release` would rebuild half of it).
built="$(cargo bench -p server --bench reliability --bench worker_kills --no-run 2>&1)"
client="$ROOT/$(grep -o 'target/release/deps/reliability-[0-9a-f]*' <<<"$built" | tail -1)"
kills="$ROOT/$(grep -o 'target/release/deps/worker_kills-[0-9a-f]*' <<<"$built" | tail -1)"
berth="$ROOT/target/release/berth"

scratch reliability
# Default durability: an acknowledged booking must survive the restart.
pg_up "$PG_DIR" "$PG_PORT"
PORT=$((PG_PORT + 1))

# A fresh database, users, tokens and pools, and the server (with its worker
# on the simulated cluster, as `berth serve` runs) for each row.
fresh_portal() {
  [ -n "${SERVER_PID:-}" ] && { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "DROP DATABASE IF EXISTS berth_reliability" \
    -c "CREATE DATABASE berth_reliability"
  export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_reliability"
  $berth migrate >/dev/null
  $berth user add --email admin@load.test --name Admin --role admin --tenant load >/dev/null
  admin="$($berth token create --email admin@load.test 2>/dev/null)"
  : > "$WORK/tokens"; : > "$WORK/emails"
  for i in $(seq 1 $USERS); do
    $berth user add --email "u$i@load.test" --name "User $i" --tenant "load-$((i % 4))" >/dev/null
    $berth token create --email "u$i@load.test" 2>/dev/null >> "$WORK/tokens"
    echo "u$i@load.test" >> "$WORK/emails"
  done
  $berth serve --listen "127.0.0.1:$PORT" --db-connections 16 2>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  load_pools "http://127.0.0.1:$PORT" "$admin" load > "$WORK/pools"
}

load() { # load NAME CLIENTS ATTEMPTS [restart command]
  say "$1: $3 attempts from $2 clients"
  fresh_portal
  local restart=(); [ -n "${4:-}" ] && restart=("RESTART_CMD=$4")
  env BERTH_URL="http://127.0.0.1:$PORT" TOKENS="$WORK/tokens" EMAILS="$WORK/emails" POOLS="$WORK/pools" ADMIN_TOKEN="$admin" \
    CLIENTS="$2" ATTEMPTS="$3" "${restart[@]}" "$client" | tee "$WORK/$1.txt"
}

load load-64 64 "$ATTEMPTS"
load load-256 256 "$ATTEMPTS"
restart="$(if [ "$(id -u)" = 0 ]; then echo runuser -u postgres --; fi) $(pg_bin)/pg_ctl -D $PG_DIR -m fast -w restart >/dev/null"
load restart 64 "$RESTART_ATTEMPTS" "$restart"
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=

say "worker kill -9 at random moments over ${PROVISIONINGS:-100} provisionings (simulated cluster over HTTP)"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "DROP DATABASE IF EXISTS berth_kills" -c "CREATE DATABASE berth_kills"
DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_kills" BERTH="$berth" PROVISIONINGS="${PROVISIONINGS:-100}" \
  "$kills" | tee "$WORK/kills.txt"

say "OIDC refusals and slow / abusive clients (their tests)"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
cargo test -p server --test it -- oidc_login:: abusive_clients:: --nocapture --test-threads 1 2>&1 |
  grep -E '^(test |OIDC|SLOWLORIS)' | tee "$WORK/abuse.txt"

say "API contract (schemathesis, every check, as a user and as an admin)"
bash .ci/contract.sh "$berth" "${CONTRACT_EXAMPLES:-100}" | tee "$WORK/contract.txt" || true

python3 - "$WORK" <<'PY'
import re, sys, pathlib
work = pathlib.Path(sys.argv[1])
def kv(name):
    text = (work / f"{name}.txt").read_text()
    return dict(re.findall(r"^([A-Z0-9_]+) (.*)$", text, re.M))
print("\n== Reliability ==\n")
print("| row | attempts/s | p50 / p99 | capacity violations | acknowledged but missing | refused but present | other figures |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, label in [("load-64", "booking load, 64 clients"), ("load-256", "booking load, 256 clients"),
                    ("restart", "database restart mid-load, 64 clients")]:
    r = kv(name)
    other = (f"{r['ATTEMPTS']} attempts; answers {r['STATUSES']}; {r['ENDED_EARLY']} ended early;"
             f" {r['WAITLISTED']} waitlisted ({r['WAITLIST_MISSING']} missing), {r['PROMOTED']} promoted"
             f" ({r['PROMOTED_WRONG']} with another window); bookings nobody was told of {r['UNEXPLAINED_PRESENT']}")
    if name == "restart":
        other += (f"; during the outage {r['OUTAGE_503_WITHIN_2S']} × 503 within 2 s, {r['OUTAGE_OTHER']} other;"
                  f" restart took {r['DATABASE_DOWN_S']} s, first success {r['RECOVERED_AFTER_UP_S']} s after")
    print(f"| {label} | {r['ATTEMPTS_PER_S']} | {r['P50_MS']} / {r['P99_MS']} ms | {r['CAPACITY_VIOLATIONS']} |"
          f" {r['ACKNOWLEDGED_MISSING']} | {r['REFUSED_PRESENT']} | {other} |")
k = kv("kills")
print(f"| worker `kill -9` during provisioning | | | | | | {k['KILLS']} kills over {k['PROVISIONINGS']} provisionings"
      f" ({k['COMPLETED']} of them ended early, {k['FAILED']} failed): orphaned namespaces {k['ORPHANED_NAMESPACES']},"
      f" duplicated objects {k['DUPLICATED_OBJECTS']}, foreign namespaces deleted {k['FOREIGN_DELETED']};"
      f" converged {k['CONVERGED_S']} s after the last kill |")
abuse = (work / "abuse.txt").read_text()
oidc = re.search(r"OIDC forgeries refused for their reason: (\d+) / (\d+)", abuse)
slow = re.search(r"SLOWLORIS (.*)", abuse)
# Per binary: "test result: ok. 4 passed; 0 failed; ..." (a test that prints puts its "ok" on a later line).
results = [(int(p), int(p) + int(f)) for p, f in re.findall(r"^test result: \w+\. (\d+) passed; (\d+) failed", abuse, re.M)]
print(f"| OIDC refusals | | | | | | {oidc.group(1) if oidc else '?'} / {oidc.group(2) if oidc else '?'} forged ID tokens refused for their reason, discovery naming another issuer refused |")
contract = re.findall(r"^CONTRACT_(\w+) +(.*)$", (work / "contract.txt").read_text(), re.M)
print("| API contract (schemathesis) | | | | | | " + "; ".join(f"as the {role}: {text}" for role, text in contract) + " |")
print(f"| slow and abusive clients | | | | | | {slow.group(1) if slow else '?'}; {sum(p for p, _ in results)} / {sum(t for _, t in results)} tests passed |")
PY
