#!/usr/bin/env bash
# The provisioning worker's numbers (server/benches/worker.rs, release build):
# requests and writes per converged pass with 10, 100 and 1 000 sessions,
# start latency (booking committed → namespace + quota applied) against a
# 30 s polling design, and 200 sessions opening in the same minute. Runs the
# real worker loop against a throwaway PostgreSQL and the in-memory API
# server. Then the same worker on a real API server (server/benches/
# worker/real.rs, .ci/kube-stack.sh): start latency for 1 and 50 sessions,
# requests of a converged pass, window end → namespace gone. Printed, not
# asserted.
# Usage: .ci/bench-worker.sh [latency samples]   (default 200)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
scratch workerbench
pg_up "$PG_DIR" "$PG_PORT"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE berth_workerbench"
say "building and running the worker benchmark (release)"
DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_workerbench" BENCH_SAMPLES="${1:-200}" RUST_LOG=warn \
  cargo bench -p server --bench worker
