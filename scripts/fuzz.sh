#!/usr/bin/env bash
# Coverage-guided fuzzing of fuzz/'s targets with clang's libFuzzer, under ASan and UBSan.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET (60)] [TARGET ...]
#
# Builds build/fuzz (clang, -DSUANLI_FUZZ=ON), then runs each target for SECONDS on a copy of its
# corpus (fuzz/corpus/<target>/), so the repository is not changed; prints each target's
# executions. A crash stops with the input saved under build/fuzz/crashes/: fix the bug, then add
# the input to fuzz/corpus/<target>/, where ctest replays it in every build from then on.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(agent_protocol request_body data_files names http_request)

cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DSUANLI_FUZZ=ON -DSUANLI_SANITIZE=ON \
  -DSUANLI_WERROR=ON -DSUANLI_BUILD_TESTS=OFF -DSUANLI_BUILD_BENCH=OFF >/dev/null
cmake --build build/fuzz -j "$(nproc)" --target fuzz_targets

mkdir -p build/fuzz/crashes
total=0
for target in "${targets[@]}"; do
  work=$(mktemp -d)
  log="build/fuzz/$target.log"
  echo "== $target: ${seconds}s"
  if ! "build/fuzz/fuzz/${target}_fuzz" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="build/fuzz/crashes/$target-" "$work" "fuzz/corpus/$target" >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $target crashed; the input is in build/fuzz/crashes/ (see $log)" >&2
    rm -rf "$work"
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "$target: $runs executions, $(ls "$work" | wc -l) new corpus inputs, no crash"
  total=$((total + runs))
  rm -rf "$work"
done
echo "fuzz: $total executions in all, no crash"
