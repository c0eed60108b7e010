#!/usr/bin/env bash
# A volume's move between two nodes against a plain `tar | tar` of the same data (docs/benchmarks.md):
# starts `suanli server` and two `suanli agent`s on this machine's engine (one simulated GPU each),
# writes MIB MiB of random data into a pod's volume on node A, stops the pod, fills A, starts the
# pod again: it moves to B, and the `volume.moved` event gives the move's bytes, seconds and MB/s
# (archive on A, ranges through the relay, part file, checksum, unpack on B). Then the same
# directory is copied with `tar -cf - . | tar -xf -` to a temporary directory, timed.
#
#   sudo bash bench/volume_move_bench.sh [BUILD_DIR (build/release)] [MIB (512)]
#
# Needs root, a container engine (scripts/engine.sh), podman, curl.
set -euo pipefail

build=${1:-build/release}
mib=${2:-512}
suanli="$build/suanli"
[ -x "$suanli" ] || { echo "no suanli binary in $build; build the suanli target first" >&2; exit 1; }
engine=${SUANLI_ENGINE_SOCKET:-unix:///run/podman/podman.sock}
image=localhost/suanli/busybox:latest

work=$(mktemp -d)
pids=()
pod= filler=
cleanup() {
  # The agents are started in command substitutions (subshells): their pids are in files.
  for file in "$work"/*.pid; do [ -f "$file" ] && pids+=("$(cat "$file")"); done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  for id in $pod $filler; do
    podman rm -f "suanli-$id" >/dev/null 2>&1 || true
    podman volume rm -f "suanli-$id" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "volume_move_bench: failed at line $LINENO" >&2' ERR

field() { sed -n "s|.*\"$1\":\"\\([^\"]*\\)\".*|\\1|p" | head -1; }  # field KEY < JSON (strings)
number() { grep -o "\"$1\":[0-9.eE+-]*" | head -1 | cut -d: -f2; }  # number KEY < JSON

"$suanli" server --listen 127.0.0.1:0 --data-dir "$work/data" --max-data-wait 0 >"$work/server.log" 2>&1 &
pids+=($!)
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.log")
  [ -n "$port" ] && [ -s "$work/data/admin-token" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port"
admin=$(cat "$work/data/admin-token")
api() {  # api METHOD PATH TOKEN [BODY]
  curl -sf -X "$1" -H "Authorization: Bearer $3" ${4:+-d "$4"} "$url$2"
}
token=$(api POST /v1/users "$admin" '{"name":"bench","credits_micros":1000000000}' | field token)

agent() {  # agent NAME: starts it, prints its node id
  local secret
  secret=$(api POST /v1/join-tokens "$admin" '{}' | field secret)
  "$suanli" agent --server "$url" --state-dir "$work/$1" --name "$1" --simulate-gpus "1xRTX 4090" \
    --engine "$engine" --join-token "$secret" >"$work/$1.log" 2>&1 &
  echo $! >"$work/$1.pid"
  for _ in $(seq 600); do
    grep -q "registered as node" "$work/$1.log" && break
    sleep 0.1
  done
  sed -n 's|.*registered as node \([^ ]*\) .*|\1|p' "$work/$1.log" | head -1
}
wait_pod() {  # wait_pod ID STATE [NODE]
  for _ in $(seq 1200); do
    json=$(api GET "/v1/pods/$1" "$token")
    if [ "$(field state <<<"$json")" = "$2" ] && { [ -z "${3:-}" ] || [ "$(field node_id <<<"$json")" = "$3" ]; }; then
      return 0
    fi
    sleep 0.1
  done
  echo "pod $1 did not become $2: $json" >&2
  exit 1
}
pod_body() {
  echo "{\"name\":\"$1\",\"image\":\"$image\",\"command\":[\"sleep\",\"100000\"],\"gpu_type\":\"RTX 4090\",\"vcpu\":1,\"memory_gb\":1,\"container_disk_gb\":1,\"volume_gb\":$2}"
}

node_a=$(agent bench-a)
pod=$(api POST /v1/pods "$token" "$(pod_body mover 1)" | field id)
wait_pod "$pod" running "$node_a"
podman exec "suanli-$pod" sh -c "head -c $((mib << 20)) /dev/urandom > /workspace/data.bin"
api POST "/v1/pods/$pod/stop" "$token" >/dev/null
wait_pod "$pod" stopped
node_b=$(agent bench-b)
api POST "/v1/nodes/$node_b/cordon" "$admin" >/dev/null
filler=$(api POST /v1/pods "$token" "$(pod_body filler 0)" | field id)
wait_pod "$filler" running "$node_a"
api POST "/v1/nodes/$node_b/uncordon" "$admin" >/dev/null
api POST "/v1/pods/$pod/start" "$token" >/dev/null
wait_pod "$pod" running "$node_b"

moved=$(api GET "/v1/events?pod=$pod&kind=volume.moved" "$token")
bytes=$(number bytes <<<"$moved")
seconds=$(number seconds <<<"$moved")
rate=$(number mb_per_s <<<"$moved")
[ -n "$bytes" ] || { echo "no volume.moved event: $moved" >&2; exit 1; }

dir=$(podman volume inspect "suanli-$pod" --format '{{.Mountpoint}}')
mkdir "$work/copy"
start=$(date +%s.%N)
tar -C "$dir" -cf - . | tar -C "$work/copy" -xf -
end=$(date +%s.%N)
tar_seconds=$(echo "$end - $start" | bc -l)
tar_rate=$(echo "$bytes / 1000000 / $tar_seconds" | bc -l)
printf 'volume move: %d bytes in %.2f s = %.1f MB/s (archive, relay, checksum, unpack)\n' \
  "$bytes" "$seconds" "$rate"
printf 'tar | tar:   the same data in %.2f s = %.1f MB/s\n' "$tar_seconds" "$tar_rate"
grep -h "mov" "$work/bench-a.log" "$work/bench-b.log" | tail -6
