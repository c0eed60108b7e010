#!/usr/bin/env bash
# What the README promises a new user, on real Podman: `suanli up` (server + local agent on simulated
# GPUs), a user with credits, a pod from the demo-http template that becomes running and ready, its
# HTTP port answering (directly and through the server's proxy), its logs, stop, start again, and
# the seconds and dollars in `suanli billing usage`; then terminate, and no container is left.
# Usage: up_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine: sudo bash scripts/engine.sh)
source "$(dirname "$0")/up_testing.sh" "$1"
start_up

SUANLI_TOKEN=$("$suanli" users create alice --credits 20 --json | json_field token)
[ -n "$SUANLI_TOKEN" ] || fail "no token for alice"

ssh-keygen -q -t ed25519 -N "" -C "alice@laptop" -f alice_key
"$suanli" ssh-keys add laptop alice_key.pub >/dev/null || fail "ssh-keys add"

pod_json=$("$suanli" pods create --template demo-http --gpu 4090 --wait --timeout 120 --json) ||
  fail "pods create --wait: $pod_json"
pod=$(json_field id <<<"$pod_json")
[ "$(json_field state <<<"$pod_json")" = running ] || fail "the pod is not running: $pod_json"
[ "$(json_field ready <<<"$pod_json")" = true ] || fail "the pod is not ready: $pod_json"
host_port=$(json_field host_port <<<"$pod_json")
[ -n "$host_port" ] || fail "no host port in $pod_json"

curl -sf "http://127.0.0.1:$host_port/" | grep -q "suanli demo pod" || fail "the pod's port does not serve the page"
curl -sf -H "Authorization: Bearer $SUANLI_TOKEN" "$url/v1/pods/$pod/proxy/8080/" |
  grep -q "suanli demo pod" || fail "the server's proxy does not reach the pod's port"
# SSH: the key in the volume's authorized_keys, and the command to log in (demo-http serves no SSH,
# so its HTTP port stands in for --port).
volume_dir=$(curl -sf --unix-socket "${engine#unix://}" "http://engine/volumes/suanli-$pod" | json_field Mountpoint)
[ "$(cat "$volume_dir/.ssh/authorized_keys")" = "$(cat alice_key.pub)" ] ||
  fail "the pod's volume has no authorized_keys with alice's key (in $volume_dir)"
[ "$(stat -c %a "$volume_dir/.ssh/authorized_keys")" = 600 ] || fail "authorized_keys is not 0600"
ssh_error=$("$suanli" pods ssh "$pod" 2>&1) && fail "pods ssh of a pod without port 22 succeeded"
grep -q "publishes no port 22" <<<"$ssh_error" || fail "pods ssh does not say why: $ssh_error"
[ "$("$suanli" pods ssh "$pod" --port 8080 --print)" = \
  "ssh -o HostKeyAlias=suanli-$pod -o StrictHostKeyChecking=accept-new -p $host_port root@127.0.0.1" ] ||
  fail "pods ssh --print: $("$suanli" pods ssh "$pod" --port 8080 --print 2>&1)"

# A browser's way in: the pod's link (from `pods get`) without an API token; curl keeps the cookie.
link=$("$suanli" pods get "$pod" | sed -n 's/^Open: *//p')
[ -n "$link" ] || fail "pods get shows no link to the pod's HTTP port"
curl -sfL -c cookies.txt -b cookies.txt "$link" | grep -q "suanli demo pod" ||
  fail "the pod link does not open the pod's port: $link"
curl -sf "${link%%\?*}" >/dev/null && fail "the proxy opened without a link or a token"
logs=$("$suanli" pods logs "$pod" 2>&1)
grep -q "url:/" <<<"$logs" || fail "the logs do not show the request httpd answered: $logs"

