#!/bin/sh
# suanli's demo serverless worker (busybox sh and wget; scripts/engine.sh puts it in the local demo
# image as /bin/demo-worker, the `demo-worker` template runs it). It long-polls its endpoint for a
# job, answers {"echo": <input>, "worker": <its pod>} and asks again. An input with "sleep": N
# (seconds) makes it take that long, for tests of scaling and lost workers.
auth="Authorization: Bearer $SUANLI_WORKER_TOKEN"
while true; do
  job=$(wget -q -O - --header "$auth" "$SUANLI_JOB_URL?wait_s=20") || {
    sleep 1
    continue
  }
  [ -n "$job" ] || continue # 204: no job within the wait
  id=$(echo "$job" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p')
  input=$(echo "$job" | sed -n 's/^{"id":"[^"]*","input":\(.*\)}$/\1/p')
  seconds=$(echo "$input" | sed -n 's/.*"sleep":\([0-9][0-9]*\).*/\1/p')
  [ -z "$seconds" ] || sleep "$seconds"
  wget -q -O /dev/null --header "$auth" \
    --post-data "{\"output\":{\"echo\":$input,\"worker\":\"$SUANLI_POD_ID\"}}" \
    "$SUANLI_RESULT_URL/$id" || sleep 1
done
