#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks, or adds, the SPDX licence line (Apache-2.0) at the top of every source file.
#
#   licence-headers.sh --check   lists the files without it; exit 1 if there are any
#   licence-headers.sh --apply   adds it where it is missing (after a #! line, if any)
source "$(dirname "$0")/script_args.sh"
script_args_help "$@"
mode="${1:-}"
case "$mode" in
  --check | --apply) ;;
  *)
    echo "licence-headers.sh: expected --check or --apply (see licence-headers.sh --help)" >&2
    exit 2
    ;;
esac
if (($# > 1)); then
  echo "licence-headers.sh: unexpected argument '$2' (see licence-headers.sh --help)" >&2
  exit 2
fi
set -euo pipefail
cd "$(dirname "$0")/.."
id="SPDX-License-Identifier: Apache-2.0"

# The comment that carries the line, by the file's kind; nothing for files that are not source.
comment_for() {
  case "$1" in
    *.cpp | *.h | *.c | *.java | *.js | *.proto | *.h.in) echo "// $id" ;;
    *.css) echo "/* $id */" ;;
    *.html) echo "<!-- $id -->" ;;
    *.sh | *.py | *.cmake | */CMakeLists.txt | CMakeLists.txt | .ci/run) echo "# $id" ;;
    *) ;;
  esac
}

missing=0
while IFS= read -r -d '' file; do
  line=$(comment_for "$file")
  [ -n "$line" ] || continue
  head -n 5 "$file" | grep -qF "$id" && continue
  if [ "$mode" = --check ]; then
    echo "no SPDX licence line: $file"
    missing=$((missing + 1))
    continue
  fi
  tmp=$(mktemp)
  if head -n 1 "$file" | grep -q '^#!'; then
    { head -n 1 "$file"; echo "$line"; tail -n +2 "$file"; } >"$tmp"
  else
    { echo "$line"; cat "$file"; } >"$tmp"
  fi
  # A new file renamed over the old one (a script running now keeps reading its old copy), with
  # the old one's mode (scripts stay executable).
  chmod --reference="$file" "$tmp"
  mv "$tmp" "$file"
done < <(find .ci CMakeLists.txt bench cmake include java scripts src tests web \
  -type d \( -name node_modules -o -name __pycache__ \) -prune -o -type f -print0 | sort -z)

if [ "$mode" = --check ] && ((missing > 0)); then
  echo "licence-headers.sh: $missing source files lack the line '$id' (run scripts/licence-headers.sh --apply)" >&2
  exit 1
fi
