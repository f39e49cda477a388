#!/usr/bin/env bash
# Can waves of silent keyless connections wedge the listener or make its count drift?
#
#   bash benches/load/silent_waves.sh
#   WAVES=3 WAVE_CONNECTIONS=2000 bash benches/load/silent_waves.sh
#   WAVES_SERVER=/path/to/an/older/job-listings bash benches/load/silent_waves.sh
#
# Starts the bundled release server with its default limits (10,000 connections) on a fresh
# folder on 127.0.0.1, then runs silent_waves.py: $WAVES (10) waves of $WAVE_CONNECTIONS
# (10,100) connections that send nothing, from 11 loopback addresses, each followed by a
# keyed GET on a new connection and a read of the admin /metrics until the server counts no
# connection. Fails if a keyed client is not served or the count does not come back to 0.
# Raises `ulimit -n` to the hard limit. Linux, loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
# shellcheck source=common.sh
source "$here/common.sh"
require python3
cd "$root"
cargo build --release --quiet -p job-listings-server --bin job-listings
ulimit -n "$(ulimit -Hn)"

out="$work/server.out"
RUST_LOG=warn "${WAVES_SERVER:-$target/release/job-listings}" --data-dir "$work/data" serve --addr 127.0.0.1:0 \
  --admin-addr 127.0.0.1:0 >"$out" 2>"$out.err" &
pid=$!
wait_listening "$out" "the server"
base="$(sed -n 's/^Listening on \(http:[^ ]*\)$/\1/p' "$out")"
admin="$(sed -n 's|^Admin API: *\(http:[^ ]*\)/admin/v1.*|\1|p' "$out")"
token="$(awk '/^Admin token/ { getline; print $1; exit }' "$out")"
key="$(awk '$1 == "enterprise" { print $2 }' "$out")"
python3 "$here/silent_waves.py" --base "$base" --key "$key" --admin "$admin" \
  --admin-token "$token" --waves "${WAVES:-10}" --connections "${WAVE_CONNECTIONS:-10100}"
