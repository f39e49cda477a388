#!/usr/bin/env bash
# Compression and conditional requests: bytes on the wire and server CPU per request for each
# content coding, the GET /jobs mix compressed and plain against the bare hyper ceiling serving
# bodies of the same size, and If-None-Match hits (304) against the ceiling for a tiny body.
#
#   bash benches/load/encodings.sh                     # 5 s per run
#   ENCODINGS_SECONDS=10 bash benches/load/encodings.sh
#
# Goals: the GET /jobs mix with `Accept-Encoding: zstd, br, gzip` at >= 60 % of bare hyper
# serving the same compressed bytes, uncompressed at >= 60 % as before, and 304s at >= 80 % of
# bare hyper with a tiny body.
#
# 1. Builds (release) the job-listings binary and the bare hyper server (benches/compare,
#    `--bin bare_hyper`); CARGO_TARGET_DIR is honoured.
# 2. Starts our server with the demo data on 127.0.0.1 (in-memory metering, per-key rates off,
#    quotas no run reaches), once as configured by default and once with `--render-cache-mb 0`,
#    which keeps neither rendered jobs nor compressed answers: what compressing costs each time.
# 3. For a page of 20 jobs, a page of 50 and a job detail, and each coding (identity, zstd, br,
#    gzip): the body bytes curl reads (not decoded), then wrk -t1 -c32 on that one URL for the
#    run's seconds; CPU per request is the server process's user + system time from
#    /proc/PID/stat over the run, divided by the requests wrk counted. wrk shares the cores, so
#    compare the rows with each other, not with another machine.
# 4. The GET /jobs mix (jobs_mix.lua) with and without `Accept-Encoding: zstd, br, gzip`, and
#    GET /jobs?per_page=20 with If-None-Match set to its own tag (every answer a 304); then the
#    bare server with --body-bytes set to the mean body bytes of each (compressed for the
#    compressed mix, 1 for the 304s), the same wrk scripts. Medians of three runs.
#
# Exits 1 on any answer other than the one expected (200, or 304) or any socket error. Needs
# wrk, curl and python3. Loopback only. On a shared machine, run it under `nice` and compare
# ratios, not absolute figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${ENCODINGS_SECONDS:-5}"
port="${ENCODINGS_PORT:-18141}"
runs=3
base="http://127.0.0.1:$port"

# shellcheck source=common.sh
source "$here/common.sh"
require wrk curl python3
cd "$root"
cargo build --release --quiet -p job-listings-server
cargo build --release --quiet -p job-listings-compare --bin bare_hyper
server_bin="${CARGO_TARGET_DIR:-target}/release/job-listings"
bare_bin="${CARGO_TARGET_DIR:-target}/release/bare_hyper"
ticks="$(getconf CLK_TCK)"

# Errors over every run of NAME: other answers than expected plus socket errors.
errors_of() { awk '/^non-(200|304) answers:/ { gsub(",", "", $3); n += $3 + $6 } END { print n + 0 }' "$work/$1".*.txt; }
median_rps() { for f in "$work/$1".run*.txt; do rps "$f"; done | median; }
bytes_of() { awk '/^bytes per answer:/ { print $4 }' "$work/$1".run*.txt | median; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
requests_of() { awk '/requests in/ { print $1 }' "$1"; }

# start_server ARGS...: our server on a fresh folder, its enterprise key in JL_KEY.
start_server() {
  rm -rf "$work/db"
  RUST_LOG=warn "$server_bin" --data-dir "$work/db" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
    --no-rate-limits --enterprise-quota 1000000000 --developer-quota 1000000000 \
    --agent-pro-quota 1000000000 "$@" >"$work/server.out" 2>"$work/server.out.err" &
  pid=$!
  wait_listening "$work/server.out" "our server"
  JL_KEY="$(awk '$1 == "enterprise" { print $2 }' "$work/server.out")"
  [[ "$JL_KEY" == jl_live_* ]] || { echo "no enterprise demo key in the server's output" >&2; exit 1; }
  export JL_KEY
}

# bench NAME SCRIPT URL [wrk args]: a 2 s warm-up, then $runs runs into $work/NAME.runN.txt.
bench() {
  local name="$1" script="$here/$2" url="$3"
  shift 3
  wrk -t1 -c32 -d2s -s "$script" "$@" "$url" >"$work/$name.warmup.txt"
  for n in $(seq 1 "$runs"); do
    wrk -t1 -c32 -d"${seconds}s" -s "$script" "$@" "$url" >"$work/$name.run$n.txt"
  done
}

# per_coding LABEL: bytes and CPU per request of each URL and coding on the running server.
per_coding() {
  local id path coding bytes before after requests name
  id="$(curl -sS -H "X-API-Key: $JL_KEY" "$base/api/v1/jobs?per_page=1" |
    python3 -c 'import sys, json; print(json.load(sys.stdin)["data"][0]["id"])')"
  for path in "/api/v1/jobs?per_page=20" "/api/v1/jobs?per_page=50" "/api/v1/jobs/$id"; do
    for coding in identity zstd br gzip; do
      bytes="$(curl -sS -o /dev/null -w '%{size_download}' -H "X-API-Key: $JL_KEY" \
        -H "Accept-Encoding: $coding" "$base$path")"
      name="cpu.$1.$coding.$(tr -c 'a-z0-9' _ <<<"$path")"
      wrk -t1 -c32 -d1s -H "X-API-Key: $JL_KEY" -H "Accept-Encoding: $coding" -s "$here/answers.lua" \
        "$base$path" >"$work/$name.warmup.txt"
      before="$(cpu_ticks)"
      wrk -t1 -c32 -d"${seconds}s" -H "X-API-Key: $JL_KEY" -H "Accept-Encoding: $coding" \
        -s "$here/answers.lua" "$base$path" >"$work/$name.run1.txt"
      after="$(cpu_ticks)"
      requests="$(requests_of "$work/$name.run1.txt")"
      printf '%-8s %-32s %-9s %8s %10.0f %12.1f %6s\n' "$1" "${path/$id/\{id\}}" "$coding" "$bytes" \
        "$(rps "$work/$name.run1.txt")" \
        "$(awk -v d="$((after - before))" -v t="$ticks" -v r="$requests" 'BEGIN { print 1e6 * d / t / r }')" \
        "$(errors_of "$name")"
    done
  done
}

