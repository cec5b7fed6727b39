#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The profile store at fleet scale: store_bench's simulated JVMs (period=10, made batch by batch,
# so memory stays bounded however long the run) into a fresh SQLite file and into a PostgreSQL 15
# server of its own (a temporary directory, Unix socket only; skipped when postgresql-15 is not
# installed). Per store one store_bench row: ingest as a multiple of real time (wall clock and the
# writes' CPU time in this process), the last hour and the whole range merged (each run twice),
# the whole range as the plain merge of every period (the baseline), and the size per JVM-day
# (PostgreSQL: pg_database_size less an empty database's, printed below the row).
#
#   fleet-store-bench.sh [JVMS [HOURS]]    default: 100 JVMs x 1 hour (36 000 periods)
#
# Environment: BUILD_DIR (default build). Times are wall clock: compare rows of one run only.
source "$(dirname "$0")/../../scripts/script_args.sh"
script_args_help "$@"
set -euo pipefail
if (($# > 2)); then
  echo "fleet-store-bench.sh: expected at most JVMS and HOURS (see --help)" >&2
  exit 2
fi
jvms=${1:-100}
hours=${2:-1}
if ! [[ "$jvms" =~ ^[1-9][0-9]*$ && "$hours" =~ ^[0-9]*\.?[0-9]+$ ]]; then
  echo "fleet-store-bench.sh: expected JVMS as a whole number > 0 and HOURS as a number (see --help)" >&2
  exit 2
fi
bench="${BUILD_DIR:-build}/bench/store/store_bench"
[ -x "$bench" ] || { echo "fleet-store-bench.sh: $bench not built (cmake --build build --target store_bench)" >&2; exit 1; }
work=$(mktemp -d)
pg=/usr/lib/postgresql/15/bin
as=()
cleanup() {
  if [ -f "$work/data/postmaster.pid" ]; then "${as[@]}" "$pg/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
"$bench" --store "$work/store.db" --jvms "$jvms" --hours "$hours"
rm -f "$work/store.db"*
if [ -x "$pg/initdb" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$work"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$pg/initdb" -A trust -U postgres -D "$work/data" >/dev/null
  "${as[@]}" "$pg/pg_ctl" -D "$work/data" -w -l "$work/server.log" \
    -o "-c listen_addresses='' -k $work -p 5432" start >/dev/null
  psql() { "${as[@]}" "$pg/psql" -h "$work" -U postgres -Atc "$1" postgres; }
  psql "CREATE DATABASE empty" >/dev/null
  psql "CREATE DATABASE fleet" >/dev/null
  "$bench" --store "postgresql://postgres@/fleet?host=$work&port=5432" --jvms "$jvms" --hours "$hours"
  empty=$(psql "SELECT pg_database_size('empty')")
  size=$(psql "SELECT pg_database_size('fleet')")
  awk -v s="$size" -v e="$empty" -v d="$(awk -v j="$jvms" -v h="$hours" 'BEGIN { print j * h / 24 }')" \
    'BEGIN { printf "PostgreSQL: %d bytes, less an empty database'"'"'s %d: %.1f MB per JVM-day\n", s, e, (s - e) / d / 1e6 }'
else
  echo "PostgreSQL: skipped, postgresql-15 is not installed"
fi
