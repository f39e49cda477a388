# Shared by the load scripts that run bundled servers beside each other, on sled or on a
# PostgreSQL schema of their own (sourced after common.sh, not run): start one, read its
# addresses and key, and on exit stop them all and drop the schema.
#
# Set before sourcing: bin (the folder holding the job-listings binary), mode (sled or
# postgres), schema (the PostgreSQL schema to drop), and optionally serve_args (more `serve`
# options for every server).

pids=()
cleanup_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ "$mode" == postgres ]]; then
    psql "$DATABASE_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup_all EXIT

# start NAME ADDR ADMIN_ADDR [store args...]: a server with its data in $work/NAME (started
# again under the same name, it keeps its data and appends to its error log); sets pid, url,
# admin and token_file.
start() {
  local name="$1" addr="$2" admin_addr="$3"; shift 3
  local data="$work/$name"
  RUST_LOG=warn "$bin/job-listings" --data-dir "$data" --secret-key-file "$work/secret.key" "$@" \
    serve --addr "$addr" --admin-addr "$admin_addr" --no-rate-limits \
    --enterprise-quota 100000000 "${serve_args[@]}" >"$work/$name.out" 2>>"$work/$name.out.err" &
  pid=$!
  pids+=("$pid")
  wait_listening "$work/$name.out" "server $name"
  url="$(sed -n 's/^Listening on \(http:[^ ]*\)$/\1/p' "$work/$name.out")"
  admin="$(cat "$data/admin.addr")"
  token_file="$data/admin.token"
}

# key_of NAME: the enterprise demo key server NAME printed.
key_of() { awk '$1 == "enterprise" && $2 ~ /^jl_live_/ { print $2; exit }' "$work/$1.out"; }
