#!/usr/bin/env bash
# Serverless endpoints end to end on real Podman: `suanli up` with 3 simulated RTX 4090s; an endpoint
# (min 0, max 3) of the demo-worker template; 50 jobs through RunPod's /run scale it from 0 to 3
# workers and every job completes with its output; /runsync answers inline; a queued job is
# cancelled; a worker's container killed mid-job has its job re-queued and completed; queued jobs
# survive a kill -9 of the server; after the idle timeout the endpoint is back at 0 workers and the
# worker seconds are billed to its owner.
# Usage: endpoints_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine: sudo bash scripts/engine.sh)
source "$(dirname "$0")/up_testing.sh" "$1"

# Workers reach the server from their containers (host.containers.internal), so it listens on every
# address, on a port chosen here (the workers' URL names it).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
"$suanli" up --listen "0.0.0.0:$port" --simulate-gpus "3xRTX 4090" ${engine:+--engine "$engine"} \
  >up.out 2>up.err &
up_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 200); do
  curl -sf "$url/healthz" >/dev/null && [ -f suanli-data/admin-token ] && break
  kill -0 "$up_pid" 2>/dev/null || fail "suanli up exited"
  sleep 0.1
done
export SUANLI_URL=$url
SUANLI_TOKEN=$(cat suanli-data/admin-token)
export SUANLI_TOKEN
for _ in $(seq 1 100); do
  "$suanli" nodes list 2>/dev/null | grep -q "3x RTX 4090 (simulated)" && break
  sleep 0.1
done
"$suanli" nodes list | grep -q "3x RTX 4090 (simulated)" || fail "the local agent's node is not listed"

SUANLI_TOKEN=$("$suanli" users create alice --credits 50 --json | json_field token)
[ -n "$SUANLI_TOKEN" ] || fail "no token for alice"
auth="Authorization: Bearer $SUANLI_TOKEN"

created=$("$suanli" endpoints create echo --template demo-worker --gpu 4090 --min-workers 0 \
  --max-workers 3 --idle-timeout 5 --json) || fail "endpoints create: $created"
endpoint=$(json_field id <<<"$created")
v2="$url/v2/$endpoint"
"$suanli" endpoints list | grep -q "$endpoint" || fail "endpoints list does not show $endpoint"

run() { curl -sf -X POST -H "$auth" -d "$1" "$v2/run"; }  # run BODY: the answer
status() { curl -sf -H "$auth" "$v2/status/$1"; }        # status JOB
workers() {  # the endpoint's live workers now
  "$suanli" endpoints get "$endpoint" --json | grep -oE '"state": *"(initializing|idle|running)"' | wc -l
}

# 50 jobs of a second each: one worker at once, then up to 3 once the queue has waited 4 s.
jobs=()
for i in $(seq 1 50); do
  answer=$(run "{\"input\": {\"n\": $i, \"sleep\": 1}}") || fail "run $i"
  [ "$(json_field status <<<"$answer")" = IN_QUEUE ] || fail "run $i answered $answer"
  jobs+=("$(json_field id <<<"$answer")")
done
most=0
deadline=$((SECONDS + 240))
while :; do
  live=$(workers)
  [ "$live" -gt "$most" ] && most=$live
  [ "$live" -le 3 ] || fail "$live workers, above max_workers 3"
  completed=$(curl -sf -H "$auth" "$v2/health" | grep -oE '"completed": *[0-9]+' | grep -oE '[0-9]+$')
  [ "${completed:-0}" -ge 50 ] && break
  [ $SECONDS -lt $deadline ] || fail "only ${completed:-0} of 50 jobs completed; $("$suanli" endpoints get "$endpoint")"
  sleep 0.5
done
[ "$most" -eq 3 ] || fail "the endpoint scaled to $most workers, not 3"
for i in $(seq 1 50); do
  answer=$(status "${jobs[$((i - 1))]}")
  [ "$(json_field status <<<"$answer")" = COMPLETED ] || fail "job $i: $answer"
  grep -q "\"echo\": *{\"n\": *$i," <<<"$answer" || fail "job $i's output is not its input: $answer"
done

# runsync: the output inline.
sync=$(curl -sf -X POST -H "$auth" -d '{"input": {"n": "sync"}}' "$v2/runsync?wait=30000") ||
  fail "runsync"
