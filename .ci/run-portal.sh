#!/usr/bin/env bash
# The embedded default: a local PostgreSQL kept in .data/pg (it survives
# restarts), the demo pool and users (development login) with an API token for
# ada, and the portal at http://127.0.0.1:3000. Installs whatever is missing first.
source "$(dirname "$0")/lib.sh"
PG_PORT="${BERTH_PG_PORT:-5544}"
LISTEN="${BERTH_LISTEN:-127.0.0.1:3000}"
cd "$ROOT"

# The portal needs every page's bundle only (the server links it from every
# page when the people's is absent); `make test` builds and tests both.
BERTH_BUNDLES="${BERTH_BUNDLES:-berth}" bash .ci/build-site.sh dev
phase "starting PostgreSQL in .data/pg on port $PG_PORT"
pg_up "$ROOT/.data/pg" "$PG_PORT"
createdb_if_missing "$PG_PORT" berth
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/berth"

berth=target/debug/berth
phase "the demo data"
# With a month of history (simulated, labelled as such), so Reports,
# the Dashboard and Tokenomics have figures on first open.
$berth seed-demo --history
# The key calendar-feed URLs are derived from, kept so they survive restarts.
if [ ! -s .data/calendar-key ]; then
  (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/calendar-key)
fi
export BERTH_CALENDAR_KEY_FILE="$ROOT/.data/calendar-key"
if [ ! -s .data/demo-token ]; then
  $berth token create --email ada@berth.local --name demo --expires-in 365d 2>/dev/null > .data/demo-token
fi
# A real Prometheus (Debian package, data in .data/prometheus) scrapes the
# portal's metrics and the simulated cluster's DCGM exporter; the worker
# measures each session's GPU use from it every minute.
phase "starting Prometheus and the mail catcher"
ensure_prometheus
export BERTH_METRICS_LISTEN="${BERTH_METRICS_LISTEN:-127.0.0.1:9464}"
PROM_LISTEN="${BERTH_PROMETHEUS_LISTEN:-127.0.0.1:9090}"
mkdir -p .data/prometheus
cat > .data/prometheus/prometheus.yml <<YML
global:
  scrape_interval: 15s
scrape_configs:
  - job_name: berth
    static_configs:
      - targets: ['$BERTH_METRICS_LISTEN']
  - job_name: simulated-dcgm
    honor_labels: true
    metrics_path: /simulated-dcgm/metrics
    static_configs:
      - targets: ['$BERTH_METRICS_LISTEN']
YML
say "starting Prometheus on http://$PROM_LISTEN (data in .data/prometheus)"
prometheus --config.file=.data/prometheus/prometheus.yml --storage.tsdb.path=.data/prometheus/data \
  --web.listen-address="$PROM_LISTEN" > .data/prometheus/prometheus.log 2>&1 &
wait_listening "$PROM_LISTEN" Prometheus
export BERTH_PROMETHEUS_URL="http://$PROM_LISTEN/"
export BERTH_DCGM_SELECTOR='job="simulated-dcgm"'
# A real SMTP server (PyPI aiosmtpd) catches the notification mail in a
# Maildir, .data/mail/new/ (one file per message); webhooks may reach
# loopback receivers here.
# Listening before the server starts: its first notification once went out
# while the catcher was still importing Python (issue 59).
SMTP_LISTEN="${BERTH_SMTP_LISTEN:-127.0.0.1:2525}"
say "starting the mail catcher on smtp://$SMTP_LISTEN (messages in .data/mail/new)"
start_mail_catcher "$ROOT/.data/mail" "$SMTP_LISTEN" .data/mail.log
export BERTH_SMTP_URL="${BERTH_SMTP_URL:-smtp://$SMTP_LISTEN}"
export BERTH_SMTP_FROM="${BERTH_SMTP_FROM:-Berth <berth@berth.local>}"
export BERTH_WEBHOOK_ALLOW_PRIVATE=true

cat <<MSG

  Berth is starting on http://$LISTEN
  Sign in at http://$LISTEN/signin with the development login
  (ada@berth.local user, mia@berth.local manager, admin@berth.local admin).
  Demo API token for ada@berth.local (kept in .data/demo-token):
    curl -H "Authorization: Bearer $(cat .data/demo-token)" http://$LISTEN/api/v1/pools
  Prometheus metrics: http://$BERTH_METRICS_LISTEN/metrics (scraped by http://$PROM_LISTEN,
  with the simulated GPUs' DCGM metrics: the Dashboard, Reports and Tokenomics show their measured use)
  The same from the shell:  $berth login --url http://$LISTEN < .data/demo-token && $berth ls
  Notifications (Settings chooses which) arrive as mail files in .data/mail/new
  Your calendar feed's address (subscribe from any calendar app): http://$LISTEN/settings
  Stop with Ctrl-C; the database stays in .data/pg (make stop-db stops it).

MSG
# No identity provider here: the labelled development login, loopback only.
# Set BERTH_OIDC_ISSUER/_CLIENT_ID/_CLIENT_SECRET to use single sign-on instead
# (the portal refuses the development login beside single sign-on).
login=(--dev-login); [ -n "${BERTH_OIDC_ISSUER:-}" ] && login=()
phase "starting the portal"
$berth serve --listen "$LISTEN" "${login[@]}" &
SERVER_PID=$!
# Ctrl-C reaches the server too (same process group); pass TERM on as well.
trap 'kill "$SERVER_PID" 2>/dev/null' TERM
wait_listening "$LISTEN" "the portal" 120 && phases_report "make run"
wait "$SERVER_PID"
