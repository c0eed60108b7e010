#!/usr/bin/env bash
# The README's first command: install what is missing, build in Release, make sure a container engine
# runs (Podman's service is started if no Docker or Podman socket answers) with the offline demo image,
# and run `suanli up`: the server and a local agent. Arguments are passed on (--listen, --data-dir,
# --simulate-gpus, --engine). On a machine without an NVIDIA driver the agent gets two simulated
# RTX 4090s, marked simulated everywhere, so pods (real containers) can be tried anyway.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release platform
engine=$(bash scripts/engine.sh | tail -n 1)

extra=()
if [[ " $* " != *" --simulate-gpus "* ]] && ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
  echo "up.sh: no NVIDIA driver here, so the local agent simulates 2 RTX 4090s (pass --simulate-gpus to choose)"
  extra=(--simulate-gpus "2xRTX 4090")
fi
if [[ " $* " != *" --engine "* ]]; then
  extra+=(--engine "$engine")
fi
exec build/release/suanli up "${extra[@]}" "$@"
