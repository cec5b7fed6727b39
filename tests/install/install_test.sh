#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install tests, run by CTest: `cmake --install` to a temporary prefix; `jvmprof install-agent`
# into a copy of each JDK (17, and 25 when installed), then the demo under -agentlib:hprof and
# -Xrunhprof from another directory with no LD_LIBRARY_PATH; a foreign file blocks the links;
# --remove and the install manifest leave no file behind; the Debian package's contents,
# description, licence and dependencies (cpack -G DEB, read back with dpkg-deb), and its postrm,
# run on links install-agent made into copies of the JDKs, removing those links and nothing else.
#
#   install_test.sh BUILD_DIR
set -euo pipefail
case "${1:-}" in
  -h | --help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
esac
if (($# != 1)) || [[ ! -f "$1/CMakeCache.txt" ]]; then
  echo "install_test.sh: give the build directory (see --help)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/jvmprof lib/jvmprof/libhprof.so lib/jvmprof/libjvmpi.so lib/jvmprof/jvmpi-tracker.jar \
         lib/jvmprof/libjvmpi_sample.so include/jvmpi.h share/man/man1/jvmprof.1 \
         share/jvmprof/demo/demo/DemoApp.class; do
  [[ -f "$prefix/$f" ]] || fail "not installed: $f"
done
"$prefix/bin/jvmprof" --help > /dev/null || fail "installed jvmprof does not run"
# The man page: each subcommand's synopsis is one line of its own (on a wide page), not run into
# its description, and convert's lists --diff.
man_text=$(GROFF_NO_SGR=1 nroff -Tascii -man -rLL=250n "$prefix/share/man/man1/jvmprof.1" 2> /dev/null |
  sed 's/.\x08//g')
for want in "convert --to collapsed|pprof|speedscope|html [--measure M]... [--threads] [--diff BASE]" \
  "serve [--port P] [--ui-port U] [--bind ADDR] [FILES...]" \
  "install-agent [--jdk PATH]... [--all] [--dry-run] [--remove]"; do
  line=$(grep -F -- "$want" <<< "$man_text") || fail "man page: no line '$want'"
  [[ "$line" =~ (\]|OUT|\.\.\.\])[[:space:]]*$ ]] || fail "man page: synopsis runs on: $line"
done

run_dir="$work/elsewhere"
mkdir -p "$run_dir"
copies=()
for jdk in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
  if [[ ! -x "$jdk/bin/java" ]]; then
    echo "skipped: $jdk is not installed"
    continue
  fi
  copy="$work/jvm/$(basename "$jdk")"
  mkdir -p "$work/jvm"
  # Hard links where the file system allows (a copy of 300 MB otherwise).
  cp -al "$jdk" "$copy" 2> /dev/null || cp -a "$jdk" "$copy"
  "$prefix/bin/jvmprof" install-agent --jdk "$copy" > "$work/link.log" ||
    fail "install-agent into $copy: $(cat "$work/link.log")"
  for name in libhprof.so libjvmpi.so jvmpi-tracker.jar; do
    [[ -L "$copy/lib/$name" && "$(readlink "$copy/lib/$name")" == "$prefix/lib/jvmprof/$name" ]] ||
      fail "$copy/lib/$name is not our link"
  done
  for option in -agentlib:hprof=cpu=samples,heap=sites -Xrunhprof:cpu=samples,heap=sites; do
    rm -f "$run_dir/java.hprof.txt"
    (cd "$run_dir" && env -u LD_LIBRARY_PATH "$copy/bin/java" "$option" \
      -cp "$prefix/share/jvmprof/demo" demo.DemoApp > "$run_dir/out.txt" 2>&1) ||
      fail "$option on $copy: $(tail -5 "$run_dir/out.txt")"
    grep -q "^CPU SAMPLES BEGIN" "$run_dir/java.hprof.txt" || fail "$option: no CPU SAMPLES"
    grep -q "^SITES BEGIN" "$run_dir/java.hprof.txt" || fail "$option: no SITES"
    grep -q "demo.DemoApp" "$run_dir/java.hprof.txt" || fail "$option: the demo's methods are missing"
  done
  # Linking again changes nothing; --remove takes exactly our links away.
  "$prefix/bin/jvmprof" install-agent --jdk "$copy" | grep -q "already linked" ||
    fail "a second install-agent did not find its links"
  "$prefix/bin/jvmprof" install-agent --jdk "$copy" --remove > /dev/null
  left=$(ls "$copy/lib" | grep -E '^(libhprof\.so|libjvmpi\.so|jvmpi-tracker\.jar)$' || true)
  [[ -z "$left" ]] || fail "--remove left $left"
  # A file that is not ours blocks the JDK: no link is made, the file is kept, --remove keeps it.
  echo foreign > "$copy/lib/libhprof.so"
  if "$prefix/bin/jvmprof" install-agent --jdk "$copy" > /dev/null 2>&1; then
    fail "install-agent replaced or ignored a foreign libhprof.so"
  fi
  [[ "$(cat "$copy/lib/libhprof.so")" == foreign ]] || fail "the foreign file was changed"
  [[ ! -e "$copy/lib/libjvmpi.so" ]] || fail "a blocked JDK got some links"
  "$prefix/bin/jvmprof" install-agent --jdk "$copy" --remove > /dev/null 2>&1
  [[ -f "$copy/lib/libhprof.so" ]] || fail "--remove removed a foreign file"
  rm -f "$copy/lib/libhprof.so"
  copies+=("$copy")
  echo "ok: $(basename "$jdk")"
