#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Server benchmark: Debian's Tomcat 10 serving the project's LoadServlet (bench/server/java: CPU
# work, allocation, a contended lock) to apache2-utils' ab with 50 concurrent clients, with no
# agent (twice: the A/A row), with HPROF in every mode and the combinations a service would use,
# streaming to `jvmprof serve` (net=), and with async-profiler's cpu, alloc and lock modes when
# ASPROF_LIB names its libasyncProfiler.so. Rounds are interleaved (round 1 of every
# configuration, then round 2, ...). Prints a Markdown table of median requests/s and p50 / p99
# latency, each relative to no agent.
#
#   bench/server/run-server-bench.sh [--build DIR] [--rounds N] [--duration S] [--warmup S]
#                                    [--clients N] [--only SUBSTR,...]
#                                    [--after-stop [--attached S]]
#
# --build: build directory with lib/libhprof.so and src/jvmprof/jvmprof (default: build next to
# bench/); --rounds (3); --duration: measured seconds per run (20); --warmup: seconds of load
# before measuring (8); --clients (50); --only: run only the configurations whose name contains
# one of the substrings, or is exactly NAME for an item =NAME (no agent always runs); --after-stop:
# instead of the configurations, the throughput after `jvmprof attach` (cpu=samples,heap=sites,
# monitor=y) under load and `jvmprof stop` against never-attached Tomcats, with --attached the
# seconds of the loaded phase P is attached in (15). Environment: JDK17_HOME (default
# /usr/lib/jvm/java-17-openjdk-amd64, Debian's Tomcat 10 runs on it), ASPROF_LIB.
# Installs tomcat10 and apache2-utils with apt-get when they are missing (the benchmark's own
# dependencies; the build and the tests do not need them). Takes about 35 s per configuration
# and round; every run uses only 127.0.0.1.
source "$(dirname "$0")/../../scripts/script_args.sh"
script_args_help "$@"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
args=()
while (($# > 0)); do
  case "$1" in
    --build)
      (($# >= 2)) || { echo "run-server-bench.sh: --build needs a directory" >&2; exit 2; }
      build=$2
      shift 2
      ;;
    --after-stop)
      args+=("$1")
      shift
      ;;
    --rounds | --duration | --warmup | --clients | --attached)
      if (($# < 2)) || ! [[ $2 =~ ^[0-9]+$ ]]; then
        echo "run-server-bench.sh: $1 needs a whole number" >&2
        exit 2
      fi
      args+=("$1" "$2")
      shift 2
      ;;
    --only)
      (($# >= 2)) || { echo "run-server-bench.sh: --only needs a list of names" >&2; exit 2; }
      args+=("$1" "$2")
      shift 2
      ;;
    *)
      echo "run-server-bench.sh: unexpected argument '$1' (see run-server-bench.sh --help)" >&2
      exit 2
      ;;
  esac
done
if [ ! -f /usr/share/tomcat10/lib/catalina.jar ] || ! command -v ab > /dev/null; then
  echo "run-server-bench.sh: installing tomcat10 and apache2-utils" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    tomcat10 apache2-utils > /dev/null
fi
if [ -n "${ASPROF_LIB:-}" ]; then
  [ -f "$ASPROF_LIB" ] || { echo "run-server-bench.sh: ASPROF_LIB=$ASPROF_LIB not found" >&2; exit 2; }
  args+=(--asprof "$ASPROF_LIB")
fi
exec python3 "$here/bench.py" --build "$build" \
  --jdk "${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}" "${args[@]}"
