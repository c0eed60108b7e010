#!/usr/bin/env bash
# The API commands of the `suanli` binary against a real `suanli server` (no agent, so pods stay
# pending): login, users, tokens, templates, pods, billing, nodes; exit codes, stdout for results,
# one stderr line per error. Usage: cli_api_test.sh PATH_TO_SUANLI
set -uo pipefail

suanli=$(realpath "$1")
workdir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT
cd "$workdir"
# Nothing from the person running the tests: no login file, no token, no URL.
export XDG_CONFIG_HOME="$workdir/config"
unset SUANLI_TOKEN SUANLI_URL

"$suanli" server --listen 127.0.0.1:0 --data-dir "$workdir/data" >server.log 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -oE 'listening on http://[0-9.]+:[0-9]+' server.log | sed 's/listening on //')
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "FAIL: the server did not start"
  cat server.log
  exit 1
fi
admin_token=$(cat "$workdir/data/admin-token")

passed=0
failed=0
check() {  # check NAME EXPECTED_EXIT STDOUT_PATTERN STDERR_PATTERN -- ARGS...
  local name=$1 want_exit=$2 out_pattern=$3 err_pattern=$4
  shift 5
  "$suanli" "$@" >out.txt 2>err.txt
  local got_exit=$?
  local problem=""
  [ "$got_exit" -eq "$want_exit" ] || problem+=" exit $got_exit, want $want_exit;"
  if [ -n "$out_pattern" ]; then grep -qE -- "$out_pattern" out.txt || problem+=" stdout lacks /$out_pattern/;"; fi
  if [ -n "$err_pattern" ]; then
    grep -qE -- "$err_pattern" err.txt || problem+=" stderr lacks /$err_pattern/;"
    [ "$(wc -l <err.txt)" -eq 1 ] || problem+=" stderr is not one line;"
    [ ! -s out.txt ] || problem+=" stdout is not empty on error;"
  fi
  if [ -z "$problem" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name:$problem"
    sed 's/^/  stdout: /' out.txt | head -5
    sed 's/^/  stderr: /' err.txt | head -5
  fi
}
admin() { check "$1" "$2" "$3" "$4" -- --url "$url" --token "$admin_token" "${@:6}"; }

check "no token" 7 "" "no API token; run .suanli login" -- --url "$url" pods list
check "bad token" 7 "" "suanli login: not saved: .*ask an admin .*admin-token" -- login --url "$url" --token sl_wrong
check "server down" 9 "" "is .suanli server. running" -- --url http://127.0.0.1:1 --token x pods

admin "create user" 0 "created user alice .*\\\$10\.00" "" -- users create alice --credits 10
alice_token=$(grep -oE 'sl_[A-Za-z0-9_-]+' out.txt | head -1)
alice_id=$("$suanli" --url "$url" --token "$admin_token" users list --json |
  grep -B3 -A3 '"name": "alice"' | grep -oE '"id": "[^"]+"' | head -1 | sed 's/"id": "//; s/"$//')
admin "users table" 0 "alice +user +\\\$10\.00" "" -- users list
admin "credit" 0 "alice: balance \\\$12\.50" "" -- users credit "$alice_id" 2.50 --note test
admin "credit bad amount" 2 "" "AMOUNT" -- users credit "$alice_id" 2.5.0
admin "credit negative" 2 "" "give a positive amount with --debit" -- users credit "$alice_id" -- -5
admin "debit" 0 "alice: balance \\\$12\.00" "" -- users credit alice 0.50 --debit
admin "credit" 0 "alice: balance \\\$12\.50" "" -- users credit alice 0.50
admin "user by name" 0 "Name: +alice" "" -- users get alice
admin "no such user" 3 "" "no user with the ID or name 'nobody'" -- users get nobody
admin "endpoint quota" 0 "Quota: +100 pods, 20 of them pending; 3 endpoints" "" -- users set-quota alice --endpoints 3
admin "quota none given" 2 "" "give one or more of --pods N, --pending N and --endpoints N" -- users set-quota alice

check "login" 0 "logged in to $url as alice \(user" "" -- login --url "$url" --token "$alice_token"
mode=$(stat -c %a "$XDG_CONFIG_HOME/suanli/config.json")
if [ "$mode" = "600" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL config mode $mode"; fi
check "me" 0 "Name: +alice" "" -- users get me
check "not admin" 8 "" "." -- users list
check "templates" 0 "^ID +NAME +IMAGE" "" -- templates
check "balance" 0 "Balance: +\\\$12\.50" "" -- billing balance
check "balance json" 0 '"balance_micros": 12500000' "" -- billing balance --json

check "endpoint create" 0 "^created endpoint ep_[0-9a-f]+ \\(echo\\); send jobs to /v2/ep_" "" -- \
  endpoints create echo --template demo-worker --gpu 4090:0.5 --max-workers 2 --idle-timeout 30
endpoint_id=$(grep -oE 'ep_[0-9a-f]+' out.txt | head -1)
check "endpoints table" 0 "$endpoint_id +echo +demo-worker +0.5x RTX 4090 +0 \\(0-2\\)" "" -- endpoints list
check "endpoint update" 0 "Workers: +0 \\(1-2\\)" "" -- endpoints update "$endpoint_id" --min-workers 1
check "endpoint bad" 2 "" "min_workers: must be from 0 to 2, not 3" -- endpoints update "$endpoint_id" --min-workers 3
check "volume for endpoint" 0 "weights" "" -- volumes create weights --size 1
check "endpoint volume read-write" 2 "" "would be read-write in each of up to 2 workers" -- endpoints update "$endpoint_id" --volume weights:/models
check "endpoint volume" 0 "Volume: +vol_[0-9a-f]+ at /models, read-only" "" -- endpoints update "$endpoint_id" --volume weights:/models:ro
check "endpoint rm" 0 "removed endpoint $endpoint_id" "" -- endpoints rm "$endpoint_id"
check "volume after endpoint" 0 "" "" -- volumes rm weights
check "endpoint gone" 3 "" "you have no endpoint $endpoint_id" -- endpoints get "$endpoint_id"

check "pods empty" 0 "" "" -- pods
check "pod nowhere" 5 "" "no node has joined this cluster yet; or queue it on purpose" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --name t0
check "pod create" 0 "^[A-Za-z0-9_-]+ pending" "" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --name t1 --queue
pod_id=$(cut -d' ' -f1 out.txt)
check "pods table" 0 "$pod_id +t1 +pending +1x RTX 4090" "" -- pods list
check "pods json" 0 "\"id\": \"$pod_id\"" "" -- pods list --json
check "pod get" 0 "State: +pending" "" -- pods get "$pod_id"
check "pod wait times out" 6 "" "pod $pod_id is still pending after 1 s: no ready node has RTX 4090 GPUs" -- pods wait "$pod_id" --timeout 1
check "pod history" 0 "pending" "" -- pods history "$pod_id"
check "pod not found" 3 "" "suanli pods: " -- pods get pod_nope
check "pod gpu typo" 3 "" "no GPU type named '4900'; did you mean RTX 4090" -- pods create --image ubuntu:22.04 --gpu 4900 --queue
check "pod bad env" 2 "" "--env 'X' is not KEY=VALUE" -- pods create --image x --env X
check "auto-terminate needs consent" 2 "" "its 5 GB volume would be deleted with the pod; agree with" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --queue --volume-gb 5 --terminate-after-stopped 7d
check "auto-terminate" 0 "pending" "" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --queue --volume-gb 5 --terminate-after-stopped 7d --terminate-deletes-volume
auto_terminated=$(cut -d' ' -f1 out.txt)
check "auto-terminate shown" 0 "Terminate: +after 7d" "" -- pods get "$auto_terminated"
check "auto-terminate pod rm" 0 "" "" -- pods rm "$auto_terminated"
check "auto-terminate bad duration" 2 "" "terminate_after_stopped" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --queue --terminate-after-stopped soon
check "pod logs pending" 5 "" "is pending and on no node, so it has no logs" -- pods logs "$pod_id" --tail 10
check "pod logs bad tail" 2 "" "tail" -- pods logs "$pod_id" --tail -3
check "pod stop" 0 "^$pod_id " "" -- pods stop "$pod_id"
check "pod stop again" 5 "" "it is already stopped, nothing to stop" -- pods stop "$pod_id"
check "pod rm" 0 "^$pod_id terminated" "" -- pods rm "$pod_id" --force

# apply -f and delete -f: a pod that mounts a volume, written before the volume; apply makes the
# volume first, delete -f removes the pod first.
cat >spec.yaml <<'SPEC'
kind: pod
name: trainer
image: ubuntu:22.04
gpu_type: RTX 4090
queue: true
volumes:
  - name: data
    mount_path: /data
---
kind: volume
name: data
size_gb: 10
SPEC
says() {  # says NAME PATTERN: the last command's stdout has a line matching PATTERN
  if grep -qE -- "$2" out.txt; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1: no /$2/ in:"; sed 's/^/  /' out.txt; fi
}
check "apply" 0 "^volume data: created \\(vol_" "" -- apply -f spec.yaml
says "apply made the pod after" "^pod trainer: created \\(pod_"
check "apply again" 0 "^volume data: unchanged" "" -- apply -f spec.yaml
says "the pod unchanged" "^pod trainer: unchanged"
check "volume get" 0 "size: +10 GB" "" -- volumes get data
check "get -f" 0 "^volume +data +vol_[0-9a-f]+ +available +as specified" "" -- get -f spec.yaml
says "get -f shows the pod" "^pod +trainer +pod_[0-9a-f]+ +pending +as specified"
sed -i 's/size_gb: 10/size_gb: 25/' spec.yaml
check "apply grows" 0 "^volume data: updated \\(vol_[^)]*\\): size_gb" "" -- apply -f spec.yaml
check "volume grown" 0 "size: +25 GB" "" -- volumes get data
# Snapshots need a node holding the data (no agent here): the refusals and the empty list.
check "snapshot of no data" 5 "" "holds no data yet" -- volumes snapshot data --name first
check "no snapshots" 0 "^ID +NAME +VOLUME +STATE" "" -- volumes snapshots
check "restore of nothing" 3 "" "no snapshot nope" -- volumes create copy --from-snapshot nope
check "create without a size" 2 "" "--size is required" -- volumes create copy
check "shared with no backend" 5 "" "no node of this cloud has the shared backend.*--shared-volumes" -- volumes create team --size 5 --shared
check "snapshot-rm of nothing" 3 "" "no snapshot nope" -- volumes snapshot-rm nope
sed -i 's|mount_path: /data|mount_path: /mnt/data|' spec.yaml
check "apply a changed pod" 5 "^pod trainer: exists \\(pod_[^)]*\\) and differs in volumes" "" -- apply -f spec.yaml
says "the advice keeps the volume" "cannot change in place: replace it alone with .suanli pods rm pod_[0-9a-f]+., then apply again \\(this keeps the volumes; .delete -f. would delete the file's volumes and their data\\)"
check "volume in use" 5 "" "is used by pod pod_[0-9a-f]+; terminate those pods first \\(suanli pods rm ID\\)" -- volumes rm data
check "delete -f" 0 "^volume data: deleted \\(vol_" "" -- delete -f spec.yaml
says "the pod went first" "^pod trainer: deleted"
check "volume gone" 3 "" "." -- volumes get data
check "delete -f again" 0 "^volume data: not found" "" -- delete -f spec.yaml
check "get -f of nothing" 3 "^pod +trainer +- +- +not created" "" -- get -f spec.yaml
cp err.txt out.txt
says "get -f names what is missing" "^suanli get: 2 object\\(s\\) of spec.yaml do not exist yet"

check "token create" 0 "^sl_" "" -- tokens create laptop
check "tokens" 0 "laptop" "" -- tokens list
check "token read-only" 0 "^read-only token tok_[0-9a-f]+ created" "" -- tokens create dash --read-only
reader=$(head -1 out.txt)
check "tokens access" 0 "dash +sl_[A-Za-z0-9_-]+ +read-only" "" -- tokens list
check "read-only reads" 0 "" "" -- --token "$reader" pods list
check "read-only changes nothing" 8 "" "this API token is read-only: it cannot call POST /v1/pods" -- \
  --token "$reader" pods create --image ubuntu:22.04 --gpu "RTX 4090" --queue
check "usage" 0 "total: " "" -- billing usage --by day
check "usage csv" 0 "" "" -- billing usage --csv
check "ledger" 0 "credit" "" -- billing ledger

admin "join token" 0 "suanli agent --server $url --join-token slj_" "" -- nodes join-token --note box
admin "no nodes" 0 "" "" -- nodes
admin "availability" 0 "" "" -- availability
admin "price" 0 "RTX 4090: \\\$0\.80 per GPU-hour" "" -- prices set "RTX 4090" 0.80

# A node (registered as its agent would, but with no agent behind it) and a pod bound to one of its
# two GPUs: the table counts what the server sends (the pods' node and GPU indices).
join_token=$("$suanli" --url "$url" --token "$admin_token" nodes join-token | grep -oE 'slj_[A-Za-z0-9_-]+' | head -1)
gpu() { echo "{\"index\":$1,\"uuid\":\"GPU-$1\",\"type\":\"RTX 4090\",\"memory_mb\":24564,\"simulated\":true}"; }
curl -sf -X POST -H "Authorization: Bearer $join_token" -H 'Content-Type: application/json' \
  -d "{\"name\":\"box\",\"gpus\":[$(gpu 0),$(gpu 1)],\"vcpu\":16,\"memory_gb\":64,\"disk_gb\":500}" \
  "$url/v1/agent/register" >/dev/null || { failed=$((failed + 1)); echo "FAIL register a node"; }
check "pod on the node" 0 "^pod_[A-Za-z0-9]+ (pending|starting)" "" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --name t2
for _ in $(seq 1 50); do  # the scheduler binds it on its next tick (250 ms)
  "$suanli" --url "$url" --token "$admin_token" nodes | grep -qE ' 1/2 ' && break
  sleep 0.1
done
admin "nodes used" 0 "box +ready +2x RTX 4090 \(simulated\) +1/2 " "" -- nodes
node_id=$("$suanli" --url "$url" --token "$admin_token" nodes | grep -oE '^node_[A-Za-z0-9_-]+' | head -1)
admin "node gpus in use" 0 "GPUs in use: +1 of 2" "" -- nodes get "$node_id"

# Projects: alice's team; a pod in it is the project's, and bob, made a viewer, sees it but may not
# deploy into it.
check "project create" 0 "^prj_[A-Za-z0-9]+ +team +$alice_id +$alice_id=owner" "" -- projects create team
admin "bob" 0 "created user bob" "" -- users create bob --credits 1
bob_token=$(grep -oE 'sl_[A-Za-z0-9_-]+' out.txt | head -1)
check "project viewer" 0 "=viewer" "" -- projects add-member team bob --role viewer
check "project bad role" 2 "" "role" -- projects add-member team bob --role boss
check "project pod" 0 "^pod_[A-Za-z0-9]+ (pending|starting)" "" -- pods create --project team --image ubuntu:22.04 --gpu "RTX 4090" --queue --name teamwork
check "project pod seen" 0 "teamwork" "" -- --token "$bob_token" pods list
check "viewer deploys not" 8 "" "you are a viewer of team" -- --token "$bob_token" pods create --project team --image ubuntu:22.04 --gpu "RTX 4090" --queue
check "no such project" 3 "" "you are in no project 'nope'" -- pods create --project nope --image ubuntu:22.04 --gpu "RTX 4090" --queue
check "projects list" 0 "team" "" -- --token "$bob_token" projects
# A project token (a CI job's): the project's pods, and nothing else of alice's account.
check "project token" 0 "^sl_[A-Za-z0-9_-]+$" "" -- tokens create ci --project team
ci_token=$(head -n 1 out.txt)
check "project token sees" 0 "teamwork" "" -- --token "$ci_token" pods list
check "alice sees t2" 0 " t2 " "" -- pods list
check "project token only" 0 "" "" -- --token "$ci_token" pods list
if grep -q " t2 " out.txt; then failed=$((failed + 1)); echo "FAIL project token sees alice's own pod"; fi
check "project token billing" 8 "" "scoped to project" -- --token "$ci_token" billing balance
check "tokens list scope" 0 "full \(project prj_" "" -- tokens list
check "project budget" 0 "team: cap \\\$5\.00/h, monthly budget \\\$100 \(at 100 %: stop_all\)" "" -- projects set-budget team --cap 5 --monthly 100 --action stop_all
check "project budget none" 2 "" "--cap" -- projects set-budget team
check "project budget bad" 2 "" "--monthly" -- projects set-budget team --monthly lots
check "project budget member" 8 "" "only the project's owner" -- --token "$bob_token" projects set-budget team --cap 1
# The project's volumes and endpoints: made in it, seen by its viewer, not by a person's pod.
check "project volume" 0 "datasets" "" -- volumes create datasets --size 1 --project team
check "project volume seen" 0 "datasets" "" -- --token "$bob_token" volumes list
check "project volume not personal" 5 "" "another project's volume" -- pods create --image ubuntu:22.04 --gpu "RTX 4090" --queue --volume datasets:/data
check "project endpoint" 0 "created endpoint ep_" "" -- endpoints create team-echo --template demo-worker --gpu 4090 --project team
team_endpoint=$(grep -oE 'ep_[A-Za-z0-9]+' out.txt | head -n 1)
check "project endpoint seen" 0 "Project: +prj_" "" -- --token "$bob_token" endpoints get "$team_endpoint"
check "project endpoint viewer" 8 "" "only view" -- --token "$bob_token" endpoints rm "$team_endpoint"
check "project endpoint rm" 0 "removed endpoint" "" -- endpoints rm "$team_endpoint"
check "project volume rm" 0 "" "" -- volumes rm datasets

echo "cli api: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
