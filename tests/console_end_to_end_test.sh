#!/usr/bin/env bash
# The web console in Debian's Chromium (tests/console/console_test.mjs, through playwright-core)
# against a real `suanli up` on simulated GPUs and real Podman: sign in, the GPUs, deploy, reach,
# stop and pay for a pod, sign out, and the error paths. Screenshots of each page go to
# SHOTS_DIR (default: ./console-screenshots), to look at.
# Usage: console_end_to_end_test.sh PATH_TO_SUANLI [SHOTS_DIR]
# (needs a container engine, Chromium and the npm packages: sudo bash scripts/install-deps.sh)
here=$(cd "$(dirname "$0")" && pwd)
shots=$(realpath -m "${2:-console-screenshots}")
source "$here/up_testing.sh" "$1"
[ -x /usr/bin/chromium ] || fail "no /usr/bin/chromium; run: sudo bash scripts/install-deps.sh"
[ -d "$here/console/node_modules/playwright-core" ] ||
  fail "playwright-core is not installed in tests/console; run: sudo bash scripts/install-deps.sh"
mkdir -p "$shots"
# A simulated GPU probe (the real one needs a GPU): it prints what suanli-gpu-probe prints for the
# local agent's two simulated RTX 4090s, copying 635 GB/s (70 % of a healthy card's 907), so the
# advisor page shows this cloud's measured figures.
cat >"$workdir/simulated-gpu-probe" <<'END'
#!/bin/sh
for index in 0 1; do
  echo "{\"index\":$index,\"name\":\"RTX 4090\",\"uuid\":\"SIM-GPU-$index-rtx-4090\",\"compute_capability\":\"8.9\",\"memory_gb\":24,\"memory_bandwidth_gbps\":635,\"fp16_tflops\":160}"
done
END
chmod +x "$workdir/simulated-gpu-probe"
export SUANLI_GPU_PROBE="$workdir/simulated-gpu-probe"
start_up

renter=$("$suanli" users create renter --credits 20 --json | json_field token)
poor=$("$suanli" users create poor --credits 0.01 --json | json_field token)
[ -n "$renter" ] && [ -n "$poor" ] || fail "could not create the test users"
node "$here/console/console_test.mjs" "$url" "$renter" "$poor" "$SUANLI_TOKEN" "$shots" ||
  fail "the console test failed"
