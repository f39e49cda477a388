#!/usr/bin/env bash
# Bulk import, start-up and memory at N jobs.
#
#   bash benches/load/bulk.sh                     # 1,000,000 jobs
#   BULK_JOBS=100000 bash benches/load/bulk.sh
#   BULK_JOBS=5000000 BULK_CACHE_MB=1024 bash benches/load/bulk.sh
#
# Goals: the index loaded for 1M jobs in <= 5 s; JSON Lines import >= 100k jobs/s
# with durability at the end; RSS at 1M (and 5M) jobs.
#
#   1. generates BULK_JOBS active jobs (and every company they name) as JSON Lines with the
#      comparison crate's deterministic generator (benches/compare, `--write-jsonl`);
#   2. issues a key on the fresh, empty folder (`keys create`), then runs
#      `server --data-dir D import --companies ... --jobs ...` on it and times it (wall clock,
#      including reading and checking every line; also the rate the command prints itself,
#      which counts only the writing). The import is durable when it returns: it writes
#      companies 1,000 per flushed transaction, then reads the jobs file again in id order,
#      4,096 jobs at a time, into JobListingsService::import_sorted_jobs (512 jobs per store
#      transaction, no flush per batch, one flush (fsync) at the end before it returns). The
#      index is built on the side, compacted once at the end and saved beside sled's files
#      (the `search-index` snapshot) on the way out;
#   3. starts `server --data-dir D serve --admin-addr 127.0.0.1:0 --no-demo` and times it until it prints its
#      `Listening on` line: opening sled, loading companies and keys and loading the index
#      snapshot; checks with one GET /jobs that every job is searchable; stops it (SIGTERM);
#   4. deletes the snapshot and does the same again: the index rebuilt from every stored job,
#      as after a crash (jobs written after the last snapshot make it out of date);
#   5. reads the serving processes' VmRSS and VmHWM from /proc/PID/status and measures the
#      sled folder and the snapshot;
#   6. the floor: sled alone writing the same jobs file's lines, as they are, into a fresh
#      folder in id order and 512-row transactions, one flush, then reading them back in key
#      order (benches/compare `--bin sled_floor`). No import can be faster than that write,
#      nor a rebuild than that read.
# sled's page cache is bounded by --cache-mb (BULK_CACHE_MB, default 256, the server's
# default); the figure used is printed. Loopback only.
#
# Environment: BULK_JOBS (1000000), BULK_POSTS (`short`, about 80 words a post; `long`, 80 to
# 300, about 190, whose JSON Lines take about 2 KB a job), BULK_CACHE_MB (256), BULK_PORT
# (18099), BULK_SEED (42),
# BULK_DIR (a work folder to use instead of a new temporary one; it is emptied first),
# BULK_KEEP=1 (keep the work folder). Needs about 1.1 KB of disk per job for the JSON Lines and
# about 3 KB per job for the sled folder (and as much again for the floor's folder while it
# runs), and memory for the import: about 1.2 GiB at 1M jobs (the floor: about 2 GiB).
# Builds with cargo into CARGO_TARGET_DIR when set (else ./target).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jobs="${BULK_JOBS:-1000000}"
cache_mb="${BULK_CACHE_MB:-256}"
port="${BULK_PORT:-18099}"
seed="${BULK_SEED:-42}"
base="http://127.0.0.1:$port"

cd "$root"
cargo build --release --quiet -p job-listings-server
cargo build --release --quiet -p job-listings-compare --bin job-listings-compare
cargo build --release --quiet -p job-listings-compare --bin sled_floor
server="${CARGO_TARGET_DIR:-$root/target}/release/job-listings"
compare="${CARGO_TARGET_DIR:-$root/target}/release/job-listings-compare"
floor="${CARGO_TARGET_DIR:-$root/target}/release/sled_floor"

if [[ -n "${BULK_DIR:-}" ]]; then
  work="$BULK_DIR"
  rm -rf "$work"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