echo "== bytes and server CPU per request, wrk -t1 -c32 -d${seconds}s on one URL each"
printf '%-8s %-32s %-9s %8s %10s %12s %6s\n' caches path coding bytes "req/s" "CPU µs/req" errors
start_server
per_coding default
stop
start_server --render-cache-mb 0
per_coding none
stop

echo
echo "== GET /jobs mix compressed and plain, 304s; then bare hyper with the same body sizes"
start_server
mapfile -t queries < <(grep -o '"/api/v1/[^"]*"' "$here/jobs_queries.lua" | tr -d '"')
mean_bytes() { # ACCEPT_ENCODING: mean body bytes read over the mix, not decoded
  for q in "${queries[@]}"; do
    curl -sS -o /dev/null -w '%{size_download}\n' -H "X-API-Key: $JL_KEY" -H "Accept-Encoding: $1" "$base$q"
  done | awk '{ s += $1; n++ } END { printf "%.0f\n", s / n }'
}
plain_body="$(mean_bytes identity)"
coded_body="$(mean_bytes 'zstd, br, gzip')"
tag="$(curl -sS -o /dev/null -D - -H "X-API-Key: $JL_KEY" "$base/api/v1/jobs?per_page=20" |
  awk -F': ' 'tolower($1) == "etag" { gsub("\r", "", $2); print $2 }')"
[[ -n "$tag" ]] || { echo "no ETag on GET /jobs" >&2; exit 1; }
echo "  mean body bytes over the mix: plain $plain_body, zstd/br/gzip $coded_body; tag $tag"
JL_ACCEPT_ENCODING="zstd, br, gzip" bench ours_coded jobs_mix.lua "$base"
JL_ACCEPT_ENCODING="" bench ours_plain jobs_mix.lua "$base"
JL_EXPECT_STATUS=304 bench ours_304 answers.lua "$base/api/v1/jobs?per_page=20" -H "X-API-Key: $JL_KEY" -H "If-None-Match: $tag"
stop
for which in coded plain 304; do
  case "$which" in coded) size="$coded_body" ;; plain) size="$plain_body" ;; 304) size=1 ;; esac
  "$bare_bin" --addr "127.0.0.1:$((port + 1))" --body-bytes "$size" \
    >"$work/bare.$which.out" 2>"$work/bare.$which.out.err" &
  pid=$!
  wait_listening "$work/bare.$which.out" "the bare server"
  script="jobs_mix.lua"
  [[ "$which" == 304 ]] && script="answers.lua"
  bench "bare_$which" "$script" "http://127.0.0.1:$((port + 1))/"
  stop
done

echo
printf '%-34s %11s %11s %7s %6s %4s %19s %13s\n' run "ours req/s" "bare req/s" ratio goal met \
  "bytes/answer o / b" "errors o / b"
total_errors=0
row() { # LABEL WHICH GOAL
  local ours bare ratio met eo eb
  ours="$(median_rps "ours_$2")"
  bare="$(median_rps "bare_$2")"
  ratio="$(awk -v a="$ours" -v b="$bare" 'BEGIN { printf "%.1f", 100 * a / b }')"
  met="$(awk -v r="$ratio" -v g="$3" 'BEGIN { print (r >= g ? "yes" : "no") }')"
  eo="$(errors_of "ours_$2")"
  eb="$(errors_of "bare_$2")"
  total_errors=$((total_errors + eo + eb))
  printf '%-34s %11.0f %11.0f %6s%% %5s%% %4s %19s %13s\n' "$1" "$ours" "$bare" "$ratio" ">=$3" "$met" \
    "$(bytes_of "ours_$2") / $(bytes_of "bare_$2")" "$eo / $eb"
}
row "GET /jobs mix, zstd/br/gzip" coded 60
row "GET /jobs mix, plain" plain 60
row "If-None-Match hit (304)" 304 80
echo "(median of $runs runs of wrk -t1 -c32 -d${seconds}s each; errors: unexpected answers plus socket errors)"
if ((total_errors > 0)); then
  echo "FAILED: $total_errors errors" >&2
  exit 1
fi
