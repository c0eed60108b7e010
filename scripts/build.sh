#!/usr/bin/env bash
# Configures and builds one flavour of suanli into build/<flavour>: every target, or only the
# targets named after the flavour (`build.sh release suanli` is what `suanli up` needs).
#   release  optimised, warnings as errors (what `suanli up` runs)
#   asan     AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors (CI)
#   tsan     ThreadSanitizer, built with clang, whose -Wthread-safety checks the lock annotations;
#            warnings as errors (CI)
#   debug    for development
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-release}
shift || true
targets=()
for target in "$@"; do targets+=(--target "$target"); done
case "$flavour" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release -DSUANLI_WERROR=ON) ;;
  # The sanitizer flavours at -O1 with line tables only (-g1): their reports keep file and line,
  # and a translation unit compiles in ~0.6 of the time of -O2 -g (control_plane_pods.cc under
  # ASan: 13 s against 21 s), which keeps CI inside its hour on 2 cores.
  asan)    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 -DSUANLI_WERROR=ON -DSUANLI_SANITIZE=ON -DSUANLI_BUILD_BENCH=OFF) ;;
  tsan)    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 -DSUANLI_WERROR=ON -DSUANLI_SANITIZE_THREAD=ON -DSUANLI_BUILD_BENCH=OFF
                 -DCMAKE_CXX_COMPILER=clang++) ;;
  debug)   flags=(-DCMAKE_BUILD_TYPE=Debug) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release, asan, tsan or debug)" >&2; exit 2 ;;
esac

# A compiler cache outside the clone, shared by every clone on the machine: CI builds a clean clone
# in another folder right after a session's own builds in its working tree, and those builds warm
# it (base_dir makes the cache key relative to the clone, hash_dir=false keeps -g1's working
# directory out of it). ~750 translation units in three flavours need about 6 GB.
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${SUANLI_CCACHE_DIR:-/var/cache/suanli-ccache}
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
  mkdir -p "$CCACHE_DIR"
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

cmake -S . -B "build/$flavour" -G Ninja "${flags[@]}" >/dev/null
cmake --build "build/$flavour" -j "$(nproc)" "${targets[@]}"
