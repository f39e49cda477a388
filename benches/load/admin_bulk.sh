#!/usr/bin/env bash
# Bulk import through a running server's admin API, against the offline import, and what it
# does to reads meanwhile.
#
#   bash benches/load/admin_bulk.sh                       # 1,000,000 jobs
#   ADMIN_BULK_JOBS=100000 bash benches/load/admin_bulk.sh
#
# Goals: through the admin API, at least 80 % of the offline import's jobs/s; read p99 during
# the import under 2x the p99 alone.
#
#   1. generates ADMIN_BULK_JOBS jobs (and their companies) as JSON Lines with the comparison
#      crate's generator (`--write-jsonl`);
#   2. offline: `job-listings import` into a fresh sled folder with no server, timed (wall
#      clock, checking every line included);
#   3. online: a server on another fresh folder with the demo data (6,000 jobs), the open-loop
#      load tool (benches/compare/src/bin/load.rs) reading the GET /jobs mix at
#      ADMIN_BULK_READ_RATE (500) a second for ADMIN_BULK_SECONDS (20) alone; then the same
#      reads again while `job-listings import` runs on the same folder, which finds the server
#      and streams both files through POST /admin/v1/companies/bulk and /jobs/bulk, timed on
#      its own (give ADMIN_BULK_SECONDS about the import's time, so the reads span it).
# Prints both import rates and their ratio, and read p50/p99 alone and during. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jobs="${ADMIN_BULK_JOBS:-1000000}"
read_rate="${ADMIN_BULK_READ_RATE:-500}"
seconds="${ADMIN_BULK_SECONDS:-20}"
target="${CARGO_TARGET_DIR:-$root/target}"
source "$here/common.sh"
cd "$root"
cargo build --release --quiet -p job-listings-server -p job-listings-compare --bin job-listings \
  --bin load --bin job-listings-compare
bin="$target/release"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
rate_of() { awk -v n="$1" -v ms="$2" 'BEGIN { printf "%.0f", n / (ms / 1000) }'; }

echo "== 1. $jobs jobs as JSON Lines"
"$bin/job-listings-compare" --jobs "$jobs" --seed 42 --write-jsonl "$work/jsonl" >/dev/null
files=(--companies "$work/jsonl/companies.jsonl" --jobs "$work/jsonl/jobs.jsonl")

echo "== 2. offline import into a fresh folder"
t0="$(now_ms)"
"$bin/job-listings" --data-dir "$work/offline" import "${files[@]}" | tee "$work/offline.out"
offline_ms=$(($(now_ms) - t0))
rm -rf "$work/offline"

echo "== 3. a running server: reads alone, then reads while the import goes through it"
RUST_LOG=warn "$bin/job-listings" --data-dir "$work/online" serve --addr 127.0.0.1:0 \
  --admin-addr 127.0.0.1:0 --no-rate-limits --enterprise-quota 1000000000 \
  >"$work/server.out" 2>"$work/server.out.err" &
pid=$!
wait_listening "$work/server.out" "the server"
url="$(sed -n 's/^Listening on \(http:[^ ]*\)$/\1/p' "$work/server.out")"
key="$(awk '$1 == "enterprise" && $2 ~ /^jl_live_/ { print $2; exit }' "$work/server.out")"
reads() { # reads NAME: the GET /jobs mix at the read rate for the phase's seconds
  "$bin/load" --url "$url" --key "$key" --rate "$read_rate" --duration "${seconds}s" \
    --connections 16 --mix jobs >"$work/$1.load" 2>&1 || { cat "$work/$1.load" >&2; exit 1; }
}
reads alone
t0="$(now_ms)"
( status=0
  "$bin/job-listings" --data-dir "$work/online" import "${files[@]}" >"$work/online.out" 2>&1 ||
    status=$?
  now_ms >"$work/online.end"
  exit "$status" ) &
import_pid=$!
reads during
wait "$import_pid" || { cat "$work/online.out" >&2; exit 1; }
online_ms=$(($(cat "$work/online.end") - t0))
cat "$work/online.out"

offline_rate="$(rate_of "$jobs" "$offline_ms")"
online_rate="$(rate_of "$jobs" "$online_ms")"
echo
echo "== summary ($jobs jobs)"
echo "offline import:          $(awk -v ms="$offline_ms" 'BEGIN { printf "%.1f", ms / 1000 }') s, $offline_rate jobs/s"
echo "through the admin API:   $(awk -v ms="$online_ms" 'BEGIN { printf "%.1f", ms / 1000 }') s, $online_rate jobs/s ($(awk -v a="$online_rate" -v b="$offline_rate" 'BEGIN { printf "%.0f", 100 * a / b }') % of offline; goal >= 80 %)"
echo "reads alone:  $(grep '^latency:' "$work/alone.load")"
echo "reads during: $(grep '^latency:' "$work/during.load")"
