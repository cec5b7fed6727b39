#!/usr/bin/env bash
# METHOD_ENTRY/METHOD_EXIT cost on a call-heavy program: no agent, JVMPI through bytecode
# insertion (libjvmpi + a counting agent), and JVMTI's own MethodEntry/MethodExit (a counting
# JVMTI agent); median of 3 runs each, as ratios to no agent. Needs an existing build/.
set -euo pipefail
cd "$(dirname "$0")/.."
java="${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java"
b=build/bench/methods
rounds="${1:-20}"
run() {  # prints wall seconds of one run
  local start end
  start=$(date +%s.%N)
  "$java" "$@" -cp "$b/classes" benchmethods.CallHeavy "$rounds" > /dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
declare -A t
for config in none jvmpi jvmti; do
  times=()
  for _ in 1 2 3; do
    case $config in
      none) times+=("$(run)") ;;
      jvmpi) times+=("$(run "-agentpath:$PWD/build/src/jvmpi/libjvmpi.so=$PWD/$b/libbench_count_methods_jvmpi.so")") ;;
      jvmti) times+=("$(run "-agentpath:$PWD/$b/libbench_count_methods_jvmti.so")") ;;
    esac
  done
  t[$config]=$(median "${times[@]}")
done
printf '%-40s %8s %8s\n' configuration seconds ratio
for config in none jvmpi jvmti; do
  printf '%-40s %8.2f %8.2f\n' "$config" "${t[$config]}" "$(echo "${t[$config]} / ${t[none]}" | bc -l)"
done
