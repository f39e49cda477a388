#!/usr/bin/env bash
# The change feed under load: a client following GET /changes while FEED_RATE (1,000) jobs a
# second are created and changed sees every change once, in order, across a crash and
# restart of the server (sled) or a move to another replica (PostgreSQL); and how soon.
#
#   bash benches/load/feed.sh                      # sled: killed (-9) and restarted midway
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bash benches/load/feed.sh postgres
#
# Starts the bundled release server on a fresh store with demo data (with PostgreSQL: two
# replicas on a fresh schema; writes go to the first, the follower moves from the first to
# the second midway). benches/compare/src/bin/feed_follow.rs writes FEED_WRITES (20,000) jobs
# through PUT /admin/v1/jobs/{id} with 16 writers, half of them changes of earlier ones, and
# follows the feed; with sled, the server is killed with SIGKILL FEED_KILL_AFTER (8) seconds in
# and started again on the same folder and ports, and unacknowledged writes are sent again.
# Prints the lag from write to event read (p50, p99, max) and fails on any event lost,
# repeated or out of order. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-sled}"
writes="${FEED_WRITES:-20000}"
rate="${FEED_RATE:-1000}"
kill_after="${FEED_KILL_AFTER:-8}"
target="${CARGO_TARGET_DIR:-$root/target}"
source "$here/common.sh"
cd "$root"
cargo build --release --quiet -p job-listings-server -p job-listings-compare --bin job-listings \
  --bin feed_follow
bin="$target/release"

schema="jl_feed_$$"
serve_args=()
# shellcheck source=servers.sh
source "$here/servers.sh"

case "$mode" in
  sled)
    start one 127.0.0.1:0 127.0.0.1:0
    key="$(key_of one)"
    one_url="$url"; one_admin="$admin"; one_pid="$pid"
    echo "== sled: $writes writes at $rate/s through $admin, followed on $url; kill -9 after ${kill_after} s"
    "$bin/feed_follow" --url "$url" --admin-url "$admin" --admin-token-file "$token_file" \
      --key "$key" --writes "$writes" --rate "$rate" &
    follow=$!
    sleep "$kill_after"
    kill -KILL "$one_pid"
    wait "$one_pid" 2>/dev/null || true
    killed_at=$(date +%s.%N)
    cp "$work/one.out" "$work/one.first.out"
    start one "${one_url#http://}" "${one_admin#http://}"
    echo "restarted in $(echo "$(date +%s.%N) - $killed_at" | bc) s"
    wait "$follow"
    ;;
  postgres)
    : "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server}"
    start one 127.0.0.1:0 127.0.0.1:0 --database-url "$DATABASE_URL" --database-schema "$schema"
    key="$(key_of one)"
    one_url="$url"; write_admin="$admin"; write_token="$token_file"
    start two 127.0.0.1:0 127.0.0.1:0 --database-url "$DATABASE_URL" --database-schema "$schema"
    echo "== postgres: $writes writes at $rate/s through $write_admin, followed on $one_url then $url"
    "$bin/feed_follow" --url "$one_url" --switch-url "$url" --switch-after "$kill_after" \
      --admin-url "$write_admin" --admin-token-file "$write_token" --key "$key" \
      --writes "$writes" --rate "$rate"
    ;;
  *) echo "usage: $0 [sled|postgres]" >&2; exit 2 ;;
esac
