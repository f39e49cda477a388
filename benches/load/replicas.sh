#!/usr/bin/env bash
# Throughput of one replica against two, on one PostgreSQL database.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bash benches/load/replicas.sh
#
# Starts the bundled release server on a fresh schema (it loads the demo data and prints the
# keys), measures it alone with wrk, then starts a second replica on the same schema and drives
# both at once (half the connections each). Every request is authenticated and counted in the
# database, as in production. Needs wrk. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server}"
seconds="${REPLICAS_SECONDS:-10}"
schema="jl_bench_$$"
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }
cd "$root"
cargo build --release --quiet -p job-listings-server

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$DATABASE_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

start() { # start NAME PORT [extra args]
  local name="$1" port="$2"; shift 2
  RUST_LOG=warn target/release/job-listings --data-dir "$work/keys" \
    --database-url "$DATABASE_URL" --database-schema "$schema" serve --admin-addr 127.0.0.1:0 \
    --addr "127.0.0.1:$port" --no-rate-limits --enterprise-quota 100000000 "$@" >"$work/$name.out" &
  pids+=($!)
  for _ in $(seq 1 600); do grep -q '^Listening on' "$work/$name.out" 2>/dev/null && return; sleep 0.1; done
  echo "replica $name did not start" >&2; exit 1
}
rps() { awk '/Requests\/sec/ { print $2 }' "$1"; }

start one 18121
key="$(awk '$1 == "enterprise" { print $2 }' "$work/one.out")"
ids="$(curl -s -H "X-API-Key: $key" "http://127.0.0.1:18121/api/v1/jobs?per_page=50" |
  python3 -c 'import sys, json; print(",".join(j["id"] for j in json.load(sys.stdin)["data"]))')"

for mix in jobs_mix job_detail; do
  JL_KEY="$key" JL_IDS="$ids" wrk -t1 -c32 -d"${seconds}s" --latency -s "$here/$mix.lua" \
    http://127.0.0.1:18121 >"$work/$mix.one.txt"
  echo "$mix, one replica:  $(rps "$work/$mix.one.txt") req/s"
done

start two 18122 --no-demo
for mix in jobs_mix job_detail; do
  JL_KEY="$key" JL_IDS="$ids" wrk -t1 -c16 -d"${seconds}s" --latency -s "$here/$mix.lua" \
    http://127.0.0.1:18121 >"$work/$mix.a.txt" &
  JL_KEY="$key" JL_IDS="$ids" wrk -t1 -c16 -d"${seconds}s" --latency -s "$here/$mix.lua" \
    http://127.0.0.1:18122 >"$work/$mix.b.txt"
  wait %%
  a="$(rps "$work/$mix.a.txt")"; b="$(rps "$work/$mix.b.txt")"
  echo "$mix, two replicas: $a + $b = $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", a + b }') req/s"
done
grep -h "Non-2xx" "$work"/*.txt || echo "0 non-2xx answers"
