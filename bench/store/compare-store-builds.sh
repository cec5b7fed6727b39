#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two builds of store_bench side by side on one machine, interleaved so that load from other work
# falls on both: each round runs OLD, NEW and NEW again (the A/A row: how far two runs of the same
# build differ), into SQLite and, when postgresql-15 is installed, into one PostgreSQL 15 server
# of its own (a fresh database per run). One store_bench table row per run, then each run's
# PostgreSQL database size (and an empty database's, to subtract).
#
#   compare-store-builds.sh OLD_BENCH NEW_BENCH [JVMS [HOURS [ROUNDS]]]   default: 2 JVMs x 0.5 h, 3 rounds
#
# OLD_BENCH and NEW_BENCH are store_bench executables, e.g. one built at the commit before a
# schema change and build/bench/store/store_bench.
source "$(dirname "$0")/../../scripts/script_args.sh"
script_args_help "$@"
set -euo pipefail
if (($# < 2 || $# > 5)); then
  echo "compare-store-builds.sh: expected OLD_BENCH NEW_BENCH [JVMS [HOURS [ROUNDS]]] (see --help)" >&2
  exit 2
fi
old=$1 new=$2 jvms=${3:-2} hours=${4:-0.5} rounds=${5:-3}
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "compare-store-builds.sh: $b is not an executable" >&2; exit 2; }
done
if ! [[ "$jvms" =~ ^[0-9]+$ && "$hours" =~ ^[0-9.]+$ && "$rounds" =~ ^[0-9]+$ ]]; then
  echo "compare-store-builds.sh: expected JVMS, HOURS and ROUNDS as numbers (see --help)" >&2
  exit 2
fi
work=$(mktemp -d)
pg=/usr/lib/postgresql/15/bin
as=()
cleanup() {
  if [ -f "$work/data/postmaster.pid" ]; then "${as[@]}" "$pg/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
have_pg=0
if [ -x "$pg/initdb" ]; then
  have_pg=1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$work"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$pg/initdb" -A trust -U postgres -D "$work/data" >/dev/null
  "${as[@]}" "$pg/pg_ctl" -D "$work/data" -w -l "$work/server.log" \
    -o "-c listen_addresses='' -k $work -p 5432" start >/dev/null
fi
psql() { "${as[@]}" "$pg/psql" -h "$work" -U postgres -Atc "$1" postgres; }
if ((have_pg)); then
  psql "CREATE DATABASE empty" >/dev/null
  echo "PostgreSQL empty database size: $(psql "SELECT pg_database_size('empty')") bytes"
fi
run=0
for ((r = 1; r <= rounds; r++)); do
  for which in old new new-again; do
    bench=$new
    [ "$which" = old ] && bench=$old
    run=$((run + 1))
    echo "round $r, $which:"
    "$bench" --store "$work/store$run.db" --jvms "$jvms" --hours "$hours"
    rm -f "$work/store$run.db"*
    if ((have_pg)); then
      psql "CREATE DATABASE run$run" >/dev/null
      "$bench" --store "postgresql://postgres@/run$run?host=$work&port=5432" --jvms "$jvms" --hours "$hours"
      echo "PostgreSQL database size: $(psql "SELECT pg_database_size('run$run')") bytes"
      psql "DROP DATABASE run$run" >/dev/null
    fi
  done
done
