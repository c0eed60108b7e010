#!/usr/bin/env bash
# Idle auto-stop end to end on real Podman: `suanli up` with one simulated RTX 4090; a demo pod
# created with --idle-stop-after 20s and a pre-stop command sits idle (simulated GPU at 0, a
# sleeping container's CPU near 0, no SSH port, no HTTP through the proxy); the server warns,
# the agent runs the pre-stop command in the container, the container stops, billing ends there,
# and `suanli events` says why.
# Usage: idle_stop_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine: sudo bash scripts/engine.sh)
source "$(dirname "$0")/up_testing.sh" "$1"
start_up 1

SUANLI_TOKEN=$("$suanli" users create alice --credits 20 --json | json_field token)
[ -n "$SUANLI_TOKEN" ] || fail "no token for alice"

# A webhook for the stop, to the server's own machine: refused by policy (a user's webhook is no way
# into the operator's network). Given as an address, it is refused when it is made; given as a name
# (this machine's, which resolves to loopback), at each delivery, since a name's answers may change,
# and each refused try shows in its delivery log.
refused=$("$suanli" webhooks create http://127.0.0.1:9/hook --kind pod.idle_stop 2>&1) &&
  fail "a webhook to 127.0.0.1 was made: $refused"
grep -q "refused by policy" <<<"$refused" || fail "the refused webhook's error does not say why: $refused"
name=$(hostname)
getent hosts "$name" | grep -q '^127\.' ||
  fail "this machine's name $name does not resolve to loopback ($(getent hosts "$name")); the test needs one that does"
hook=$("$suanli" webhooks create "http://$name:9/hook" --kind pod.idle_stop --json | json_field id)
[ -n "$hook" ] || fail "webhooks create gave no id"

json=$("$suanli" pods create --template demo-http --gpu 4090 --name idler \
  --idle-stop-after 20s --pre-stop-command 'echo checkpoint saved' --wait --timeout 120 --json) ||
  fail "pods create --idle-stop-after: $json"
pod=$(json_field id <<<"$json")
[ "$(json_field idle_stop_after_s <<<"$json")" = 20 ] || fail "the pod does not show its idle_stop_after: $json"
"$suanli" pods get "$pod" | grep -q "Idle stop.*after 20s idle" || fail "pods get does not show the idle rule"

# Warned a fifth of the window before (4 s), stopped at 20 s idle; the pod's own clock starts when
# it runs. Allow for heartbeats (5 s) and the stop itself.
stopped=""
for _ in $(seq 1 120); do
  state=$("$suanli" pods get "$pod" --json | json_field state)
  if [ "$state" = stopped ]; then stopped=yes; break; fi
  sleep 0.5
done
[ -n "$stopped" ] || fail "the idle pod was not stopped within 60 s (state $state)"

events=$("$suanli" events --pod "$pod")
echo "$events"
grep -q "pod.idle_warning" <<<"$events" || fail "no idle warning before the stop"
grep -q "pod.idle_stop.*stopped: idle for" <<<"$events" || fail "suanli events does not say it stopped for idleness"
grep -q "pod.state.*running -> stopped: stopped: idle for" <<<"$events" ||
  fail "the state change does not carry the idle reason"
stop_json=$("$suanli" events --pod "$pod" --kind pod.idle_stop --json)
tr -d ' \n' <<<"$stop_json" | grep -q '"gpu_simulated":true' || fail "the stop does not say the GPU is simulated: $stop_json"
tr -d ' \n' <<<"$stop_json" | grep -q '"ssh_known":false' || fail "the stop does not say SSH could not be seen: $stop_json"
tr -d ' \n' <<<"$stop_json" | grep -q '"sampled":true' || fail "no heartbeat carried the pod's CPU and SSH: $stop_json"
grep -q "the pre-stop command of $pod exited 0: checkpoint saved" up.out up.err ||
  fail "the agent did not run the pre-stop command before the stop"
# Warning, then the pre-stop command, then the stop: the warning's id comes before the stop's.
warn_id=$("$suanli" events --pod "$pod" --kind pod.idle_warning --json | json_field id)
stop_id=$(json_field id <<<"$stop_json")
[ "$warn_id" -lt "$stop_id" ] || fail "the warning ($warn_id) does not come before the stop ($stop_id)"

# Billing ended at the stop: the ledger's GPU seconds do not grow any more.
sleep 2
before=$("$suanli" billing usage --json | json_field gpu_seconds)
sleep 3
after=$("$suanli" billing usage --json | json_field gpu_seconds)
[ -n "$before" ] && [ "$before" = "$after" ] || fail "GPU seconds still grow after the stop: $before -> $after"
# And the owner sees the event in the follow mode's first page too.
timeout 3 "$suanli" events -f --kind pod.idle_stop >follow.out 2>&1
grep -q "$pod" follow.out || fail "events -f does not show the stop: $(cat follow.out)"
# The webhook tried to deliver the stop (and will again, with backoff): its log says so.
for _ in $(seq 1 20); do
  "$suanli" webhooks list --json | tr -d ' \n' | grep -q "\"event_id\":$stop_id" && break
  sleep 0.5
done
"$suanli" webhooks list --json | tr -d ' \n' | grep -q "\"event_id\":$stop_id,\"kind\":\"pod.idle_stop\",\"status\":0" ||
  fail "the webhook's log does not show a try of the stop: $("$suanli" webhooks list --json)"
"$suanli" webhooks list --json | grep -qE "refused by policy: 127\.[0-9.]+ is" ||
  fail "the webhook's log does not say the loopback receiver was refused by policy"
"$suanli" webhooks list | grep -q "pod.idle_stop" || fail "webhooks list does not show the webhook"
"$suanli" webhooks rm "$hook" | grep -q "removed webhook $hook" || fail "webhooks rm"
echo "PASS: an idle pod was warned, ran its pre-stop command, stopped, and the events say why"
