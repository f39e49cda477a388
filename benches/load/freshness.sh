#!/usr/bin/env bash
# Freshness: how soon a job written through the admin API is searchable, and announced to a
# webhook subscriber, on a running server.
#
#   bash benches/load/freshness.sh                     # sled: one server
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bash benches/load/freshness.sh postgres
#
# Starts the bundled release server on a fresh store with demo data, allowed to call loopback
# webhooks (with PostgreSQL: two replicas on a fresh schema; jobs are written on the first and
# searched on the second). Then benches/compare/src/bin/freshness.rs writes FRESH_JOBS (1,000)
# new jobs one at a time with PUT /admin/v1/jobs/{id} at FRESH_RATE (100) a second, while a
# poller searches for them and a receiver on 127.0.0.1 takes their job.new webhooks; it prints
# p50, p99 and max of both, and fails on a job never seen (within FRESH_WAIT, 30 s, after the
# last write) or delivered twice. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-sled}"
jobs="${FRESH_JOBS:-1000}"
rate="${FRESH_RATE:-100}"
wait_s="${FRESH_WAIT:-30}"
target="${CARGO_TARGET_DIR:-$root/target}"
source "$here/common.sh"
cd "$root"
cargo build --release --quiet -p job-listings-server -p job-listings-compare --bin job-listings \
  --bin freshness
bin="$target/release"

schema="jl_fresh_$$"
serve_args=(--allow-local-webhooks)
# shellcheck source=servers.sh
source "$here/servers.sh"

case "$mode" in
  sled)
    start one 127.0.0.1:0 127.0.0.1:0
    key="$(key_of one)"
    search_url="$url"
    ;;
  postgres)
    : "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server}"
    start one 127.0.0.1:0 127.0.0.1:0 --database-url "$DATABASE_URL" --database-schema "$schema"
    key="$(key_of one)"
    write_admin="$admin"; write_token="$token_file"
    start two 127.0.0.1:0 127.0.0.1:0 --database-url "$DATABASE_URL" --database-schema "$schema"
    search_url="$url"; admin="$write_admin"; token_file="$write_token"
    ;;
  *) echo "usage: $0 [sled|postgres]" >&2; exit 2 ;;
esac

echo "== $mode: $jobs jobs through $admin at $rate/s, searched on $search_url"
"$bin/freshness" --url "$search_url" --admin-url "$admin" --admin-token-file "$token_file" \
  --key "$key" --jobs "$jobs" --rate "$rate" --wait "$wait_s"
