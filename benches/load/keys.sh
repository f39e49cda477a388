#!/usr/bin/env bash
# Do metering and auth serialize? One key against 64, metered against unmetered.
#
#   bash benches/load/keys.sh                  # 10 s per run
#   KEYS_SECONDS=5 bash benches/load/keys.sh
#
# Goal: throughput with 64 keys and with 1 key within 10% of each other and of an unmetered run.
#
# 1. Builds the bundled release server (the job-listings binary; CARGO_TARGET_DIR is honoured),
#    starts it once on a fresh folder so it loads the demo data, and stops it. (`keys create` on
#    an empty folder would make the server skip the demo data: it loads it only into a store
#    with no company and no key.)
# 2. Issues $KEYS_COUNT (64) enterprise keys with `server --data-dir DIR keys create`.
# 3. Three rounds; in each, wrk -t1 -c32 drives the GET /jobs mix (jobs_mix_keys.lua, one key
#    per request in turn) after a 2 s warm-up:
#      (i)   the first of those keys alone, metered (--metering in-memory, the default);
#      (ii)  all 64 keys, metered (same server as (i); (i) and (ii) swap order every round);
#      (iii) the first key alone, unmetered (--metering off, a server started for it).
#    Rate limits are off and quotas out of reach, so every answer should be a 200. After each
#    server's runs, GET /usage for the first key shows that (i)/(ii) were counted and (iii)
#    was not.
# 4. Prints the median req/s and median p99 of each, their ratios to (i), and the spread of
#    the three medians against the 10% goal.
#
# Exits 1 on any non-200 answer or socket error. Needs wrk, curl and python3. Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${KEYS_SECONDS:-10}"
port="${KEYS_PORT:-18141}"
count="${KEYS_COUNT:-64}"
base="http://127.0.0.1:$port"

# shellcheck source=common.sh
source "$here/common.sh"
require wrk curl python3
cd "$root"
cargo build --release --quiet -p job-listings-server
server_bin="${CARGO_TARGET_DIR:-target}/release/job-listings"

data="$work/db"

# start NAME METERING: our server on $data, rate limits off, quotas out of reach.
start() {
  local out="$work/$1.out"
  RUST_LOG=warn "$server_bin" --data-dir "$data" serve --admin-addr 127.0.0.1:0 --addr "127.0.0.1:$port" \
    --no-rate-limits --metering "$2" --enterprise-quota 1000000000 \
    --developer-quota 1000000000 --agent-pro-quota 1000000000 >"$out" 2>"$out.err" &
  pid=$!
  wait_listening "$out" "the server"
}

# The first key's calls counted in this period, as GET /usage reports them.
calls_used() {
  curl -sS -H "X-API-Key: $(head -n1 "$work/keys.1")" "$base/api/v1/usage" |
    python3 -c 'import sys, json; print(json.load(sys.stdin)["calls_used"])'
}

echo "== seeding: demo data into a fresh folder"
start seed in-memory
stop
echo "== issuing $count enterprise keys"
for n in $(seq 1 "$count"); do
  out="$("$server_bin" --data-dir "$data" keys create --plan enterprise --label "keys.sh $n" 2>/dev/null)"
  echo "${out%%$'\n'*}" >>"$work/keys.$count"
done
[[ "$(grep -c '^jl_live_' "$work/keys.$count")" == "$count" ]] || { echo "issuing keys failed" >&2; exit 1; }
head -n1 "$work/keys.$count" >"$work/keys.1"