done

# Uninstalling: every file of the manifest removed leaves the prefix without a file.
while IFS= read -r f || [[ -n "$f" ]]; do rm -f "$f"; done < "$build/install_manifest.txt"
remaining=$(find "$prefix" -type f -o -type l)
[[ -z "$remaining" ]] || fail "files left after uninstalling: $remaining"

# The Debian package: contents and dependencies as dpkg-deb reads them.
(cd "$work" && cpack -G DEB -B "$work/package" --config "$build/CPackConfig.cmake" > cpack.log 2>&1) ||
  fail "cpack: $(tail -20 "$work/cpack.log")"
deb=$(ls "$work"/package/*.deb)
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/jvmprof ./usr/lib/jvmprof/libhprof.so ./usr/lib/jvmprof/libjvmpi.so \
         ./usr/lib/jvmprof/jvmpi-tracker.jar ./usr/include/jvmpi.h; do
  grep -q " $f\$" <<< "$contents" || fail "$f not in the package"
done
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "libc6" <<< "$depends" || fail "Depends lacks libc6: $depends"
grep -q "libstdc++6" <<< "$depends" || fail "Depends lacks libstdc++6: $depends"
# Package names alone (no versions): no compiler, build system or -dev package.
names=$(tr ',|' '\n\n' <<< "$depends" | sed 's/(.*//; s/ //g' | grep -v '^$')
if grep -Eqx "cmake|ninja-build|g\+\+(-[0-9]+)?|gcc(-[0-9]+)?|clang(-[0-9]+)?|.*-dev" <<< "$names"; then
  fail "build tools among the dependencies: $depends"
fi
description=$(dpkg-deb -f "$deb" Description)
# Two strings in CMake's CPACK_PACKAGE_DESCRIPTION would be joined by a ';' after a space.
[[ "$description" != *" ;"* ]] || fail "stray ';' in: $description"
grep -q " ./usr/share/doc/jvmprof/copyright\$" <<< "$contents" || fail "no copyright file in the package"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/jvmprof/copyright | grep -q "^License: Apache-2.0" ||
  fail "the copyright file names no Apache-2.0 licence"

# Removing the package: its postrm, with /usr/lib/jvm/ and /usr/lib/jvmprof/ moved to this test's
# JDK copies and a fresh install of the agents, removes the links install-agent made in every
# JDK, and keeps a foreign file and a link into somewhere else.
if ((${#copies[@]})); then
  dpkg-deb -e "$deb" "$work/control"
  [[ -x "$work/control/postrm" ]] || fail "the package has no executable postrm"
  cmake --install "$build" --prefix "$prefix" > "$work/install2.log"
  sed -e "s|/usr/lib/jvm/|$work/jvm/|g" -e "s|/usr/lib/jvmprof/|$prefix/lib/jvmprof/|g" \
    "$work/control/postrm" > "$work/postrm"
  for copy in "${copies[@]}"; do
    "$prefix/bin/jvmprof" install-agent --jdk "$copy" > /dev/null || fail "install-agent into $copy"
  done
  first="${copies[0]}"
  rm "$first/lib/libjvmpi.so"
  echo foreign > "$first/lib/libjvmpi.so"
  rm "$first/lib/jvmpi-tracker.jar"
  ln -s /nonexistent/jvmpi-tracker.jar "$first/lib/jvmpi-tracker.jar"
  sh "$work/postrm" remove || fail "postrm remove failed"
  for copy in "${copies[@]}"; do
    [[ ! -e "$copy/lib/libhprof.so" && ! -L "$copy/lib/libhprof.so" ]] ||
      fail "postrm left $copy/lib/libhprof.so"
  done
  for copy in "${copies[@]:1}"; do
    for name in libjvmpi.so jvmpi-tracker.jar; do
      [[ ! -L "$copy/lib/$name" ]] || fail "postrm left $copy/lib/$name"
    done
  done
  [[ "$(cat "$first/lib/libjvmpi.so")" == foreign ]] || fail "postrm touched a foreign file"
  [[ "$(readlink "$first/lib/jvmpi-tracker.jar")" == /nonexistent/jvmpi-tracker.jar ]] ||
    fail "postrm removed a link that is not the package's"
  echo "ok: postrm removed the links in ${#copies[@]} JDK(s)"
fi
echo "ok: package $(basename "$deb") (Depends: $depends)"
