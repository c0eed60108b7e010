#!/usr/bin/env bash
# The README's first command: install what is missing, build in Release, and run `suanli up`
# (arguments are passed on: --listen, --data-dir).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release

exec build/release/suanli up "$@"
