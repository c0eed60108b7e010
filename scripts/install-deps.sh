#!/usr/bin/env bash
# Installs the Debian 12 packages suanli needs to build and test, skipping those already there.
# Run as root or with sudo. Idempotent: a machine that has everything makes no network call.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  ccache                                   # scripts/build.sh: a compiler cache that CI shares with the working tree
  libboost1.81-dev libboost-json1.81-dev   # Boost.JSON (Asio/Beast arrive with the server)
  libcli11-dev libfmt-dev libspdlog-dev libyaml-cpp-dev libsqlite3-dev libssl-dev
  libpq-dev                                # PostgreSQL's client library: the PostgreSQL store
  postgresql-15                            # the store's tests run on a throwaway cluster (scripts/postgres.sh)
  libgtest-dev libgmock-dev libbenchmark-dev
  libarchive-dev                           # tar archives for the engine's archive API
  libjemalloc-dev                          # the executables' allocator (CMakeLists.txt says why)
  clang-format clang-tidy
  clang libclang-rt-14-dev                 # the tsan flavour: clang, and its ThreadSanitizer runtime
  wrk                                      # bench/api_get_bench.sh
  podman runc catatonit busybox-static curl file  # pods run as containers (scripts/engine.sh)
  dropbear-bin                             # the SSH server in the local demo image (engine.sh)
  iproute2                                 # network namespaces in the agent's fault tests
  systemd                                  # systemd-analyze checks deploy/systemd's units (tests)
  openssh-client                           # suanli pods ssh
  chromium                                 # the console's browser tests (tests/console)
  fonts-wqy-microhei                       # CJK glyphs (the brand, 算力) in the console's screenshots
)

# Node.js and npm for the console's tests: Debian's, unless the machine has a Node.js already (an
# image with NodeSource's would conflict with Debian's npm).
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages are installed"
else
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root, or install sudo" >&2; exit 1; }
    as_root=(sudo)
  fi
  echo "install-deps: installing ${missing[*]}"
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The npm packages, at the versions each package-lock.json pins:
# - web/: Chart.js, the console's chart library, compiled into suanli (served from the binary, no CDN);
# - tests/console/: playwright-core, which drives Debian's Chromium and never downloads a browser.
# Without the npm registry the platform still builds and runs: the console then has tables without
# charts, and its browser test fails until npm ci succeeds.
npm_ci() {
  local folder package
  folder="$(dirname "$0")/../$1" package=$2
  [ -d "$folder/node_modules/$package" ] && return 0
  echo "install-deps: npm ci in $1"
  (cd "$folder" && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "install-deps: npm ci in $1 failed: $3" >&2
}
npm_ci web chart.js "the console will have no charts until it succeeds and suanli is built again"
npm_ci tests/console playwright-core "the console's browser test will fail until it succeeds"
