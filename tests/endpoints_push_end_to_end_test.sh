#!/usr/bin/env bash
# Push workers end to end on real Podman: `suanli up` with 2 simulated RTX 4090s; an endpoint of the
# demo-http-worker template (busybox httpd, a CGI that echoes what is posted to it) in worker_mode
# http, 2 jobs at a time per worker, max 2 workers. 20 jobs through RunPod's /run all complete with
# the worker's JSON answer as their output; /runsync answers inline; a job the worker answers 500
# is run again up to max_retries, then FAILED with the answer; a worker's container killed with
# jobs posted to it has them run again on another; after the idle timeout the endpoint is at 0.
# Usage: endpoints_push_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine: sudo bash scripts/engine.sh)
source "$(dirname "$0")/up_testing.sh" "$1"

# Push workers never call the server: the loopback address and any port do.
start_up 2
SUANLI_TOKEN=$("$suanli" users create alice --credits 50 --json | json_field token)
[ -n "$SUANLI_TOKEN" ] || fail "no token for alice"
auth="Authorization: Bearer $SUANLI_TOKEN"

# Bad settings are refused with the field's name.
bad=$("$suanli" endpoints create web --template demo-http-worker --worker-mode http 2>&1) &&
  fail "an http endpoint without a port was created: $bad"
grep -q http_port <<<"$bad" || fail "the refusal does not name http_port: $bad"

created=$("$suanli" endpoints create web --template demo-http-worker --gpu 4090 --max-workers 2 \
  --idle-timeout 5 --max-retries 2 --worker-mode http --http-port 8080 --http-path /cgi-bin/job \
  --http-concurrency 2 --json) || fail "endpoints create: $created"
endpoint=$(json_field id <<<"$created")
[ "$(json_field worker_mode <<<"$created")" = http ] || fail "not an http endpoint: $created"
"$suanli" endpoints get "$endpoint" | grep -q "posted to port 8080 /cgi-bin/job, 2 at a time" ||
  fail "endpoints get does not say how jobs reach the workers: $("$suanli" endpoints get "$endpoint")"
v2="$url/v2/$endpoint"

run() { curl -sf -X POST -H "$auth" -d "$1" "$v2/run"; }  # run BODY: the answer
status() { curl -sf -H "$auth" "$v2/status/$1"; }        # status JOB
wait_for() {  # wait_for JOB STATUS SECONDS: its last status answer
  local answer
  for _ in $(seq 1 $(($3 * 10))); do
    answer=$(status "$1")
    [ "$(json_field status <<<"$answer")" = "$2" ] && break
    sleep 0.1
  done
  echo "$answer"
}
workers() {
  "$suanli" endpoints get "$endpoint" --json | grep -oE '"state": *"(initializing|idle|running)"' | wc -l
}

jobs=()
for i in $(seq 1 20); do
  answer=$(run "{\"input\": {\"n\": $i, \"sleep\": 1}}") || fail "run $i"
  jobs+=("$(json_field id <<<"$answer")")
done
most=0
for i in $(seq 1 20); do
  answer=$(wait_for "${jobs[$((i - 1))]}" COMPLETED 120)
  live=$(workers)
  [ "$live" -gt "$most" ] && most=$live
  [ "$(json_field status <<<"$answer")" = COMPLETED ] || fail "job $i: $answer; $("$suanli" endpoints get "$endpoint")"
  grep -q "\"echo\": *{\"n\": *$i," <<<"$answer" || fail "job $i's output is not its input: $answer"
done
[ "$most" -ge 1 ] || fail "no worker was seen"

sync=$(curl -sf -X POST -H "$auth" -d '{"input": {"n": "sync"}}' "$v2/runsync?wait=30000") || fail "runsync"
[ "$(json_field status <<<"$sync")" = COMPLETED ] || fail "runsync answered $sync"
grep -q '"n": *"sync"' <<<"$sync" || fail "runsync's output is not inline: $sync"

# The worker answers 500: run again twice (max_retries 2), then FAILED with its answer.
failing=$(json_field id <<<"$(run '{"input": {"fail": true}}')")
answer=$(wait_for "$failing" FAILED 30)
[ "$(json_field status <<<"$answer")" = FAILED ] || fail "the failing job: $answer"
[ "$(json_field retries <<<"$answer")" = 2 ] || fail "the failing job was not retried twice: $answer"
grep -q "HTTP 500: failed on purpose" <<<"$answer" || fail "the failure does not say why: $answer"

# A worker's container killed with a job posted to it: the job runs again and completes.
victim=$(json_field id <<<"$(run '{"input": {"n": "victim", "sleep": 8}}')")
answer=$(wait_for "$victim" IN_PROGRESS 60)
worker=$(json_field workerId <<<"$answer")
[ -n "$worker" ] || fail "the victim job never started: $answer"
sleep 1
curl -sf -X POST --unix-socket "${engine#unix://}" "http://engine/containers/suanli-$worker/kill" >/dev/null ||
  fail "could not kill suanli-$worker"
answer=$(wait_for "$victim" COMPLETED 120)
[ "$(json_field status <<<"$answer")" = COMPLETED ] || fail "the killed worker's job did not complete: $answer"
[ "$(json_field retries <<<"$answer")" -ge 1 ] || fail "the job was not retried: $answer"
[ "$(json_field workerId <<<"$answer")" != "$worker" ] || fail "it completed on the killed worker"

for _ in $(seq 1 600); do
  [ "$(workers)" -eq 0 ] && break
  sleep 0.1
done
[ "$(workers)" -eq 0 ] || fail "the endpoint did not scale to zero: $("$suanli" endpoints get "$endpoint")"
"$suanli" endpoints rm "$endpoint" >/dev/null || fail "endpoints rm"
echo "endpoints push end to end: passed (20 jobs posted to up to $most http workers, runsync, a 500 retried then FAILED, a killed worker's job run again, scaled to 0)"
