#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The profile store's benchmark: the same simulated JVMs (period=10, 100 CPU samples/s, 24-frame
# stacks from a pool of 2000, 20 allocation sites per period) into SQLite, into the baseline
# without frame and stack dedup, and into PostgreSQL 15 (a server of its own in a temporary
# directory, when postgresql-15 is installed). One table row per store.
#
#   run-store-bench.sh [JVMS [HOURS]]    default: 10 JVMs x 1 hour
#
# Environment: BUILD_DIR (default build). The machine should be quiet: times are wall clock.
source "$(dirname "$0")/../../scripts/script_args.sh"
script_args_help "$@"
set -euo pipefail
jvms=${1:-10}
hours=${2:-1}
if ! [[ "$jvms" =~ ^[0-9]+$ && "$hours" =~ ^[0-9.]+$ ]] || (($# > 2)); then
  echo "run-store-bench.sh: expected JVMS and HOURS as numbers (see --help)" >&2
  exit 2
fi
bench="${BUILD_DIR:-build}/bench/store/store_bench"
[ -x "$bench" ] || { echo "run-store-bench.sh: $bench not built (cmake --build build --target store_bench)" >&2; exit 1; }
work=$(mktemp -d)
pg=/usr/lib/postgresql/15/bin
as=()
cleanup() {
  if [ -f "$work/data/postmaster.pid" ]; then "${as[@]}" "$pg/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
"$bench" --store "$work/store.db" --jvms "$jvms" --hours "$hours"
"$bench" --store "$work/baseline.db" --jvms "$jvms" --hours "$hours" --baseline
if [ -x "$pg/initdb" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$work"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$pg/initdb" -A trust -U postgres -D "$work/data" >/dev/null
  "${as[@]}" "$pg/pg_ctl" -D "$work/data" -w -l "$work/server.log" \
    -o "-c listen_addresses='' -k $work -p 5432" start >/dev/null
  "$bench" --store "postgresql://postgres@/postgres?host=$work&port=5432" --jvms "$jvms" --hours "$hours"
  echo "PostgreSQL database size: $("${as[@]}" psql -h "$work" -U postgres -Atc "SELECT pg_database_size('postgres')") bytes"
else
  echo "PostgreSQL: skipped, postgresql-15 is not installed"
fi