[ "$(json_field status <<<"$sync")" = COMPLETED ] || fail "runsync answered $sync"
grep -q '"n": *"sync"' <<<"$sync" || fail "runsync's output is not inline: $sync"

# A queued job cancelled: three long jobs hold the workers, the fourth waits.
for i in 1 2 3; do run '{"input": {"sleep": 6}}' >/dev/null || fail "run a long job"; done
queued=$(json_field id <<<"$(run '{"input": {"n": "cancel me"}}')")
cancelled=$(curl -sf -X POST -H "$auth" "$v2/cancel/$queued") || fail "cancel $queued"
[ "$(json_field status <<<"$cancelled")" = CANCELLED ] || fail "cancel answered $cancelled"
[ "$(json_field status <<<"$(status "$queued")")" = CANCELLED ] || fail "the job is not cancelled"

# A worker's container killed mid-job: the job goes back to the queue and completes on another.
victim=$(json_field id <<<"$(run '{"input": {"n": "victim", "sleep": 10}}')")
worker=""
for _ in $(seq 1 300); do
  answer=$(status "$victim")
  if [ "$(json_field status <<<"$answer")" = IN_PROGRESS ]; then
    worker=$(json_field workerId <<<"$answer")
    break
  fi
  sleep 0.1
done
[ -n "$worker" ] || fail "the victim job never started: $(status "$victim")"
sleep 1
curl -sf -X POST --unix-socket "${engine#unix://}" "http://engine/containers/suanli-$worker/kill" >/dev/null ||
  fail "could not kill suanli-$worker"
for _ in $(seq 1 600); do
  answer=$(status "$victim")
  [ "$(json_field status <<<"$answer")" = COMPLETED ] && break
  sleep 0.1
done
[ "$(json_field status <<<"$answer")" = COMPLETED ] || fail "the killed worker's job did not complete: $answer"
[ "$(json_field retries <<<"$answer")" = 1 ] || fail "the job was not retried once: $answer"
[ "$(json_field workerId <<<"$answer")" != "$worker" ] || fail "it completed on the killed worker"
retried=$(curl -sf -H "$auth" "$v2/health" | grep -oE '"retried": *[0-9]+' | grep -oE '[0-9]+$')
[ "${retried:-0}" -ge 1 ] || fail "health does not count the retry"

# Jobs answered with an id survive a kill -9 of the server: it restarts from its store, the
# workers (still running, their long polls failing meanwhile) come back, and every job completes.
durable=()
for i in 1 2 3 4 5; do durable+=("$(json_field id <<<"$(run "{\"input\": {\"n\": \"d$i\", \"sleep\": 1}}")")"); done
kill -9 "$up_pid"
wait "$up_pid" 2>/dev/null
"$suanli" up --listen "0.0.0.0:$port" --simulate-gpus "3xRTX 4090" ${engine:+--engine "$engine"} \
  >>up.out 2>>up.err &
up_pid=$!
for _ in $(seq 1 200); do curl -sf "$url/healthz" >/dev/null && break; sleep 0.1; done
for job in "${durable[@]}"; do
  for _ in $(seq 1 900); do
    answer=$(status "$job")
    [ "$(json_field status <<<"$answer")" = COMPLETED ] && break
    sleep 0.1
  done
  [ "$(json_field status <<<"$answer")" = COMPLETED ] || fail "job $job after the restart: $answer"
done

# The idle timeout (5 s): back to zero workers.
for _ in $(seq 1 600); do
  [ "$(workers)" -eq 0 ] && break
  sleep 0.1
done
[ "$(workers)" -eq 0 ] || fail "the endpoint did not scale to zero: $("$suanli" endpoints get "$endpoint")"

# The workers' seconds were billed to alice, the endpoint's owner.
gpu_seconds=0
for seconds in $("$suanli" billing usage --by pod --json | grep -oE '"gpu_seconds": *[0-9]+' | grep -oE '[0-9]+$'); do
  gpu_seconds=$((gpu_seconds + seconds))
done
[ "$gpu_seconds" -ge 10 ] || fail "alice was billed $gpu_seconds GPU seconds for the workers"

"$suanli" endpoints rm "$endpoint" >/dev/null || fail "endpoints rm"
echo "endpoints end to end: passed (50 jobs on up to $most workers, runsync, cancel, a killed worker's job retried, jobs through a kill -9 of the server, scaled to 0, $gpu_seconds GPU seconds billed)"
