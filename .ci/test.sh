#!/usr/bin/env bash
# Runs every test: Rust (pure rules, HTTP + PostgreSQL, concurrency) and the
# browser tests in Debian Chromium. Starts a throwaway PostgreSQL of its own.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
phase "the test tools (Chromium, PyPI, Prometheus)"
ensure_chromium
ensure_kubernetes_validate
ensure_icalendar
ensure_aiosmtpd
ensure_jupyter_server
ensure_mcp
ensure_prometheus
# A clean checkout gains nothing from incremental state, which doubles
# target/ (7.5 of 16 GB): CI once ran out of disk in its Prometheus test.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
bash .ci/build-site.sh dev
# A clean build needs ~12 GB and the tests a few more; a full disk shows up
# later as a stack that "did not start", so say up front how much there is.
say "free disk: $(df -h --output=avail "$ROOT" /tmp | tail -n +2 | xargs)"

PG_DIR="$(mktemp -d /tmp/berth-test-pg.XXXXXX)"
PG_PORT="${BERTH_TEST_PG_PORT:-$((20000 + RANDOM % 20000))}"
cleanup() { pg_down "$PG_DIR"; rm -rf "$PG_DIR"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT
phase "starting a throwaway PostgreSQL on port $PG_PORT"
# Durability is irrelevant for a throwaway cluster; skipping fsync keeps tests fast.
pg_up "$PG_DIR" "$PG_PORT" -c fsync=off -c synchronous_commit=off -c full_page_writes=off
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"

LOGS="$(mktemp -d /tmp/berth-test-logs.XXXXXX)"
status=0
phase "lints (rustfmt, clippy with warnings as errors, no import circle between files and none pointing up)"
if cargo fmt --all --check >"$LOGS/clippy.log" 2>&1 &&
   cargo clippy --workspace --exclude frontend --all-targets -- -D warnings >>"$LOGS/clippy.log" 2>&1 &&
   python3 .ci/test_import_circles.py >>"$LOGS/clippy.log" 2>&1 &&
   python3 .ci/import_circles.py app/src:pages,rpc,backend,rules,model server/src >>"$LOGS/clippy.log" 2>&1; then
  clippy_ok=ok
else
  clippy_ok=FAILED; status=1
  grep -E '^(Diff in|warning|error)|circle' -A8 "$LOGS/clippy.log" | head -150
fi

phase "Rust tests"
# Every area runs, so one failure does not hide the rest (.ci/rust-tests.sh:
# one binary, an area per process).
bash .ci/rust-tests.sh 2>&1 | tee "$LOGS/cargo-test.log" || status=1
rust_summary="$(grep -E '^test result:' "$LOGS/cargo-test.log" | awk '{p+=$4; f+=$6} END {printf "%d passed, %d failed", p, f}')"

phase "browser tests (Playwright in Debian Chromium)"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "DROP DATABASE IF EXISTS berth_e2e" -c "CREATE DATABASE berth_e2e"
export BERTH_E2E_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth_e2e"
(cd end2end && npx playwright test) 2>&1 | tee "$LOGS/playwright.log" || status=1
browser_summary="$(grep -E '^\s+[0-9]+ (passed|failed|flaky|skipped)' "$LOGS/playwright.log" | xargs)"

phases_report "make test"
say "summary"
echo "Lints:   $clippy_ok"
echo "Rust:    $rust_summary"
echo "Browser: ${browser_summary:-no Playwright summary (it did not run)}"
exit $status
