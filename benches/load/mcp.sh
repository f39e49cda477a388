#!/usr/bin/env bash
# search_jobs over MCP against GET /jobs over REST, same searches, same server, one run; and
# the memory an idle MCP session costs.
#
#   bash benches/load/mcp.sh                 # 10 s per run
#   MCP_SECONDS=5 bash benches/load/mcp.sh
#
# Goal: MCP's p50 at most 1.5x REST's.
#
# 1. Builds the bundled release server (CARGO_TARGET_DIR is honoured) and starts it on a fresh
#    folder with the demo data, rate limits off, quotas out of reach and room for 2,000 MCP
#    sessions for the enterprise key.
# 2. Opens 32 MCP sessions (benches/load/mcp_sessions.py), one per wrk connection.
# 3. Three rounds, each after a 2 s warm-up of both: wrk -t1 -c32 --latency drives the GET /jobs
#    mix (jobs_mix.lua), then the same ten searches as search_jobs tool calls POSTed to /mcp
#    (mcp_search.lua, spread over the 32 sessions). Prints req/s, p50 and p99 of each run and
#    the medians, and MCP's p50 over REST's against the goal.
# 4. Reads the server's RSS, opens 1,000 more sessions and leaves them idle, reads it again:
#    prints the RSS with 1,000 open sessions and the difference per session.
#
# Exits 1 on any non-200 answer or socket error. Needs wrk, curl and python3. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${MCP_SECONDS:-10}"
port="${MCP_PORT:-18151}"
base="http://127.0.0.1:$port"

# shellcheck source=common.sh
source "$here/common.sh"
require wrk curl python3
cd "$root"
cargo build --release --quiet -p job-listings-server
server_bin="${CARGO_TARGET_DIR:-target}/release/job-listings"

out="$work/server.out"
RUST_LOG=warn "$server_bin" --data-dir "$work/db" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
  --no-rate-limits --enterprise-quota 1000000000 --mcp-sessions-per-key 2000 \
  --access-log off >"$out" 2>"$out.err" &
pid=$!
wait_listening "$out" "the server"
key=$(awk '$1 == "enterprise" && $2 ~ /^jl_live_/ { print $2; exit }' "$out")
[[ -n "$key" ]] || { echo "no enterprise key printed" >&2; exit 1; }

sessions=$(python3 "$here/mcp_sessions.py" "$base" "$key" 32 | paste -sd, -)

# run NAME SCRIPT SECONDS: one wrk run; its output in $work/NAME.
run() {
  JL_KEY="$key" JL_SESSIONS="$sessions" wrk -t1 -c32 -d"$3s" --latency -s "$here/$2" "$base" >"$work/$1"
  if ! grep -q '^non-200 answers: 0, socket errors: 0$' "$work/$1"; then
    echo "$1: unexpected answers" >&2
    cat "$work/$1" >&2
    exit 1
  fi
}
# p50 and p99 in ms from one wrk --latency output.
percentile() {
  awk -v p="$2" '$1 == p {
    v = $2; unit = v; gsub(/[0-9.]/, "", unit); sub(/[a-z]+$/, "", v)
    if (unit == "us") v /= 1000; else if (unit == "s") v *= 1000
    printf "%.3f\n", v }' "$1"
}

for round in 1 2 3; do
  run warm-rest jobs_mix.lua 2
  run warm-mcp mcp_search.lua 2
  run "rest.$round" jobs_mix.lua "$seconds"
  run "mcp.$round" mcp_search.lua "$seconds"
  printf 'round %d: REST %8.0f req/s p50 %6.3f ms p99 %6.3f ms | MCP %8.0f req/s p50 %6.3f ms p99 %6.3f ms\n' \
    "$round" "$(rps "$work/rest.$round")" "$(percentile "$work/rest.$round" 50%)" "$(percentile "$work/rest.$round" 99%)" \
    "$(rps "$work/mcp.$round")" "$(percentile "$work/mcp.$round" 50%)" "$(percentile "$work/mcp.$round" 99%)"
done
for kind in rest mcp; do
  r=$(for n in 1 2 3; do rps "$work/$kind.$n"; done | median)
  p50=$(for n in 1 2 3; do percentile "$work/$kind.$n" 50%; done | median)
  p99=$(for n in 1 2 3; do percentile "$work/$kind.$n" 99%; done | median)
  printf 'median %-4s %8.0f req/s  p50 %6.3f ms  p99 %6.3f ms\n' "$kind" "$r" "$p50" "$p99"
  eval "${kind}_p50=$p50"
done
python3 -c "import sys; r = float(sys.argv[2]) / float(sys.argv[1]); print(f'MCP p50 / REST p50 = {r:.2f} (goal <= 1.5): ' + ('met' if r <= 1.5 else 'NOT met'))" "$rest_p50" "$mcp_p50"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
before=$(rss_kib)
python3 "$here/mcp_sessions.py" "$base" "$key" 1000 >/dev/null
sleep 1
after=$(rss_kib)
printf 'RSS before %d MiB, with 1,000 more idle sessions %d MiB: %.1f KiB a session\n' \
  $((before / 1024)) $((after / 1024)) "$(python3 -c "print(($after - $before) / 1000)")"
