# Shared by the load scripts (sourced, not run): a check for the tools a script needs, a
# scratch folder removed on exit, the server process in $pid stopped on exit, and reading wrk's
# output.

# Exits unless every command named is installed.
require() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
  done
}

work="$(mktemp -d)"
pid=""
stop() {
  if [[ -n "$pid" ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
cleanup() { stop; rm -rf "$work"; }
trap cleanup EXIT

# Requests per second from one wrk output FILE.
rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
