#!/usr/bin/env bash
# A full disk under the running server: do writes fail cleanly, reads go on, and does the
# health endpoint tell an orchestrator to take the server out and restart it?
#
#   sudo bash benches/load/full_disk.sh      # needs root to mount a small tmpfs
#
# Starts the bundled release server with its data folder on a fresh 64 MiB tmpfs on
# 127.0.0.1 and --write-failure-grace 5, then:
#   1. checks GET /readyz and GET /livez (200);
#   2. fills the tmpfs, changes a webhook (a durable write) until one is refused (sled writes
#      into space it had allocated first), and searches (a read: expect 200);
#   3. checks /readyz (503, saying why) and /livez (200 within the grace);
#   4. frees the space, waits past the grace, checks both again (sled keeps the write error
#      until the process restarts, so /readyz stays 503 and /livez turns 503);
#   5. stops the server, starts it again on the same folder: /readyz 200, the jobs all
#      there, and the last acknowledged change stored (nothing acknowledged is lost);
#   6. counts the server's ERROR log lines while the disk was full (backoff, not one per 100 ms).
# Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
port="${FULL_DISK_PORT:-18099}"
base="http://127.0.0.1:$port"
[[ "$(id -u)" == 0 ]] || { echo "needs root to mount a tmpfs" >&2; exit 1; }
cd "$root"
cargo build --release --quiet -p job-listings-server --bin job-listings

mnt="$(mktemp -d)"
mount -t tmpfs -o size=48m tmpfs "$mnt"
out="$(mktemp)"
cleanup() {
  [[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  umount "$mnt" 2>/dev/null || true
  rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT

start() {
  : >"$out"
  RUST_LOG=info target/release/job-listings --data-dir "$mnt/db" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
    --write-failure-grace 5 --no-rate-limits >"$out" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do grep -q '^Listening on' "$out" 2>/dev/null && break; sleep 0.1; done
  grep -q '^Listening on' "$out" || { echo "the server did not start" >&2; cat "$out" >&2; exit 1; }
}
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
show() { printf '%-44s %s\n' "$1" "$2"; }

start
key="$(awk '$1 == "agent_pro" { print $2 }' "$out")"
search() { code -H "X-API-Key: $key" "$base/api/v1/jobs?q=engineer"; }
total_before="$(curl -s -H "X-API-Key: $key" "$base/api/v1/jobs?per_page=1" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')"
show "1. /readyz, /livez" "$(code "$base/readyz") $(code "$base/livez")"

dd if=/dev/zero of="$mnt/fill" bs=1M status=none 2>/dev/null || true
errors_before="$(grep -c ERROR "$out" || true)"
hook="$(curl -s -X POST -H "X-API-Key: $key" -H 'content-type: application/json' \
  -d '{"callback_url": "https://hooks.example.com/full-disk"}' "$base/api/v1/webhooks" \
  | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -1)"
patch() {
  code -X PATCH -H "X-API-Key: $key" -H 'content-type: application/json' \
    -d "{\"q\": \"full disk write $1 $(printf 'x%.0s' $(seq 1 400))\"}" "$base/api/v1/webhooks/$hook"
}
# sled still has room in the segments it allocated: write until it runs out (or 3,000 times).
dd if=/dev/zero of="$mnt/fill" bs=1M status=none 2>/dev/null || true
errors_before="$(grep -c ERROR "$out" || true)"
last_acked=0; first_refused=""
for n in $(seq 1 3000); do
  answer="$(patch "$n")"
  if [[ "$answer" == 200 ]]; then last_acked=$n; else first_refused="$n ($answer)"; break; fi
done
show "2. webhook changes until refused, then search" "last acknowledged #$last_acked, refused #${first_refused:-none}; search $(search)"
sleep 1.2
show "3. /readyz, /livez (disk full)" "$(code "$base/readyz") $(code "$base/livez")"
curl -s "$base/readyz"; echo

rm -f "$mnt/fill"
sleep 6
show "4. /readyz, /livez (space freed, grace over)" "$(code "$base/readyz") $(code "$base/livez")"
answer="$(patch freed)"; [[ "$answer" == 200 ]] && last_acked=freed
show "   a webhook change after freeing space" "$answer"
errors_after="$(grep -c ERROR "$out" || true)"

cp "$out" "$out.first"; kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
start
total_after="$(curl -s -H "X-API-Key: $key" "$base/api/v1/jobs?per_page=1" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')"
show "5. restarted: /readyz, /livez" "$(code "$base/readyz") $(code "$base/livez")"
show "   jobs before the disk filled / after restart" "$total_before / $total_after"
stored="$(curl -s -H "X-API-Key: $key" "$base/api/v1/webhooks/$hook" | sed -n 's/.*"q":"full disk write \([0-9a-z]*\) .*/\1/p')"
show "   last acknowledged change / stored after restart" "#$last_acked / #${stored:-?}"
show "   a webhook change after the restart" "$(patch restarted)"
show "6. ERROR log lines while the disk was full" "$((errors_after - errors_before)) in about 8 s"
echo "the server's errors while the disk was full (first three):"
grep ERROR "$out.first" | head -3 | cut -c1-300 || true