fi
cleanup() {
  if [[ -n "${server_pid:-}" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [[ "${BULK_KEEP:-0}" == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }
data="$work/db"

echo "== 1. generating $jobs jobs as JSON Lines (seed $seed)"
t0="$(now_ms)"
"$compare" --jobs "$jobs" --seed "$seed" --posts "${BULK_POSTS:-short}" --write-jsonl "$work/jsonl"
gen_ms=$(($(now_ms) - t0))
jsonl_bytes="$(du -cb "$work/jsonl/jobs.jsonl" "$work/jsonl/companies.jsonl" | awk 'END { print $1 }')"
companies="$(wc -l <"$work/jsonl/companies.jsonl")"

echo "== 2. import into a fresh sled folder (--cache-mb $cache_mb)"
# The key for the check in step 4, issued while the folder is empty: every command that opens
# the folder (`keys` and `import` too) first rebuilds the search index from every stored job.
# (Read all of its output: `| head -n1` can close the pipe before the server prints its second
# line, and the server then panics on the broken pipe.)
key="$("$server" --data-dir "$data" --cache-mb "$cache_mb" keys create --plan enterprise \
  --label bulk.sh 2>/dev/null)"
key="${key%%$'\n'*}"
t0="$(now_ms)"
timed=()
[[ -x /usr/bin/time ]] && timed=(/usr/bin/time -f '%M' -o "$work/import.time") # GNU time: peak RSS
"${timed[@]}" "$server" --data-dir "$data" --cache-mb "$cache_mb" import \
  --companies "$work/jsonl/companies.jsonl" --jobs "$work/jsonl/jobs.jsonl" | tee "$work/import.out"
import_ms=$(($(now_ms) - t0))
import_hwm_kb="$(cat "$work/import.time" 2>/dev/null || echo 0)"
import_said="$(sed -n 's/^Imported .* in \([^,]*\), \([0-9]*\) jobs\/s\./\1 (\2 jobs\/s)/p' "$work/import.out")"
sled_bytes="$(du -sb "$data" | awk '{ print $1 }')"

# Starts `serve --no-demo` on the folder and sets startup_ms, rss_kb and hwm_kb once it
# listens; the server keeps running (server_pid) until stop_server.
start_server() {
  local t0
  t0="$(now_ms)"
  RUST_LOG=info "$server" --data-dir "$data" --cache-mb "$cache_mb" serve --admin-addr 127.0.0.1:0 --no-demo \
    --addr "127.0.0.1:$port" --no-rate-limits >"$work/serve.out" 2>"$work/serve.err" &
  server_pid=$!
  local listening=0
  for _ in $(seq 1 30000); do # at most about 10 minutes
    if grep -q '^Listening on' "$work/serve.out" 2>/dev/null; then
      listening=1
      break
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.02
  done
  startup_ms=$(($(now_ms) - t0))
  if ((!listening)); then
    echo "the server did not start" >&2
    cat "$work/serve.out" "$work/serve.err" >&2
    exit 1
  fi
  rss_kb="$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status")"
  hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$server_pid/status")"
}

# The server's own start-up figure, from process start to bound listener.
startup_said() { sed -n 's/.*startup=\([^ ]*\).*/\1/p' "$work/serve.err" | head -1; }

# The total one GET /jobs reports: every active job when the index is complete.
served_total() {
  curl -s --max-time 60 -H "X-API-Key: $key" "$base/api/v1/jobs?per_page=1" |
    sed -n 's/.*"total":\([0-9]*\).*/\1/p'
}

# SIGTERM, as a service manager stops it: the server saves its index on the way out.
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}

echo "== 3. serve --no-demo: time until it listens (index loaded from the snapshot the import saved)"
start_server
snapshot_ms="$startup_ms"
snapshot_rss_kb="$rss_kb"
snapshot_said="$(startup_said)"
total="$(served_total)"
stop_server
snapshot_bytes="$(stat -c %s "$data/search-index" 2>/dev/null || echo 0)"

echo "== 4. serve --no-demo again without the snapshot: the index rebuilt from every stored job"
rm -f "$data/search-index"
start_server
rebuild_said="$(startup_said)"
active="$(sed -n 's/.*active_jobs=\([0-9]*\).*/\1/p' "$work/serve.err" | head -1)"
rebuilt_total="$(served_total)"
rss_after_kb="$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status")"
stop_server

echo "== 6. the floor: sled alone writing and reading the same jobs' JSON"
# Its own failure (out of disk, say) must not hide the figures above.
"$floor" --jobs "$work/jsonl/jobs.jsonl" --dir "$work/floor" --cache-mb "$cache_mb" |
  tee "$work/floor.out" || echo "the floor did not run to the end" | tee "$work/floor.out" >&2

mib() { awk -v kb="$1" 'BEGIN { printf "%.0f MiB", kb / 1024 }'; }
echo
echo "jobs:             $jobs ($companies companies), JSON Lines $(mib $((jsonl_bytes / 1024))), generated in $(secs "$gen_ms") s"
echo "import:           $(secs "$import_ms") s wall clock, $(awk -v n="$jobs" -v ms="$import_ms" 'BEGIN { printf "%.0f", n / (ms / 1000) }') jobs/s (goal >= 100000);" \
  "the command's own figure (writing only): ${import_said:-?}; import peak RSS $(mib "${import_hwm_kb:-0}")"
echo "sled folder:      $(mib $((sled_bytes / 1024))) after import ($(awk -v b="$sled_bytes" -v n="$jobs" 'BEGIN { printf "%.0f", b / n }') bytes/job); --cache-mb $cache_mb"
echo "start-up:         $(secs "$snapshot_ms") s until 'Listening on', index loaded from its snapshot (goal <= 5 s; the server's own figure ${snapshot_said:-?});" \
  "snapshot $(mib $((snapshot_bytes / 1024))) ($(awk -v b="$snapshot_bytes" -v n="$jobs" 'BEGIN { printf "%.0f", b / n }') bytes/job); VmRSS $(mib "$snapshot_rss_kb")"
echo "rebuild start-up: $(secs "$startup_ms") s until 'Listening on' without a snapshot (the server's own figure ${rebuild_said:-?}); active jobs indexed ${active:-?}"
echo "serving RSS:      VmRSS $(mib "$rss_kb"), VmHWM $(mib "$hwm_kb") after the rebuild; VmRSS $(mib "$rss_after_kb") after one search"
echo "GET /jobs total:  ${total:-?} (snapshot), ${rebuilt_total:-?} (rebuilt)"
sed 's/^/sled alone:       /' "$work/floor.out"
if [[ "${rebuilt_total:-}" != "$jobs" ]]; then
  echo "ERROR: the rebuilt index serves ${rebuilt_total:-?} jobs, expected $jobs" >&2
  exit 1
fi
if [[ "${total:-}" != "$jobs" ]]; then
  echo "ERROR: the server serves ${total:-?} jobs, expected $jobs" >&2
  exit 1
fi
