# Sourced by the end-to-end tests that run `suanli up` for real (server + local agent on simulated
# GPUs, real containers): `source up_testing.sh PATH_TO_SUANLI`, then `start_up`. Leaves the test in
# a fresh working directory, with SUANLI_URL and the admin's SUANLI_TOKEN exported, and removes on exit
# whatever the run left: `suanli up` itself, and the containers and volumes of every pod it knew
# (pods outlive `suanli up` by design). Needs a container engine: sudo bash scripts/engine.sh.
set -uo pipefail

suanli=$(realpath "$1")
workdir=$(mktemp -d)
engine=${SUANLI_ENGINE_SOCKET:-unix:///run/podman/podman.sock}
up_pid=""
url=""

cleanup() {
  local pods=""
  if [ -n "$url" ] && [ -f "$workdir/suanli-data/admin-token" ]; then
    pods=$(curl -s --max-time 5 -H "Authorization: Bearer $(cat "$workdir/suanli-data/admin-token")" \
      "$url/v1/pods" | grep -oE '"id": *"pod_[0-9a-f]+"' | grep -oE 'pod_[0-9a-f]+')
  fi
  if [ -n "$up_pid" ]; then
    kill -TERM "$up_pid" 2>/dev/null
    wait "$up_pid" 2>/dev/null
  fi
  for pod in $pods; do
    curl -s -X DELETE --unix-socket "${engine#unix://}" "http://engine/containers/suanli-$pod?force=true" >/dev/null
    curl -s -X DELETE --unix-socket "${engine#unix://}" "http://engine/volumes/suanli-$pod" >/dev/null
  done
  # The owners' networks (docs/agent.md): the engine refuses to remove those still in use.
  for network in $(curl -s --unix-socket "${engine#unix://}" \
      'http://engine/networks?filters=%7B%22label%22%3A%5B%22suanli.owner%22%5D%7D' |
      grep -oE '"Name": *"suanli-net-[A-Za-z0-9_.-]+"' | grep -oE 'suanli-net-[A-Za-z0-9_.-]+'); do
    curl -s -X DELETE --unix-socket "${engine#unix://}" "http://engine/networks/$network" >/dev/null
  done
  rm -rf "$workdir"
}
trap cleanup EXIT
cd "$workdir"
export XDG_CONFIG_HOME="$workdir/config"
unset SUANLI_TOKEN SUANLI_URL

fail() {
  echo "FAIL: $*"
  echo "--- suanli up's output:"
  cat up.out up.err 2>/dev/null | tail -40
  if [ -s stopped.err ]; then
    echo "--- the stopped runs' errors:"
    tail -20 stopped.err
  fi
  exit 1
}

json_field() {  # json_field FIELD < JSON: the first string or number value of FIELD
  grep -oE "\"$1\": *(\"[^\"]*\"|[0-9.]+|true|false)" | head -1 | sed -E "s/\"$1\": *//; s/^\"//; s/\"$//"
}

# Starts `suanli up` on a free port and waits until its agent's node (simulated GPUs: 2 RTX 4090, or
# what `start_up COUNT` says) is listed.
start_up() {
  local gpus=${1:-2}
  "$suanli" up --listen 127.0.0.1:0 --simulate-gpus "${gpus}xRTX 4090" ${engine:+--engine "$engine"} \
    >up.out 2>up.err &
  up_pid=$!
  for _ in $(seq 1 600); do
    url=$(grep -oE 'at http://127.0.0.1:[0-9]+' up.out | sed 's/at //')
    [ -n "$url" ] && break
    kill -0 "$up_pid" 2>/dev/null || fail "suanli up exited"
    sleep 0.1
  done
  [ -n "$url" ] || fail "suanli up printed no URL"
  grep -q "admin-token" up.out || fail "suanli up does not say where the admin token is"
  export SUANLI_URL=$url
  export SUANLI_TOKEN
  SUANLI_TOKEN=$(cat suanli-data/admin-token)
  # Generous: on a loaded 2-core machine (CI runs clang-tidy beside the tests) a restarted agent
  # may take seconds to call in.
  for _ in $(seq 1 300); do
    "$suanli" nodes list 2>/dev/null | grep -q "${gpus}x RTX 4090 (simulated)" && break
    sleep 0.1
  done
  "$suanli" nodes list | grep -q "${gpus}x RTX 4090 (simulated)" || fail "the local agent's node is not listed"
}
