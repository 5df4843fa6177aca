#!/usr/bin/env bash
# A newcomer's loop, timed (issue 59): a fresh clone's `make run` until the
# portal listens, a one-line change to a page and to a handler served again,
# and (with TEST=1) a fresh clone's `make test` with its target/ size — each
# beside the fixed reference build (.ci/bench/reference) in the same hour,
# so a slow hour on the machine shows as a slow reference, not as Berth.
# FRESH_TOOLS=1 also uninstalls wasm-bindgen-cli first, as on a new machine.
# Printed, not asserted; docs/benchmarks.md keeps the figures.
source "$(dirname "$0")/lib.sh"
WORK="$(mktemp -d /tmp/berth-newcomer.XXXXXX)"
# The clone's PostgreSQL runs as the postgres user, who must reach .data/.
chmod 755 "$WORK"
RUN_PID=""
cleanup() {
  [ -n "$RUN_PID" ] && kill -- "-$RUN_PID" 2>/dev/null
  [ -d "$WORK/clone/.data/pg" ] && pg_down "$WORK/clone/.data/pg"
  # Each make run's log stays for a look at what it printed.
  mkdir -p /tmp/berth-newcomer-logs && cp "$WORK"/*.log /tmp/berth-newcomer-logs/ 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }'; }

reference() {
  (cd "$ROOT/.ci/bench/reference" && cargo fetch -q)
  local t0; t0=$(date +%s.%N)
  cargo build -q --manifest-path "$ROOT/.ci/bench/reference/Cargo.toml" --target-dir "$WORK/reference-$1" 2>/dev/null
  elapsed "$t0"
}

# serve_once LABEL: `make run` in the clone until the portal listens; prints seconds.
serve_once() {
  local t0; t0=$(date +%s.%N)
  # A session of its own (setsid, which does not fork here: a background
  # job is no group leader), so the kill below stops make run and all it
  # started — and not this script, whose group the job would share. Without
  # this script's BERTH_PHASES, make run keeps and prints its own phase table.
  BERTH_PG_PORT=$PORT0 BERTH_LISTEN=127.0.0.1:$((PORT0 + 1)) \
    BERTH_METRICS_LISTEN=127.0.0.1:$((PORT0 + 2)) BERTH_PROMETHEUS_LISTEN=127.0.0.1:$((PORT0 + 3)) \
    BERTH_SMTP_LISTEN=127.0.0.1:$((PORT0 + 4)) env -u BERTH_PHASES setsid make -C "$WORK/clone" run > "$WORK/$1.log" 2>&1 &
  RUN_PID=$!
  wait_listening "127.0.0.1:$((PORT0 + 1))" "the portal ($1)" 3600 >/dev/null
  local took; took=$(elapsed "$t0")
  # The phase table make run prints once the portal listens.
  for _ in $(seq 50); do grep -q 'how long each phase took' "$WORK/$1.log" && break; sleep 0.2; done
  sleep 0.5; sed -n '/how long each phase took/,$p' "$WORK/$1.log" | sed 's/\x1b\[[0-9;]*m//g' | grep -v '^\s*$' >&2 || true
  kill -- "-$RUN_PID" 2>/dev/null || true
  wait "$RUN_PID" 2>/dev/null || true; RUN_PID=""
  echo "$took"
}

PORT0=$((30000 + RANDOM % 20000))
git clone -q "$ROOT" "$WORK/clone"
if [ "${FRESH_TOOLS:-}" = 1 ]; then cargo uninstall -q wasm-bindgen-cli 2>/dev/null || true; fi
say "the reference build"
ref_before=$(reference before)
say "a fresh clone's make run (until the portal listens)"
fresh=$(serve_once fresh)
say "a one-line change to a page, served again"
sed -i 's/No bookings ended, canceled or rejected in the last 30 days./Nothing ended, canceled or rejected in the last 30 days./' "$WORK/clone/app/src/pages/my_bookings/mod.rs"
page=$(serve_once page)
say "a one-line change to a handler, served again"
sed -i 's/format!("{what} not found")/format!("{what} was not found")/' "$WORK/clone/server/src/api/error.rs"
handler=$(serve_once handler)
if [ "${TEST:-}" = 1 ]; then
  say "a fresh clone's make test"
  rm -rf "$WORK/clone/target"; git -C "$WORK/clone" checkout -q .
  t0=$(date +%s.%N)
  (cd "$WORK/clone" && CI=true env -u BERTH_PHASES make test > "$WORK/test.log" 2>&1) && test_ok=passed || test_ok=FAILED
  test_s=$(elapsed "$t0")
  target_gb=$(du -sb "$WORK/clone/target" | awk '{printf "%.1f", $1 / 1e9}')
fi
ref_after=$(reference after)
ref=$(( (ref_before + ref_after) / 2 ))
say "the newcomer's figures (reference build: ${ref_before} s before, ${ref_after} s after)"
printf '%-40s %6s s  %5s× the reference\n' \
  "fresh make run, portal listening" "$fresh" "$(awk -v a="$fresh" -v r="$ref" 'BEGIN{printf "%.1f", a/r}')" \
  "one-line page change, served" "$page" "$(awk -v a="$page" -v r="$ref" 'BEGIN{printf "%.1f", a/r}')" \
  "one-line handler change, served" "$handler" "$(awk -v a="$handler" -v r="$ref" 'BEGIN{printf "%.1f", a/r}')"
if [ "${TEST:-}" = 1 ]; then
  printf '%-40s %6s s  %5s× the reference (%s; target/ %s GB)\n' "fresh make test" "$test_s" \
    "$(awk -v a="$test_s" -v r="$ref" 'BEGIN{printf "%.1f", a/r}')" "$test_ok" "$target_gb"
  sed -n '/how long each phase took/,$p' "$WORK/test.log" | sed 's/\x1b\[[0-9;]*m//g'
fi