sleep 2  # GPU time is billed in whole seconds: run for a few
"$suanli" pods stop "$pod" --wait --timeout 60 >/dev/null || fail "pods stop --wait"
# Stopped: its container is gone, so are its ports and links, but its last logs stay readable.
stopped=$("$suanli" pods get "$pod")
grep -qE "^(Ports|Open|SSH|Jupyter):" <<<"$stopped" && fail "a stopped pod shows how to connect: $stopped"
[ -z "$("$suanli" pods get "$pod" --json | json_field host_port)" ] || fail "a stopped pod has host ports"
logs=$("$suanli" pods logs "$pod" 2>&1) || fail "pods logs of a stopped pod: $logs"
grep -q "url:/" <<<"$logs" || fail "the stopped pod's last logs lack the request it answered: $logs"
sleep 1
"$suanli" pods start "$pod" --wait --timeout 60 >/dev/null || fail "pods start --wait: running and ready again"
sleep 2
"$suanli" pods stop "$pod" >/dev/null && "$suanli" pods wait "$pod" --state stopped --timeout 60 >/dev/null ||
  fail "the second stop"

usage=$("$suanli" billing usage --json)
gpu_micros=$(json_field gpu_micros <<<"$usage")
[ -n "$gpu_micros" ] && [ "$gpu_micros" -gt 0 ] || fail "no GPU charge in the usage: $usage"
"$suanli" billing usage | grep -q "$pod" || fail "the usage table does not name the pod"
balance=$("$suanli" billing balance --json | json_field balance_micros)
[ "$balance" -lt 20000000 ] || fail "the balance did not go down: $balance"

"$suanli" pods rm "$pod" --force >/dev/null || fail "pods rm"
"$suanli" pods wait "$pod" --state terminated --timeout 60 >/dev/null || fail "the pod was not terminated"
for _ in $(seq 1 50); do
  left=$(curl -s --unix-socket "${engine#unix://}" "http://engine/containers/json?all=true" | grep -c "$pod" || true)
  [ "$left" -eq 0 ] && break
  sleep 0.1
done
[ "$left" -eq 0 ] || fail "a container of $pod is left on the engine"

# The quick start on a 2-core machine (CI's): each of the two simulated GPUs takes a pod of the
# default size at once (once, the first pod took both cores and the second waited forever).
first=$("$suanli" pods create --template demo-http --gpu 4090 --wait --timeout 120 --json) ||
  fail "the first of two default pods: $first"
second=$("$suanli" pods create --template demo-http --gpu 4090 --wait --timeout 120 --json) ||
  fail "the second default pod did not run beside the first: $second"
for extra in "$(json_field id <<<"$first")" "$(json_field id <<<"$second")"; do
  "$suanli" pods rm "$extra" --force >/dev/null || fail "pods rm $extra"
  "$suanli" pods wait "$extra" --state terminated --timeout 60 >/dev/null || fail "$extra not terminated"
done

# SSH for real: a pod running Dropbear, which reads the authorized_keys the agent put in the volume.
ssh_json=$("$suanli" pods create --template demo-ssh --gpu 4090 --wait --timeout 120 --json) ||
  fail "pods create demo-ssh --wait: $ssh_json"
ssh_pod=$(json_field id <<<"$ssh_json")
greeting=$("$suanli" pods ssh "$ssh_pod" -i alice_key -- 'echo "hello from $(hostname) as $(id -u)"' 2>&1) ||
  fail "pods ssh did not log in: $greeting"
grep -q "^hello from .* as 0$" <<<"$greeting" || fail "pods ssh ran no command in the pod: $greeting"
# Its host key is its own, held from the first login (StrictHostKeyChecking=yes), and the same in
# the new container after a stop and a start: ssh logs in again, where it once refused ("REMOTE
# HOST IDENTIFICATION HAS CHANGED").
"$suanli" pods ssh "$ssh_pod" --print | grep -q "StrictHostKeyChecking=yes" ||
  fail "pods ssh does not hold the pod to its host key: $("$suanli" pods ssh "$ssh_pod" --print)"
"$suanli" pods stop "$ssh_pod" --wait --timeout 60 >/dev/null || fail "pods stop $ssh_pod"
"$suanli" pods start "$ssh_pod" --wait --timeout 120 >/dev/null || fail "pods start $ssh_pod"
again=$("$suanli" pods ssh "$ssh_pod" -i alice_key -- 'echo again' 2>&1) ||
  fail "pods ssh after a stop and a start: $again"
grep -q "^again$" <<<"$again" || fail "pods ssh after a restart ran nothing: $again"
"$suanli" pods rm "$ssh_pod" --force >/dev/null || fail "pods rm $ssh_pod"

echo "up end to end: passed (pod $pod, GPU charge ${gpu_micros} micro-dollars; ssh into $ssh_pod)"
