#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real programs under HPROF: Debian's H2 (an SQL script of INSERTs, CREATE INDEX, a SELECT), Lucene
# 4.10 (IndexFiles over generated files, then a query), Xalan (an XSLT transform) and Jython (a
# script), each with an answer known in advance, run without an agent and under every HPROF mode
# (cpu=samples, cpu=times, cpu=old, heap=sites, heap=dump, monitor=y, heap=dump,format=b) on JDK
# 17 and 25. Every run must exit 0, print the known answer and leave a well-formed report; prints a
# Markdown table with each run's slowdown against no agent. Installs the Debian packages
# (libh2-java liblucene4.10-java libxalan2-java jython) through scripts/deps.sh when missing.
#
#   scripts/real-programs.sh [--quick] [--jdks 17,25] [--programs h2,lucene,xalan,jython]
#                            [--modes 'cpu=times;heap=sites'] [--keep DIR]
#
# --quick: the CI sizes (the ctest test real_programs.quick runs --quick --jdks 17 --modes
# 'cpu=times;heap=sites;cpu=samples'); without it the full sizes (H2 100,000 INSERTs, Lucene
# 2,500 files, Xalan 100,000 records, Jython 300,000 iterations). --keep keeps each run's
# directory (its java.hprof.txt and output). Environment: BUILD_DIR (default build).
source "$(dirname "$0")/script_args.sh"
script_args_help "$@"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/deps.sh" --tests
exec python3 "$here/real_programs.py" --build "${BUILD_DIR:-$here/../build}" "$@"
