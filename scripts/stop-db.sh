#!/usr/bin/env bash
# Stops the embedded PostgreSQL that scripts/run.sh started.
source "$(dirname "$0")/lib.sh"
pg_down "$ROOT/.data/pg"