# run NAME KEYFILE ROUND: one measured wrk run into $work/NAME.ROUND.txt.
run() {
  JL_KEYS_FILE="$2" wrk -t1 -c32 -d"${seconds}s" --latency -s "$here/jobs_mix_keys.lua" "$base" \
    >"$work/$1.$3.txt"
  printf '  round %d %-10s %9s req/s, p99 %8s ms, %s\n' "$3" "$1" "$(rps "$work/$1.$3.txt")" \
    "$(p99_ms "$work/$1.$3.txt")" "$(grep '^non-200' "$work/$1.$3.txt")"
}
warm_up() {
  JL_KEYS_FILE="$work/keys.$count" wrk -t1 -c32 -d2s -s "$here/jobs_mix_keys.lua" "$base" \
    >"$work/warmup.$1.txt"
}
# wrk --latency prints e.g. "     99%   12.34ms" (us, ms or s).
p99_ms() {
  awk '$1 == "99%" { v = $2; f = 1
         if (v ~ /us$/) f = 0.001; else if (v ~ /ms$/) f = 1; else if (v ~ /m$/) f = 60000; else if (v ~ /s$/) f = 1000
         sub(/[a-z]+$/, "", v); printf "%.2f\n", v * f }' "$1"
}

echo "== wrk -t1 -c32 -d${seconds}s, the GET /jobs mix; (i) 1 key metered, (ii) $count keys metered, (iii) 1 key unmetered"
for round in 1 2 3; do
  start metered in-memory
  warm_up "metered.$round"
  if ((round % 2)); then
    run one_key "$work/keys.1" "$round"
    run many_keys "$work/keys.$count" "$round"
  else
    run many_keys "$work/keys.$count" "$round"
    run one_key "$work/keys.1" "$round"
  fi
  echo "  round $round: the first key's calls_used after the metered runs: $(calls_used)"
  stop
  start unmetered off
  warm_up "unmetered.$round"
  run unmetered "$work/keys.1" "$round"
  echo "  round $round: the first key's calls_used with metering off: $(calls_used)"
  stop
done

echo
printf '%-24s %11s %8s %11s %8s %7s\n' run "req/s" "vs (i)" "p99 ms" "vs (i)" errors
base_rps="$(for f in "$work"/one_key.*.txt; do rps "$f"; done | median)"
base_p99="$(for f in "$work"/one_key.*.txt; do p99_ms "$f"; done | median)"
total_errors=0
medians=()
row() { # LABEL NAME
  local r p e
  r="$(for f in "$work/$2".*.txt; do rps "$f"; done | median)"
  p="$(for f in "$work/$2".*.txt; do p99_ms "$f"; done | median)"
  e="$(awk '/^non-200 answers:/ { gsub(",", "", $3); n += $3 + $6 } END { print n + 0 }' "$work/$2".*.txt)"
  total_errors=$((total_errors + e))
  medians+=("$r")
  printf '%-24s %11.0f %7.1f%% %11.2f %7.2fx %7d\n' "$1" "$r" \
    "$(awk -v a="$r" -v b="$base_rps" 'BEGIN { print 100 * a / b }')" "$p" \
    "$(awk -v a="$p" -v b="$base_p99" 'BEGIN { print a / b }')" "$e"
}
row "(i)   1 key, metered" one_key
row "(ii)  $count keys, metered" many_keys
row "(iii) 1 key, unmetered" unmetered
warm_errors="$(awk '/^non-200 answers:/ { gsub(",", "", $3); n += $3 + $6 } END { print n + 0 }' "$work"/warmup.*.txt)"
total_errors=$((total_errors + warm_errors))
spread="$(printf '%s\n' "${medians[@]}" | sort -g |
  awk '{ v[NR] = $1 } END { printf "%.1f", 100 * (v[NR] - v[1]) / v[NR] }')"
echo "spread of the three medians: ${spread}% of the fastest (goal: within 10%:" \
  "$(awk -v s="$spread" 'BEGIN { print (s <= 10 ? "met" : "not met") }'))"
echo "(median of 3 rounds of wrk -t1 -c32 -d${seconds}s each; errors: non-200 answers plus socket errors, warm-ups: $warm_errors)"
if ((total_errors > 0)); then
  echo "FAILED: $total_errors errors" >&2
  exit 1
fi
