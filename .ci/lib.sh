# Shared helpers for the project's scripts. Source it; do not run it.
# Everything here installs only what is missing, from package registries.

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# The variables cargo-leptos sets (LEPTOS_OUTPUT_NAME, …) are in
# .cargo/config.toml's [env], so plain cargo builds what the scripts build.

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Phases: `phase NAME` ends the running phase and starts NAME; `phases_report`
# prints how long each took and the total. Scripts run by another (build-site.sh
# by test.sh) append to the same file, BERTH_PHASES, so one table covers all.
# A newcomer's first command must show where its minutes went (issue 59).
if [ -z "${BERTH_PHASES:-}" ]; then
  BERTH_PHASES="$(mktemp /tmp/berth-phases.XXXXXX)"; BERTH_PHASES_OWNER=$$
  printf 'start\t%s\n' "$(date +%s.%N)" > "$BERTH_PHASES"
fi
export BERTH_PHASES
phase() {
  printf 'phase\t%s\t%s\n' "$(date +%s.%N)" "$1" >> "$BERTH_PHASES"
  [ -n "$1" ] && say "$1"
  return 0
}
# phases_report [TITLE]: the table, from the process that created the file.
phases_report() {
  [ "${BERTH_PHASES_OWNER:-}" = $$ ] || return 0
  phase ""
  awk -F'\t' -v title="${1:-phases}" '
    $1 == "start" { t0 = $2; next }
    { if (name != "") { d = $2 - at; printf "  %-52s %7.1f s\n", name, d } name = $3; at = $2 }
    END { printf "  %-52s %7.1f s (%.1f min)\n", "total", at - t0, (at - t0) / 60 }
  ' "$BERTH_PHASES" | { echo; printf '\033[1m==> %s: how long each phase took\033[0m\n' "${1:-phases}"; cat; } >&2
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  say "installing $* (apt)"
  as_root apt-get install -y "$@" >/dev/null || { as_root apt-get update >/dev/null && as_root apt-get install -y "$@" >/dev/null; }
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }

# A script's throwaway PostgreSQL (folder, port) and work folder, gone when
# it exits, with the server it started (`SERVER_PID`) if any.
scratch() {
  PG_DIR="$(mktemp -d "/tmp/berth-$1-pg.XXXXXX")"
  PG_PORT=$((20000 + RANDOM % 20000))
  WORK="$(mktemp -d "/tmp/berth-$1.XXXXXX")"
  trap scratch_cleanup EXIT
}
scratch_cleanup() {
  [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
  pg_down "$PG_DIR"
  rm -rf "$PG_DIR" "$WORK"
}

ensure_postgres() {
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || apt_install postgresql
  command -v pgbench >/dev/null || apt_install postgresql-contrib
}

# Runs a PostgreSQL tool as the cluster's owner: initdb refuses to run as root.
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_up DIR PORT [extra postgres options]: initialise DIR if empty, start a server
# listening on 127.0.0.1:PORT with its socket inside DIR. Idempotent.
pg_up() {
  local dir="$1" port="$2"; shift 2
  ensure_postgres
  local bin; bin="$(pg_bin)"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    pg_as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! pg_as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    pg_as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 $*" >/dev/null
  fi
}

pg_down() {
  local dir="$1"
  [ -f "$dir/PG_VERSION" ] && pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir" -m fast stop >/dev/null 2>&1 || true
}

# load_pools URL ADMIN_TOKEN PREFIX: the load scripts' 8 pools (40 whole GPUs
# and 80 MIG slices each), their ids on stdout, one a line.
load_pools() {
  for p in $(seq 1 8); do
    curl -sf -X POST "$1/api/v1/pools" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
      -d "{\"name\":\"$3-$p\",\"kinds\":[{\"kind\":\"nvidia.com/gpu\",\"capacity\":40},{\"kind\":\"nvidia.com/mig-1g.24gb\",\"capacity\":80}]}" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
  done
}

# createdb_if_missing PORT NAME
createdb_if_missing() {
  local port="$1" name="$2"
  psql -h 127.0.0.1 -p "$port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1 ||
    psql -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE DATABASE \"$name\""
}

# wait_listening HOST:PORT WHAT [SECONDS]: until something accepts there, or fail.
# `make run` starts every service this way before the server, so nothing the
# server sends first (a notification, a scrape) meets a closed port.
wait_listening() {
  local addr="$1" what="$2" limit="${3:-30}" i
  for ((i = 0; i < limit * 10; i++)); do
    (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  say "$what did not listen on $addr within ${limit}s"; return 1
}

# start_mail_catcher MAILDIR HOST:PORT LOG: a real SMTP server (PyPI aiosmtpd)
# delivering into MAILDIR/new, listening when this returns.
start_mail_catcher() {
  ensure_aiosmtpd
  mkdir -p "$1/new" "$1/cur" "$1/tmp"
  python3 -m aiosmtpd -n -l "$2" -c aiosmtpd.handlers.Mailbox "$1" > "$3" 2>&1 &
  wait_listening "$2" "the mail catcher"
}

# The linker .ci/linker uses when it is there: mold links the server and the
# test binary several times faster than rust-lld (docs/benchmarks.md).
ensure_mold() { command -v mold >/dev/null || apt_install mold || say "no mold: linking with rust-lld"; }

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
lock_version() { awk -v n="$1" '$0 == "name = \"" n "\"" { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"; }

ensure_toolchain() {
  rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
  ensure_mold
  command -v node >/dev/null || apt_install nodejs npm
  if [ ! -x "$ROOT/end2end/node_modules/.bin/sass" ] || [ ! -x "$ROOT/end2end/node_modules/.bin/wasm-opt" ] ||
     [ "$ROOT/end2end/package-lock.json" -nt "$ROOT/end2end/node_modules/.package-lock.json" ]; then
    say "installing sass, binaryen and Playwright (npm)"
    (cd "$ROOT/end2end" && npm ci --no-audit --no-fund >/dev/null)
  fi
}

# wasm_bindgen_ready: true when the CLI matching Cargo.lock is installed.
wasm_bindgen_ready() { [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" = "$(lock_version wasm-bindgen)" ]; }

# install_wasm_bindgen_in_background: a fresh machine compiles the CLI (about
# 4.5 minutes alone) while the project compiles; it depends on nothing of
# ours. Sets WASM_BINDGEN_PID; wait_wasm_bindgen waits for it.
install_wasm_bindgen_in_background() {
  WASM_BINDGEN_PID=""
  wasm_bindgen_ready && return 0
  local want; want="$(lock_version wasm-bindgen)"
  say "installing wasm-bindgen-cli $want in the background (once; log in target/wasm-bindgen-install.log)"
  mkdir -p "$ROOT/target"
  # Its own target dir: the project's build holds target/'s lock.
  cargo install wasm-bindgen-cli --version "=$want" --target-dir "$ROOT/target/wasm-bindgen-cli" \
    > "$ROOT/target/wasm-bindgen-install.log" 2>&1 &
  WASM_BINDGEN_PID=$!
}
wait_wasm_bindgen() {
  [ -n "${WASM_BINDGEN_PID:-}" ] || return 0
  wait "$WASM_BINDGEN_PID" || { tail -20 "$ROOT/target/wasm-bindgen-install.log" >&2; say "installing wasm-bindgen-cli failed"; return 1; }
  WASM_BINDGEN_PID=""
  # Its build is no part of the project's: 300 MB of target/ otherwise.
  rm -rf "$ROOT/target/wasm-bindgen-cli"
}

ensure_chromium() { [ -x /usr/bin/chromium ] || apt_install chromium; }

# The PyPI tools the tests drive, each pinned: installed once, and again
# only when the version on the machine is not the pinned one.
ensure_pypi() {
  local package="$1" version="$2"
  if [ "$(python3 -c "import importlib.metadata as m; print(m.version('$package'))" 2>/dev/null)" != "$version" ]; then
    say "installing $package $version (PyPI)"
    python3 -m pip install --quiet --root-user-action=ignore "$package==$version"
  fi
}
# Offline Kubernetes schemas (1.30 among them) for the manifest tests.
ensure_kubernetes_validate() { ensure_pypi kubernetes-validate 1.37.0; }
# icalendar: the calendar-feed tests parse Berth's ICS with it.
ensure_icalendar() { ensure_pypi icalendar 7.3.0; }
# aiosmtpd: the real SMTP server the notification tests send to.
ensure_aiosmtpd() { ensure_pypi aiosmtpd 1.4.6; }
# jupyter-server: the real workspace behind `berth gate` in the gate's tests
# (server/tests/it/gate_jupyter.rs), terminals included (terminado).
ensure_jupyter_server() { ensure_pypi jupyter-server 2.21.1; }
# mcp: the reference MCP client the assistant tests drive Berth with
# (server/tests/mcp/client.py), over Streamable HTTP and stdio.
ensure_mcp() { ensure_pypi mcp 2.3.0; }
# schemathesis: fuzzes the API against its OpenAPI document (.ci/contract.sh).
ensure_schemathesis() { ensure_pypi schemathesis 4.32.5; }

ensure_prometheus() { command -v prometheus >/dev/null && command -v promtool >/dev/null || apt_install prometheus; }
