#!/usr/bin/env bash
# Authenticated `GET /v1/pods` under wrk: starts `suanli server` on a temporary data directory,
# creates a user with PODS pods (pending: no node is registered), then runs wrk against
# /v1/pods at 64 and 16 connections, and against /healthz (no token, no store, a tiny body) to
# separate the cost of HTTP from that of authentication and JSON. Results in docs/benchmarks.md.
#
#   bash bench/api_get_bench.sh [BUILD_DIR (build/release)] [PODS (100)] [SECONDS (10)]
#
# Needs wrk (scripts/install-deps.sh) and curl. The server and wrk share the machine's cores.
set -euo pipefail

build=${1:-build/release}
pods=${2:-100}
seconds=${3:-10}
suanli="$build/src/cli/suanli"
[ -x "$suanli" ] || suanli="$build/suanli"
[ -x "$suanli" ] || { echo "no suanli binary in $build; build the suanli target first" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing; run scripts/install-deps.sh" >&2; exit 1; }

data=$(mktemp -d)
log="$data.log"
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; fi
  rm -rf "$data" "$log"
}
trap cleanup EXIT

"$suanli" server --listen 127.0.0.1:0 --data-dir "$data" >"$log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
  [ -n "$port" ] && [ -s "$data/admin-token" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "the server did not start:" >&2; cat "$log" >&2; exit 1; }
url="http://127.0.0.1:$port"
curl -sf --retry 20 --retry-delay 1 --retry-connrefused -o /dev/null "$url/healthz"
admin=$(cat "$data/admin-token")

user=$(curl -sf -X POST -H "Authorization: Bearer $admin" \
  -d '{"name":"bench","credits_micros":1000000000000}' "$url/v1/users")
token=$(printf '%s' "$user" | sed -n 's|.*"token":"\([^"]*\)".*|\1|p')
user_id=$(printf '%s' "$user" | sed -n 's|.*"id":"\(usr_[^"]*\)".*|\1|p')
[ -n "$token" ] && [ -n "$user_id" ] || { echo "no token or id in: $user" >&2; exit 1; }
# Pending pods past the default quota, and queued on purpose: no node is registered.
curl -sf -o /dev/null -X PUT -H "Authorization: Bearer $admin" \
  -d "{\"max_pods\":$((pods + 1)),\"max_pending_pods\":$((pods + 1))}" "$url/v1/users/$user_id/quota"
for _ in $(seq "$pods"); do
  curl -sf -o /dev/null -X POST -H "Authorization: Bearer $token" \
    -d '{"image":"busybox","gpu_type":"RTX 4090","volume_gb":0,"queue":true}' "$url/v1/pods"
done
bytes=$(curl -sf -H "Authorization: Bearer $token" "$url/v1/pods" | wc -c)
echo "server $url, $pods pods, GET /v1/pods answers $bytes bytes"

run() {  # label, wrk arguments...
  local label=$1
  shift
  echo "== $label"
  wrk --latency -d"${seconds}s" "$@" |
    grep -E 'Requests/sec|Transfer/sec|^ +(50|90|99)%|Latency  |Non-2xx|Socket errors'
}
run "GET /v1/pods -t2 -c64" -t2 -c64 -H "Authorization: Bearer $token" "$url/v1/pods"
run "GET /v1/pods -t2 -c16" -t2 -c16 -H "Authorization: Bearer $token" "$url/v1/pods"
run "GET /v1/pods?limit=20 -t2 -c64" -t2 -c64 -H "Authorization: Bearer $token" "$url/v1/pods?limit=20"
etag=$(curl -sf -D - -o /dev/null -H "Authorization: Bearer $token" "$url/v1/pods?limit=20" |
  sed -n 's|^[Ee][Tt]ag: *\(.*\)\r$|\1|p')
run "GET /v1/pods?limit=20 If-None-Match (304) -t2 -c64" -t2 -c64 -H "Authorization: Bearer $token" \
  -H "If-None-Match: $etag" "$url/v1/pods?limit=20"
run "GET /v1/pods?limit=20&view=compact -t2 -c64" -t2 -c64 -H "Authorization: Bearer $token" \
  "$url/v1/pods?limit=20&view=compact"
run "GET /healthz -t2 -c64" -t2 -c64 "$url/healthz"
