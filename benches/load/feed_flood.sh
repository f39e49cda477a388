#!/usr/bin/env bash
# Does a developer key paging a change-feed filter that matches nothing slow another tenant's
# searches?
#
#   bash benches/load/feed_flood.sh
#   FLOOD_SECONDS=30 FLOOD_FILTER='company=zzzz' bash benches/load/feed_flood.sh
#   FLOOD_SERVER=/path/to/an/older/job-listings bash benches/load/feed_flood.sh
#
# Starts the bundled release server on a fresh folder with its demo data (6,000 jobs, so as
# many change-feed events) on 127.0.0.1, then runs wrk twice for FLOOD_SECONDS (20) each:
#   1. alone: the enterprise key's GET /api/v1/jobs mix (jobs_mix.lua) on 2 connections;
#   2. the same, while the developer key asks GET /api/v1/changes?$FLOOD_FILTER&limit=500
#      from the oldest event (the most a page reads) on 4 connections at its plan's rate
#      limit, 10 a second (FLOOD_DELAY_MS 400 on each) (feed_pages.lua).
# The server runs with --no-rate-limits so that every search is answered (not a 429); the
# developer key keeps to its plan's rate by pacing.
# Prints the enterprise searches' p50 and p99 in both runs and their ratio, and the feed
# pages answered and refused a second. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${FLOOD_SECONDS:-20}"
filter="${FLOOD_FILTER:-q=zzzznomatch}"
pause="${FLOOD_DELAY_MS:-400}"
target="${CARGO_TARGET_DIR:-$root/target}"
# shellcheck source=common.sh
source "$here/common.sh"
require wrk
cd "$root"
cargo build --release --quiet -p job-listings-server --bin job-listings
server_bin="${FLOOD_SERVER:-$target/release/job-listings}"

out="$work/server.out"
"$server_bin" --data-dir "$work/data" serve --addr 127.0.0.1:0 \
  --admin-addr 127.0.0.1:0 --enterprise-quota 100000000 --developer-quota 100000000 \
  --no-rate-limits \
  >"$out" 2>"$out.err" &
pid=$!
wait_listening "$out" "the server"
base="$(sed -n 's/^Listening on \(http:[^ ]*\)$/\1/p' "$out")"
enterprise="$(awk '$1 == "enterprise" { print $2 }' "$out")"
developer="$(awk '$1 == "developer" { print $2 }' "$out")"

# The p50 and p99 wrk prints with --latency, in milliseconds.
percentiles() {
  awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    $1 == "50%" { p50 = ms($2) } $1 == "99%" { p99 = ms($2) }
    END { printf "%.2f %.2f\n", p50, p99 }' "$1"
}

search() {
  JL_KEY="$enterprise" wrk -t1 -c2 -d"${seconds}s" --latency -s "$here/jobs_mix.lua" "$base" >"$work/$1"
}

echo "== searches alone, ${seconds}s"
search alone
read -r alone_p50 alone_p99 < <(percentiles "$work/alone")

echo "== searches while the developer key pages /changes?$filter on 4 connections"
JL_KEY="$developer" JL_FEED_FILTER="$filter" JL_FEED_DELAY_MS="$pause" wrk -t1 -c4 -d"$((seconds + 2))s" \
  -s "$here/feed_pages.lua" "$base" >"$work/feed" &
flood=$!
sleep 1
search flooded
wait "$flood"
read -r flooded_p50 flooded_p99 < <(percentiles "$work/flooded")

echo
echo "enterprise GET /jobs alone:      p50 ${alone_p50} ms, p99 ${alone_p99} ms ($(rps "$work/alone") req/s; $(grep '^non-200' "$work/alone"))"
echo "enterprise GET /jobs with flood: p50 ${flooded_p50} ms, p99 ${flooded_p99} ms ($(rps "$work/flooded") req/s; $(grep '^non-200' "$work/flooded"))"
awk -v a="$alone_p99" -v b="$flooded_p99" 'BEGIN { printf "p99 ratio: %.2f\n", b / a }'
grep '^feed page' "$work/feed"
