#!/usr/bin/env bash
# Our server against the bare hyper ceiling for the same body size.
#
#   bash benches/load/ceiling.sh                    # 10 s per run
#   CEILING_SECONDS=5 bash benches/load/ceiling.sh
#
# Goal: the GET /jobs mix at >= 60% of what a bare hyper server does with answers of the same
# size, GET /jobs/{id} at >= 70%, no errors, every request authenticated and metered as in
# production (at a million long posts: >= 50% and >= 60%, with a p99 at 8 connections of at
# most 3 ms).
#
# 1. Builds (release) the bundled server (the job-listings binary) and the bare hyper reference
#    server (benches/compare, `--bin bare_hyper`); CARGO_TARGET_DIR is honoured.
# 2. Starts our server on a fresh folder with the demo data on 127.0.0.1: keys checked and calls
#    counted as in production (in-memory metering, the default), with the per-key rate limits
#    off and quotas no run can reach. With curl it reads every query of the GET /jobs mix once
#    and 50 job ids once, for the mean body size of each (wrk sends them in turn, so each weighs
#    the same). Then wrk -t1 -c32: a 2 s warm-up and three runs of
#      a. the GET /jobs mix (jobs_mix.lua) with the enterprise demo key;
#      b. the same mix asking for three fields (JL_QUERIES=jobs_queries_fields);
#      c. a mix in relevance order (JL_QUERIES=jobs_queries_relevance);
#      d. GET /jobs/{id} over those 50 ids (job_detail.lua), same key;
#    then one run of a and d at 8 connections (wrk -c8 --latency) for the p50 and p99.
#    Then it starts the server again with `--search-memo 0`, so no answer is kept for a search
#    asked again and every request is worked out as a search never asked before, and runs
#      e. a heavier mix of words with filters and deep pages (jobs_queries_unseen).
# 3. Stops it and starts the bare server with --body-bytes set to each mean body size in turn,
#    driven by the same wrk scripts (the same requests and the same client-side Lua work; the
#    bare server ignores path and key): a warm-up and three runs each.
# 4. Prints the median req/s of each, their ratio and the goal (none for b, c and e: their
#    figures are reported beside the default mix's).
#
# What "the same size" means here: the bare server's body has exactly our mean body size. Its
# headers are only content-type, content-length and date, while ours also carry X-Request-Id
# and the rate-limit headers, which are part of what our server costs; the table shows the
# bytes per answer wrk read from each. Our bodies vary around the mean (see "body bytes"), the
# ceiling's never do.
#
# With CEILING_JOBS=N, our server serves N generated jobs instead of the demo data: the
# comparison crate's generator writes them as JSON Lines (`--posts $CEILING_POSTS`, `short` by
# default, `long` for posts of 80 to 300 words), `import` loads them into a fresh folder
# offline, and `keys create` issues the enterprise key. CEILING_SERVER_ARGS adds options to
# `serve` (e.g. the cache sizes of an older default: `--cache-mb 256 --job-cache-mb 64
# --render-cache-mb 64`). The server's RSS after the runs is printed.
#
# Exits 1 if any answer of either server was not a 200 or any socket error occurred (warm-ups
# included). Needs wrk, curl and python3. Loopback only. On a shared machine, run it under
# `nice` like any other benchmark and compare ratios, not absolute figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${CEILING_SECONDS:-10}"
port="${CEILING_PORT:-18131}"
runs=3
base="http://127.0.0.1:$port"

# shellcheck source=common.sh
source "$here/common.sh"
require wrk curl python3
cd "$root"
jobs="${CEILING_JOBS:-}"
posts="${CEILING_POSTS:-short}"
read -r -a server_args <<<"${CEILING_SERVER_ARGS:-}"
cargo build --release --quiet -p job-listings-server
cargo build --release --quiet -p job-listings-compare --bin bare_hyper
[[ -n "$jobs" ]] && cargo build --release --quiet -p job-listings-compare --bin job-listings-compare
server_bin="${CARGO_TARGET_DIR:-target}/release/job-listings"
bare_bin="${CARGO_TARGET_DIR:-target}/release/bare_hyper"

median_rps() { for f in "$work/$1".run*.txt; do rps "$f"; done | median; }
# The paths of the mix a query list (a Lua file beside this script) holds; the fields list is
# the default one's with three fields asked for.
mix_paths() {
  case "$1" in
    jobs_queries_fields) mix_paths jobs_queries | sed -e '/?/ s/$/\&fields=id,role,company_name/' \
      -e '/?/! s/$/?fields=id,role,company_name/' ;;
    *) grep -o '"/api/v1/[^"]*"' "$here/$1.lua" | tr -d '"' ;;
  esac
}
# The query list each mix reads, and the mixes of the first server and of the second.
declare -A list_of=([mix]=jobs_queries [fields]=jobs_queries_fields [relevance]=jobs_queries_relevance
  [unseen]=jobs_queries_unseen)
