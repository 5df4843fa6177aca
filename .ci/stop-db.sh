#!/usr/bin/env bash
# Stops the embedded PostgreSQL that .ci/run-portal.sh started.
source "$(dirname "$0")/lib.sh"
pg_down "$ROOT/.data/pg"
