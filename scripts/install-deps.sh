#!/usr/bin/env bash
# Installs the Debian 12 packages suanli needs to build and test, skipping those already there.
# Run as root or with sudo. Idempotent: a machine that has everything makes no network call.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libboost1.81-dev libboost-json1.81-dev   # Boost.JSON (Asio/Beast arrive with the server)
  libcli11-dev libfmt-dev libspdlog-dev libyaml-cpp-dev libsqlite3-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libarchive-dev                           # tar archives for the engine's archive API
  clang-format clang-tidy
  wrk                                      # bench/api_get_bench.sh
  podman runc catatonit busybox-static curl file  # pods run as containers (scripts/engine.sh)
  dropbear-bin                             # the SSH server in the local demo image (engine.sh)
  iproute2                                 # network namespaces in the agent's fault tests
  openssh-client                           # suanli pods ssh
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages are installed"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root, or install sudo" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
