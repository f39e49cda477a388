#!/usr/bin/env bash
# One key floods the server; does another key notice?
#
#   bash benches/load/flood.sh            # 20 s per phase
#   FLOOD_SECONDS=60 bash benches/load/flood.sh
#
# Starts the bundled release server on a fresh folder on 127.0.0.1 with the per-key rate limits
# ON (the default: developer 10/s with bursts of 50), then measures the enterprise demo key at a
# constant 100 requests/s over the GET /jobs mix with the open-loop load tool (benches/compare/src/bin/load.rs):
#   1. alone (the unloaded p99);
#   2. while wrk floods the developer demo key with 32 connections as fast as it can.
# Prints both p99s and their ratio, and how many of the flooding key's requests were throttled
# (429 rate_limited). Needs wrk (Debian/Ubuntu: apt install wrk). Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${FLOOD_SECONDS:-20}"
port="${FLOOD_PORT:-18097}"
rate="${FLOOD_RATE:-100}"
base="http://127.0.0.1:$port"

command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }
cd "$root"
cargo build --release --quiet -p job-listings-server -p job-listings-compare --bin job-listings --bin load

data="$(mktemp -d)"
out="$data/server.out"
cleanup() {
  [[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

RUST_LOG=warn target/release/job-listings --data-dir "$data/db" serve --admin-addr 127.0.0.1:0 \
  --addr "127.0.0.1:$port" --enterprise-quota 100000000 --developer-quota 100000000 >"$out" &
server_pid=$!
for _ in $(seq 1 600); do
  grep -q '^Listening on' "$out" 2>/dev/null && break
  sleep 0.1
done
grep -q '^Listening on' "$out" || { echo "the server did not start" >&2; cat "$out" >&2; exit 1; }
flooder="$(awk '$1 == "developer" { print $2 }' "$out")"
victim="$(awk '$1 == "enterprise" { print $2 }' "$out")"

measure() {
  target/release/load --url "$base" --key "$victim" --rate "$rate" \
    --duration "${seconds}s" --connections 16 --mix jobs
}
p99_of() { awk '/^latency:/ { for (i = 1; i <= NF; i++) if ($i == "p99") print $(i + 1) }' "$1" | head -1; }

echo "== 1. enterprise key alone at $rate req/s for ${seconds}s"
measure | tee "$data/alone.txt"

echo "== 2. the same while wrk floods the developer key (-t1 -c32)"
JL_KEY="$flooder" wrk -t1 -c32 -d"$((seconds + 4))s" -s "$here/jobs_mix.lua" "$base" >"$data/flood.txt" &
wrk_pid=$!
sleep 2
measure | tee "$data/flooded.txt"
wait "$wrk_pid"
cat "$data/flood.txt"

alone="$(p99_of "$data/alone.txt")"
flooded="$(p99_of "$data/flooded.txt")"
total="$(awk '/requests in/ { print $1 }' "$data/flood.txt")"
throttled="$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$data/flood.txt")"
echo
echo "flooding key: ${total:-?} requests, ${throttled:-0} throttled (429)"
echo "other key p99: alone ${alone} ms, during the flood ${flooded} ms" \
  "(ratio $(awk -v a="${alone}" -v b="${flooded}" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "?" }'))"
