#!/usr/bin/env bash
# Cold start of a serverless endpoint on real Podman: `suanli up` with one simulated RTX 4090 and an
# endpoint of the demo-worker template (min 0, max 1, idle timeout 1 s). Each round waits until the
# endpoint is at zero workers, submits a job with /run and measures until the job is IN_PROGRESS
# (a worker pod scheduled, its container created and started by the agent, the worker's first long
# poll answered); the image is cached. The baseline is the engine alone: create + start of a
# container of the same image through the Docker API. Results in docs/benchmarks.md.
# Usage: endpoints_cold_start.sh PATH_TO_SUANLI [ROUNDS] (needs: sudo bash scripts/engine.sh)
source "$(dirname "$0")/../tests/up_testing.sh" "$1"
rounds=${2:-10}
socket=${engine#unix://}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
percentiles() {  # percentiles < one number a line: "p50 X ms, p99 Y ms" (nearest rank)
  sort -n | awk '{ v[NR] = $1 } END { p50 = v[int((NR + 1) / 2)]; p99 = v[NR - int(NR / 100)];
    printf "p50 %d ms, p99 %d ms (n=%d, min %d, max %d)", p50, p99, NR, v[1], v[NR] }'
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
"$suanli" up --listen "0.0.0.0:$port" --simulate-gpus "1xRTX 4090" ${engine:+--engine "$engine"} \
  >up.out 2>up.err &
up_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 200); do
  curl -sf "$url/healthz" >/dev/null && [ -f suanli-data/admin-token ] && break
  sleep 0.1
done
export SUANLI_URL=$url
SUANLI_TOKEN=$(cat suanli-data/admin-token)
export SUANLI_TOKEN
for _ in $(seq 1 100); do
  "$suanli" nodes list 2>/dev/null | grep -q "1x RTX 4090 (simulated)" && break
  sleep 0.1
done
SUANLI_TOKEN=$("$suanli" users create alice --credits 50 --json | json_field token)
auth="Authorization: Bearer $SUANLI_TOKEN"
endpoint=$("$suanli" endpoints create cold --template demo-worker --gpu 4090 --max-workers 1 \
  --idle-timeout 1 --json | json_field id)
[ -n "$endpoint" ] || fail "endpoints create"
v2="$url/v2/$endpoint"
live() { "$suanli" endpoints get "$endpoint" --json | grep -c '"state"'; }

cold=()
for round in $(seq 1 "$rounds"); do
  for _ in $(seq 1 600); do [ "$(live)" -eq 0 ] && break; sleep 0.1; done
  sleep 1  # the last worker's container is gone too
  start=$(now_ms)
  job=$(curl -sf -X POST -H "$auth" -d "{\"input\": {\"round\": $round}}" "$v2/run" | json_field id)
  while :; do
    state=$(curl -sf -H "$auth" "$v2/status/$job" | json_field status)
    [ "$state" = IN_PROGRESS ] || [ "$state" = COMPLETED ] && break
    [ $(($(now_ms) - start)) -lt 60000 ] || fail "round $round: the job did not start"
  done
  cold+=($(($(now_ms) - start)))
done

engine_ms=()
for round in $(seq 1 "$rounds"); do
  start=$(now_ms)
  id=$(curl -sf --unix-socket "$socket" -H 'Content-Type: application/json' \
    -d '{"Image": "localhost/suanli/busybox:latest", "Cmd": ["sleep", "30"]}' \
    "http://engine/containers/create" | grep -oE '"Id": *"[0-9a-f]+"' | grep -oE '[0-9a-f]{12,}')
  curl -sf -X POST --unix-socket "$socket" "http://engine/containers/$id/start" >/dev/null
  engine_ms+=($(($(now_ms) - start)))
  curl -sf -X DELETE --unix-socket "$socket" "http://engine/containers/$id?force=true" >/dev/null
done
echo "cold start (job submitted to an idle endpoint -> IN_PROGRESS): $(printf '%s\n' "${cold[@]}" | percentiles)"
echo "engine create + start of the same image:                    $(printf '%s\n' "${engine_ms[@]}" | percentiles)"
"$suanli" endpoints rm "$endpoint" >/dev/null
