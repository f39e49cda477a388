#!/usr/bin/env bash
# Writes while reading: does ingesting jobs move the read latency of GET /jobs?
#
#   bash benches/load/writes_while_reading.sh                  # 20 s per phase
#   WWR_SECONDS=60 WWR_RATE=2000 bash benches/load/writes_while_reading.sh
#
# Goal: ingesting 1,000 jobs/s while serving the GET /jobs mix moves read p99 by < 2x.
#
# Jobs enter through the library (JobListingsService::upsert_job, which the admin API's
# PUT /admin/v1/jobs/{id} calls, without an HTTP round trip per job), so the server here is
# benches/compare/src/bin/ingest_while_serving.rs: the hyper server and a writer task in one
# process, on a fresh sled folder loaded with the demo data (plus WWR_JOBS
# generated jobs). Each phase starts it afresh on its own folder, on 127.0.0.1 only:
#   1. --ingest-rate 0: the GET /jobs mix at WWR_RATE req/s for WWR_SECONDS with the open-loop
#      load tool (benches/compare/src/bin/load.rs) -> read p99 alone;
#   2. --ingest-rate WWR_INGEST_RATE (one new job per upsert_job call, open-loop): the same
#      measurement -> read p99 while writing.
# Prints both p99s, their ratio, the jobs ingested and the upsert_job latency, and exits non-zero
# on any error (a 5xx, a transport error or a metering mismatch in the load tool, a failed
# ingest, or a server that did not start). The ratio alone does not fail the run.
#
# Environment: WWR_SECONDS (20), WWR_RATE (1000 req/s), WWR_INGEST_RATE (1000 jobs/s),
# WWR_JOBS (0 extra jobs on top of the demo's 6,000), WWR_CONNECTIONS (64), WWR_PORT (18098),
# WWR_CACHE_MB (256, sled's page cache). Builds with cargo into CARGO_TARGET_DIR when set
# (else ./target).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${WWR_SECONDS:-20}"
rate="${WWR_RATE:-1000}"
ingest_rate="${WWR_INGEST_RATE:-1000}"
extra_jobs="${WWR_JOBS:-0}"
connections="${WWR_CONNECTIONS:-64}"
port="${WWR_PORT:-18098}"
cache_mb="${WWR_CACHE_MB:-256}"
base="http://127.0.0.1:$port"
target="${CARGO_TARGET_DIR:-$root/target}"

cd "$root"
cargo build --release --quiet -p job-listings-compare --bin ingest_while_serving --bin load
bin="$target/release"

work="$(mktemp -d)"
cleanup() {
  if [[ -n "${server_pid:-}" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_server NAME INGEST_RATE: starts the example on a fresh folder; sets server_pid and key.
start_server() {
  local name="$1" ingest="$2"
  local out="$work/$name.server.out"
  # --duration is only a guard so a forgotten server stops by itself; the phase stops it.
  RUST_LOG=warn "$bin/ingest_while_serving" --data-dir "$work/$name.db" --addr "127.0.0.1:$port" \
    --cache-mb "$cache_mb" --jobs "$extra_jobs" --ingest-rate "$ingest" \
    --duration "$((seconds + 600))s" >"$out" 2>"$work/$name.server.err" &
  server_pid=$!
  for _ in $(seq 1 1200); do
    grep -q '^Listening on' "$out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q '^Listening on' "$out"; then
    echo "the server did not start" >&2
    cat "$out" "$work/$name.server.err" >&2
    exit 1
  fi
  key="$(awk '$1 == "enterprise" { print $2 }' "$out")"
}

# stop_server NAME: SIGINT, then wait (bounded) for its summary.
stop_server() {
  local name="$1"
  kill -INT "$server_pid"
  for _ in $(seq 1 300); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  grep -v -e '^  enterprise' -e "^Key" "$work/$name.server.out" || true
  return "$status"
}

# phase NAME INGEST_RATE: one measurement; its outputs land in $work/NAME.*.
phase() {
  local name="$1" ingest="$2" load_status=0 server_status=0
  start_server "$name" "$ingest"
  sleep 1
  "$bin/load" --url "$base" --key "$key" --rate "$rate" --duration "${seconds}s" \
    --connections "$connections" --mix jobs | tee "$work/$name.load.txt" || load_status=$?
  stop_server "$name" || server_status=$?
  echo "$load_status $server_status" >"$work/$name.status"
}

echo "== 1. GET /jobs mix at $rate req/s for ${seconds}s, no ingest"
phase alone 0
echo
echo "== 2. the same while ingesting $ingest_rate jobs/s (one job per upsert_job call)"
phase writing "$ingest_rate"

field() { # field FILE LINE-PREFIX WORD: the value after WORD on the first line starting so
  awk -v p="$2" -v w="$3" 'index($0, p) == 1 { for (i = 1; i < NF; i++) if ($i == w) { print $(i + 1); exit } }' "$1" | tr -d ','
}
alone="$(field "$work/alone.load.txt" latency: p99)"
writing="$(field "$work/writing.load.txt" latency: p99)"
ratio="$(awk -v a="$alone" -v b="$writing" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "?" }')"
ingested="$(awk '/^ingested:/ { print $2; exit }' "$work/writing.server.out")"
ingest_errors="$(awk '/^ingested:/ { print $NF; exit }' "$work/writing.server.out")"
upsert="$(sed -n 's/^upsert_job latency: //p' "$work/writing.server.out" | head -1)"
read -r alone_load alone_server <"$work/alone.status"
read -r writing_load writing_server <"$work/writing.status"

echo
echo "read p99 (GET /jobs mix, $rate req/s, ${seconds}s): alone ${alone} ms, while writing ${writing} ms" \
  "(ratio ${ratio}; goal < 2)"
echo "read p50 / p99.9 / max: alone $(field "$work/alone.load.txt" latency: p50) /" \
  "$(field "$work/alone.load.txt" latency: p99.9) / $(field "$work/alone.load.txt" latency: max) ms;" \
  "writing $(field "$work/writing.load.txt" latency: p50) / $(field "$work/writing.load.txt" latency: p99.9) /" \
  "$(field "$work/writing.load.txt" latency: max) ms"
echo "jobs ingested: ${ingested:-?} (target $ingest_rate/s), ingest errors ${ingest_errors:-?};" \
  "upsert_job ${upsert:-?}"
echo "answers alone: $(sed -n 's/^answers: *//p' "$work/alone.load.txt");" \
  "while writing: $(sed -n 's/^answers: *//p' "$work/writing.load.txt")"
if awk -v r="$ratio" 'BEGIN { exit !(r != "?" && r < 2) }'; then
  echo "goal: met (p99 ratio $ratio < 2)"
else
  echo "goal: NOT met (p99 ratio $ratio)"
fi
failed=0
for s in "$alone_load" "$alone_server" "$writing_load" "$writing_server"; do
  [[ "$s" == 0 ]] || failed=1
done
[[ "${ingest_errors:-1}" == 0 ]] || failed=1
if ((failed)); then
  echo "ERRORS: load tool exit $alone_load/$writing_load, server exit" \
    "$alone_server/$writing_server, ingest errors ${ingest_errors:-?}" >&2
  exit 1
fi
