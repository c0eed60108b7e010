#!/usr/bin/env bash
# Shares of one GPU, end to end on real Podman: `suanli up` with one simulated RTX 4090; two pods of
# `--gpu 4090:0.5` both run on GPU 0 (each container told its share), each priced at half the GPU's
# rate and billed so; availability shows the device full; a third 0.5 waits and says why; when one
# half stops, the third takes its place.
# Usage: gpu_share_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine: sudo bash scripts/engine.sh)
source "$(dirname "$0")/up_testing.sh" "$1"
start_up 1

SUANLI_TOKEN=$("$suanli" users create alice --credits 20 --json | json_field token)
[ -n "$SUANLI_TOKEN" ] || fail "no token for alice"
gpu_price=$("$suanli" availability --json | json_field price_per_hour_micros)
[ -n "$gpu_price" ] || fail "no price in availability"

container_env() {  # container_env POD: the container's environment, one variable a line
  curl -sf --unix-socket "${engine#unix://}" "http://engine/containers/suanli-$1/json" |
    grep -oE '"Env": *\[[^]]*\]' | grep -oE '"[A-Z_]+=[^"]*"' | tr -d '"'
}

on_gpu0() { tr -d ' \n' | grep -q '"gpu_indices":\[0\]'; }  # on_gpu0 < POD_JSON

pods=()
created_at=$(date +%s)
for name in first second; do
  json=$("$suanli" pods create --template demo-http --gpu 4090:0.5 --name "$name" --wait --timeout 120 --json) ||
    fail "pods create --gpu 4090:0.5 ($name): $json"
  [ "$(json_field state <<<"$json")" = running ] || fail "$name is not running: $json"
  [ "$(json_field gpu_milli <<<"$json")" = 500 ] || fail "$name does not hold half a GPU: $json"
  on_gpu0 <<<"$json" || fail "$name is not on GPU 0: $json"
  price=$(json_field gpu_price_per_hour_micros <<<"$json")
  [ "$price" -eq $((gpu_price / 2)) ] || fail "$name is priced $price, not half of $gpu_price"
  pod=$(json_field id <<<"$json")
  env=$(container_env "$pod")
  grep -qx "SUANLI_GPU_SHARE=0.5" <<<"$env" || fail "$name's container is not told its share: $env"
  grep -qx "SUANLI_GPUS=0" <<<"$env" || fail "$name's container is not given GPU 0: $env"
  pods+=("$pod")
done
"$suanli" pods get "${pods[0]}" | grep -q "0.5x RTX 4090" || fail "pods get does not show the share"

available=$("$suanli" availability --json)
[ "$(json_field free <<<"$available")" = 0 ] || fail "the shared GPU still counts as free: $available"

third_json=$("$suanli" pods create --template demo-http --gpu-count 0.5 --gpu 4090 --name third --json) ||
  fail "pods create third: $third_json"
third=$(json_field id <<<"$third_json")
[ "$(json_field state <<<"$third_json")" = pending ] || fail "the third half is not pending: $third_json"
reason=$(json_field state_reason <<<"$third_json")
[ "$reason" = "no node has 0.5 free of an RTX 4090 (12 GB of its memory); all are in use" ] ||
  fail "the third half waits with the reason '$reason'"

sleep 3  # GPU time is billed in whole seconds: let the halves run for a few
"$suanli" pods stop "${pods[0]}" --wait --timeout 60 >/dev/null || fail "pods stop the first half"
stopped_at=$(date +%s)
"$suanli" pods wait "$third" --state running --timeout 120 >/dev/null ||
  fail "the third half did not take the freed half: $("$suanli" pods get "$third" 2>&1)"
third_json=$("$suanli" pods get "$third" --json)
on_gpu0 <<<"$third_json" || fail "the third half is not on GPU 0: $third_json"

# The first half was billed at half the rate for the seconds it ran: at least the 3 s slept, at most
# the time since it was created.
half=$((gpu_price / 2))
cost=$("$suanli" pods get "${pods[0]}" --json | json_field cost_micros)
[ -n "$cost" ] && [ "$cost" -ge $((half * 3 / 3600)) ] &&
  [ "$cost" -le $((half * (stopped_at - created_at + 1) / 3600)) ] ||
  fail "the first half cost '$cost' micro-dollars; at $half/h it ran 3 to $((stopped_at - created_at + 1)) s"
for pod in "${pods[@]}" "$third"; do "$suanli" pods rm "$pod" --force >/dev/null || fail "pods rm $pod"; done
echo "gpu share end to end: passed (two halves of GPU 0 at $half/h each, the first charged $cost; the third waited: $reason)"
