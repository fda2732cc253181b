# shellcheck shell=bash
# Checks shared by the tools/ tests (sourced): a scratch folder removed on exit, and
# expect / reject / expect_exit, each counting its failures in $failures (0 at the start).
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
expect() {  # expect DESCRIPTION PATTERN TEXT: TEXT has a line matching the ERE PATTERN
  if ! grep -Eq -- "$2" <<<"$3"; then
    echo "FAIL: $1: no line matches '$2' in:"
    echo "$3"
    failures=$((failures + 1))
  fi
}
reject() {  # reject DESCRIPTION PATTERN TEXT: no line of TEXT matches the ERE PATTERN
  if grep -Eq -- "$2" <<<"$3"; then
    echo "FAIL: $1: a line matches '$2' in:"
    echo "$3"
    failures=$((failures + 1))
  fi
}
expect_exit() {  # expect_exit DESCRIPTION CODE COMMAND...: COMMAND exits with CODE
  local description=$1 code=$2 rc
  shift 2
  "$@" >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    echo "FAIL: $description exits $rc, not $code"
    failures=$((failures + 1))
  fi
}
