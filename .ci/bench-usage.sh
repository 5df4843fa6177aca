#!/usr/bin/env bash
# Reports and sampler numbers (server/benches/usage.rs, release build): the
# utilisation report's server time over a year of 100 000 bookings and 200
# always-live sessions' usage, the /reports page's SSR, and the sampler's
# queries and round time for 1 and 1 000 sessions against a real
# Prometheus. Printed, not asserted.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_prometheus
scratch usagebench
pg_up "$PG_DIR" "$PG_PORT" -c fsync=off
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE berth_usagebench"
say "building and running the usage benchmark (release)"
DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_usagebench" RUST_LOG=warn \
  cargo bench -p server --bench usage
