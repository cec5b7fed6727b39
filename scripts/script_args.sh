# SPDX-License-Identifier: Apache-2.0
# Sourced by the project's scripts: `--help` prints the script's header comment (the lines after
# the #! line up to the first line that is not a comment, less the SPDX licence line); any other
# argument the script does not take is rejected with one error line and exit status 2.
#
#   source scripts/script_args.sh; script_args "$@"            (a script that takes no argument)
#   script_args_help "$@" (prints the help and exits on -h/--help; leaves the rest to the script)
script_args_usage() {
  awk 'NR == 1 || /SPDX-License-Identifier/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

script_args_help() {
  case "${1:-}" in
    -h | --help)
      script_args_usage
      exit 0
      ;;
  esac
}

script_args() {
  script_args_help "$@"
  if (($# > 0)); then
    echo "$(basename "$0"): unexpected argument '$1' (see $(basename "$0") --help)" >&2
    exit 2
  fi
}