first_mixes=(mix fields relevance)
# Non-200 answers plus socket errors over every run of NAME, warm-up included (answers.lua).
errors_of() { awk '/^non-200 answers:/ { gsub(",", "", $3); n += $3 + $6 } END { print n + 0 }' "$work/$1".*.txt; }
bytes_of() { awk '/^bytes per answer:/ { print $4 }' "$work/$1".run*.txt | median; }

# bench NAME SCRIPT URL [QUERIES]: a 2 s warm-up, then $runs runs into $work/NAME.runN.txt;
# QUERIES names the query list of jobs_mix.lua.
bench() {
  local name="$1" script="$here/$2" url="$3"
  export JL_QUERIES="${4:-jobs_queries}"
  wrk -t1 -c32 -d2s -s "$script" "$url" >"$work/$name.warmup.txt"
  for n in $(seq 1 "$runs"); do
    wrk -t1 -c32 -d"${seconds}s" -s "$script" "$url" >"$work/$name.run$n.txt"
    printf '  %-11s run %d: %9s req/s, %s\n' "$name" "$n" "$(rps "$work/$name.run$n.txt")" \
      "$(grep '^non-200' "$work/$name.run$n.txt")"
  done
}

# latency NAME SCRIPT URL: one run at 8 connections, with wrk's latency distribution, into
# $work/NAME.c8.txt (counted in the errors, not in the req/s medians).
latency() {
  wrk -t1 -c8 -d"${seconds}s" --latency -s "$here/$2" "$3" >"$work/$1.c8.txt"
  local goal=""
  [[ "$1" == ours_* ]] && goal=" (goal p99 <= 3 ms)"
  printf '  %-11s 8 connections: p50 %s, p99 %s%s\n' "$1" \
    "$(awk '$1 == "50%" { print $2 }' "$work/$1.c8.txt")" \
    "$(awk '$1 == "99%" { print $2 }' "$work/$1.c8.txt")" "$goal"
}

# body_sizes PATH...: "mean min max" of the answers' body bytes; fails on any answer but 200.
body_sizes() {
  for path in "$@"; do
    curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' -H "X-API-Key: $JL_KEY" "$base$path"
  done | awk '$1 != 200 { bad = 1 } { s += $2; n++; if (n == 1 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
              END { if (bad || n == 0) exit 1; printf "%.0f %d %d\n", s / n, lo, hi }'
}

data_args=()
if [[ -n "$jobs" ]]; then
  echo "== $jobs generated jobs ($posts posts), imported offline"
  "${CARGO_TARGET_DIR:-target}/release/job-listings-compare" --jobs "$jobs" --seed 42 \
    --posts "$posts" --write-jsonl "$work/jsonl"
  JL_KEY="$("$server_bin" --data-dir "$work/db" keys create --plan enterprise --label ceiling.sh 2>/dev/null)"
  JL_KEY="${JL_KEY%%$'\n'*}"
  "$server_bin" --data-dir "$work/db" import --companies "$work/jsonl/companies.jsonl" \
    --jobs "$work/jsonl/jobs.jsonl"
  rm -rf "$work/jsonl"
  echo "  data folder: $(du -sh "$work/db" | cut -f1)"
  data_args=(--no-demo)
fi

# serve [ARGS...]: starts our server on the folder with ARGS, and waits until it has counted
# its closed jobs (a read of the whole folder once after start, on up to half a core):
# measured after it, as a server that has been up a while runs.
serve() {
  RUST_LOG=warn "$server_bin" --data-dir "$work/db" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" --no-rate-limits \
    --enterprise-quota 1000000000 --developer-quota 1000000000 --agent-pro-quota 1000000000 \
    "${data_args[@]}" "${server_args[@]}" "$@" >"$work/server.out" 2>"$work/server.out.err" &
  pid=$!
  wait_listening "$work/server.out" "our server"
  local admin
  admin="$(awk '/^Admin API:/ { print $3 }' "$work/server.out")"
  for _ in $(seq 1 600); do
    curl -sS -H "Authorization: Bearer $(cat "$work/db/admin.token")" "$admin/stats" |
      python3 -c 'import sys, json; sys.exit(json.load(sys.stdin)["jobs"]["closed"] is None)' && break
    sleep 0.5
  done
}

