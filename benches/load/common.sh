# Shared by the load scripts (sourced, not run): a check for the tools a script needs, a
# scratch folder removed on exit, the server process in $pid awaited at start and stopped on
# exit, and reading wrk's output.

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

# wait_listening FILE WHAT: waits (up to 2 min) for the process in $pid to print `Listening on`
# into FILE; exits with FILE and FILE.err shown if it stops or never does.
wait_listening() {
  for _ in $(seq 1 1200); do
    grep -q '^Listening on' "$1" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$2 did not start" >&2
  cat "$1" "$1.err" >&2 2>/dev/null || true
  exit 1
}

# Requests per second from one wrk output FILE.
rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
