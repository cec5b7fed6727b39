#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, with apt-get, what the machine lacks for the main job or for the test suite.
# Idempotent: packages already present are not touched, and apt-get is not called at all when
# nothing is missing.
#
#   deps.sh --main-job   the build of the agents, jvmprof and the demo, and packaging (cpack):
#                        compiler, CMake, Ninja, ccache, JDK 17, gtest, JSON, zlib, protobuf,
#                        cpp-httplib, SQLite and libpq (the profile store), OpenSSL (net=
#                        over TLS), dpkg-dev (about
#                        190 packages with their dependencies, 0.75 GiB on a bare Debian 12;
#                        scripts/setup.sh installs only these)
#   deps.sh --tests      those and what the tests add: clang and libFuzzer (fuzzing), VisualVM's
#                        heap library, Debian's H2, Lucene, Xalan and Jython (real programs),
#                        Python with jsonschema and Selenium, Chromium and its driver (the web UI),
#                        Go (go tool pprof), PostgreSQL 15 (the shared profile store's tests),
#                        openssl and iproute2 (the TLS test's certificates and namespaces)
#                        (about 290 packages more, 1.6 GiB more)
#   deps.sh              the same as --tests
source "$(dirname "$0")/script_args.sh"
script_args_help "$@"
main_job_packages=(g++ cmake ninja-build ccache pkg-config openjdk-17-jdk-headless libgtest-dev
  nlohmann-json3-dev zlib1g-dev libprotobuf-dev protobuf-compiler libcpp-httplib-dev
  libsqlite3-dev libpq-dev libssl-dev dpkg-dev file)
test_packages=(groff-base clang libclang-rt-dev visualvm libh2-java liblucene4.10-java libxalan2-java jython
  python3 python3-jsonschema python3-selenium chromium chromium-driver golang-go postgresql-15
  openssl iproute2)
case "${1:-}" in
  --main-job) packages=("${main_job_packages[@]}") ;;
  "" | --tests) packages=("${main_job_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "deps.sh: unexpected argument '$1' (see deps.sh --help)" >&2
    exit 2
    ;;
esac
if (($# > 1)); then
  echo "deps.sh: unexpected argument '$2' (see deps.sh --help)" >&2
  exit 2
fi
set -euo pipefail

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