echo "== our server (the job-listings binary), ${jobs:-demo} jobs, in-memory metering, wrk -t1 -c32 -d${seconds}s"
serve
[[ -n "$jobs" ]] || JL_KEY="$(awk '$1 == "enterprise" { print $2 }' "$work/server.out")"
[[ "$JL_KEY" == jl_live_* ]] || { echo "no enterprise demo key in the server's output" >&2; exit 1; }
JL_IDS="$(curl -sS -H "X-API-Key: $JL_KEY" "$base/api/v1/jobs?per_page=50" |
  python3 -c 'import sys, json; print(",".join(j["id"] for j in json.load(sys.stdin)["data"]))')"
export JL_KEY JL_IDS

declare -A body
for which in "${first_mixes[@]}" unseen; do
  mapfile -t queries < <(mix_paths "${list_of[$which]}")
  read -r body[$which] lo hi < <(body_sizes "${queries[@]}")
  [[ -n "${body[$which]:-}" ]] || { echo "measuring body sizes failed" >&2; exit 1; }
  echo "  body bytes: $which mix mean ${body[$which]} ($lo to $hi over ${#queries[@]} queries)"
done
mapfile -t details < <(tr ',' '\n' <<<"$JL_IDS" | sed 's|^|/api/v1/jobs/|')
read -r body[detail] lo hi < <(body_sizes "${details[@]}")
[[ -n "${body[detail]:-}" ]] || { echo "measuring body sizes failed" >&2; exit 1; }
echo "  body bytes: GET /jobs/{id} mean ${body[detail]} ($lo to $hi over ${#details[@]} ids)"

for which in "${first_mixes[@]}"; do
  bench "ours_$which" jobs_mix.lua "$base" "${list_of[$which]}"
done
bench ours_detail job_detail.lua "$base"
latency ours_mix jobs_mix.lua "$base"
latency ours_detail job_detail.lua "$base"
echo "  our server's RSS after the runs: $(awk '/^VmRSS/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$pid/status")"
stop

echo "== our server again with --search-memo 0: every search worked out as never asked before"
serve --search-memo 0
bench ours_unseen jobs_mix.lua "$base" "${list_of[unseen]}"
stop

echo "== bare hyper (benches/compare/src/bin/bare_hyper.rs), same scripts"
for which in "${first_mixes[@]}" unseen detail; do
  "$bare_bin" --addr "127.0.0.1:$((port + 1))" --body-bytes "${body[$which]}" \
    >"$work/bare.$which.out" 2>"$work/bare.$which.out.err" &
  pid=$!
  wait_listening "$work/bare.$which.out" "the bare server"
  script="jobs_mix.lua"
  [[ "$which" == detail ]] && script="job_detail.lua"
  bench "bare_$which" "$script" "http://127.0.0.1:$((port + 1))" "${list_of[$which]:-}"
  [[ "$which" == mix || "$which" == detail ]] && latency "bare_$which" "$script" "http://127.0.0.1:$((port + 1))"
  stop
done

echo
printf '%-15s %11s %11s %10s %7s %6s %4s %19s %13s\n' endpoint "ours req/s" "bare req/s" \
  "body bytes" ratio goal met "bytes/answer o / b" "errors o / b"
total_errors=0
row() { # LABEL WHICH BODY [GOAL]
  local ours bare ratio met eo eb goal="-"
  ours="$(median_rps "ours_$2")"
  bare="$(median_rps "bare_$2")"
  ratio="$(awk -v a="$ours" -v b="$bare" 'BEGIN { printf "%.1f", 100 * a / b }')"
  met="-"
  if [[ -n "${4:-}" ]]; then
    goal=">=$4"
    met="$(awk -v r="$ratio" -v g="$4" 'BEGIN { print (r >= g ? "yes" : "no") }')"
  fi
  eo="$(errors_of "ours_$2")"
  eb="$(errors_of "bare_$2")"
  total_errors=$((total_errors + eo + eb))
  printf '%-15s %11.0f %11.0f %10s %6s%% %6s %4s %19s %13s\n' "$1" "$ours" "$bare" "$3" "$ratio" \
    "$goal" "$met" "$(bytes_of "ours_$2") / $(bytes_of "bare_$2")" "$eo / $eb"
}
row "GET /jobs mix" mix "${body[mix]}" 60
row "mix, 3 fields" fields "${body[fields]}"
row "relevance mix" relevance "${body[relevance]}"
row "never asked" unseen "${body[unseen]}"
row "GET /jobs/{id}" detail "${body[detail]}" 70
echo "(median of $runs runs of wrk -t1 -c32 -d${seconds}s each; errors: non-200 answers plus socket errors)"
if ((total_errors > 0)); then
  echo "FAILED: $total_errors errors" >&2
  exit 1
fi
