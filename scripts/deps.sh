#!/usr/bin/env bash
# Installs, with apt-get, whatever the build and the tests need and the machine lacks.
# Idempotent: packages already present are not touched, and apt-get is not called at all
# when nothing is missing.
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail

packages=(g++ cmake ninja-build libgtest-dev openjdk-17-jdk-headless nlohmann-json3-dev zlib1g-dev visualvm clang libclang-rt-dev dpkg-dev file
  libh2-java liblucene4.10-java libxalan2-java jython
  libprotobuf-dev protobuf-compiler libcpp-httplib-dev pkg-config python3 python3-jsonschema chromium
  chromium-driver python3-selenium golang-go)
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
