#!/usr/bin/env bash
# Can idle or barely active connections, without a key, lock new clients out?
#
#   bash benches/load/hostile_connections.sh                    # both modes, 45 s each
#   HOSTILE_SECONDS=20 HOSTILE_CONNECTIONS=2000 bash benches/load/hostile_connections.sh
#   HOSTILE_SERVER=/path/to/an/older/job-listings bash benches/load/hostile_connections.sh
#
# For each mode, starts the bundled release server (or $HOSTILE_SERVER, a build of another
# commit, which needs only the options below) on a fresh folder on 127.0.0.1 with its
# default limits, and runs the hostile_connections tool
# (benches/compare/src/bin/hostile_connections.rs) against it: $HOSTILE_CONNECTIONS (10,050,
# over the default 10,000 connection slots) connections from $HOSTILE_SOURCES (16) loopback
# addresses 127.0.0.2 onwards, held for $HOSTILE_SECONDS, either
#   h2-idle     HTTP/2 preface and SETTINGS, then only acknowledgements of SETTINGS and PINGs;
#   h1-options  HTTP/1.1 keep-alive, an OPTIONS without a key every 8 s;
# while a normal client on 127.0.0.1 opens a new connection for one authenticated GET every
# 100 ms. Prints, per mode, the normal client's new connection + GET p50/p99/max and
# failures (a failure: no answer within 5 s), how many hostile connections the server
# closed, and the server's RSS before and at most during the hold.
#
# Raises `ulimit -n` to the hard limit (the server and the tool each need a descriptor per
# connection). Every wait is bounded; the server is stopped on exit. Loopback only, Linux
# (it binds source addresses in 127.0.0.0/8).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${HOSTILE_SECONDS:-45}"
connections="${HOSTILE_CONNECTIONS:-10050}"
sources="${HOSTILE_SOURCES:-16}"
port="${HOSTILE_PORT:-18098}"
modes="${HOSTILE_MODES:-h2-idle h1-options}"

# shellcheck source=common.sh
source "$here/common.sh"
cd "$root"
cargo build --release --quiet -p job-listings-server -p job-listings-compare \
  --bin job-listings --bin hostile_connections
target="${CARGO_TARGET_DIR:-target}"
server_bin="${HOSTILE_SERVER:-$target/release/job-listings}"
tool="$target/release/hostile_connections"

ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < connections + 1000 )); then
  echo "ulimit -n is $(ulimit -n): too few descriptors for $connections connections" >&2
  exit 1
fi

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

summary=()
for mode in $modes; do
  echo "== $mode: $connections connections from $sources addresses for ${seconds}s"
  out="$work/$mode.out"
  RUST_LOG=warn "$server_bin" --data-dir "$work/$mode" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
    --enterprise-quota 100000000 >"$out" 2>"$out.err" &
  pid=$!
  wait_listening "$out" "the server"
  key="$(awk '$1 == "enterprise" { print $2 }' "$out")"
  before="$(rss_kib "$pid")"

  # The server's RSS every half second while the tool runs; the largest is kept.
  echo "$before" >"$work/rss"
  ( while kill -0 "$pid" 2>/dev/null; do rss_kib "$pid" >>"$work/rss"; sleep 0.5; done ) &
  sampler=$!
  # Opening takes seconds, the hold $seconds, the last probes 5 s more: 120 s to spare.
  JL_KEY="$key" timeout "$((seconds + 120))" "$tool" --addr "127.0.0.1:$port" --mode "$mode" \
    --connections "$connections" --sources "$sources" --hold "${seconds}s" | tee "$work/$mode.txt"
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  peak="$(sort -n "$work/rss" | tail -n 1)"
  stop

  normal="$(sed -n 's/^normal: *//p' "$work/$mode.txt")"
  held="$(sed -n 's/^held: *//p' "$work/$mode.txt")"
  rss="RSS $((before / 1024)) MiB before, at most $((peak / 1024)) MiB during the hold"
  echo "server: $rss"
  summary+=("$mode: $normal" "    $held" "    $rss")
done

echo
echo "== summary ($connections hostile connections, ${seconds}s, server $server_bin)"
printf '%s\n' "${summary[@]}"
