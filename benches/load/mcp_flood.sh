#!/usr/bin/env bash
# One developer key floods REST, then MCP `tools/list`, then MCP `ping`: each is held to the
# key's rate limit the same way (429 rate_limited beyond it), and only REST's answered calls
# are metered.
#
#   bash benches/load/mcp_flood.sh                    # 5 s per flood
#   MCP_FLOOD_SECONDS=10 bash benches/load/mcp_flood.sh
#
# 1. Builds the bundled release server (CARGO_TARGET_DIR is honoured) and starts it on a fresh
#    folder with the demo data and the default rate limits (developer: 10/s, bursts of 50), the
#    developer quota out of reach.
# 2. Opens one MCP session for the developer demo key (benches/load/mcp_sessions.py).
# 3. Three floods by that key, wrk -t1 -c8 for MCP_FLOOD_SECONDS each, 6 s apart so its bucket
#    is full again at each start (mcp_flood.lua): REST GET /api/v1/jobs?per_page=1, then
#    tools/list and ping POSTed to /mcp in the session. Prints the answers of each by status
#    and how many a bucket of 50 refilled at 10/s lets through in that time, then the key's
#    metered calls after each flood.
#
# Exits 1 on socket errors or answers other than 200 and 429. Needs wrk, curl and python3.
# Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${MCP_FLOOD_SECONDS:-5}"
port="${MCP_FLOOD_PORT:-18152}"
base="http://127.0.0.1:$port"

# shellcheck source=common.sh
source "$here/common.sh"
require wrk curl python3
cd "$root"
cargo build --release --quiet -p job-listings-server
server_bin="${CARGO_TARGET_DIR:-target}/release/job-listings"

out="$work/server.out"
RUST_LOG=warn "$server_bin" --data-dir "$work/db" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
  --developer-quota 1000000000 --access-log off >"$out" 2>"$out.err" &
pid=$!
wait_listening "$out" "the server"
key=$(awk '$1 == "developer" && $2 ~ /^jl_live_/ { print $2; exit }' "$out")
[[ -n "$key" ]] || { echo "no developer key printed" >&2; exit 1; }
session=$(python3 "$here/mcp_sessions.py" "$base" "$key" 1)

calls_used() {
  curl -sf -H "X-API-Key: $key" "$base/api/v1/usage" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["calls_used"])'
}

echo "developer key: 10 requests/s, bursts of 50: at most $((50 + 10 * seconds)) answered in ${seconds} s"
for kind in rest tools/list ping; do
  sleep 6
  JL_FLOOD="$kind" JL_KEY="$key" JL_SESSION="$session" \
    wrk -t1 -c8 -d"${seconds}s" -s "$here/mcp_flood.lua" "$base" >"$work/flood"
  counts=$(grep '^200: ' "$work/flood")
  sent=$(awk '/requests in/ { print $1 }' "$work/flood")
  sleep 6
  printf '%-10s %7s requests in %s s: %s; metered calls so far: %s\n' \
    "$kind" "$sent" "$seconds" "$counts" "$(calls_used)"
  if ! grep -q 'other: 0, socket errors: 0$' <<<"$counts"; then
    cat "$work/flood" >&2
    exit 1
  fi
done
