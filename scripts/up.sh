#!/usr/bin/env bash
# The README's first command: install what is missing, build in Release, and run suanli.
# Arguments are passed to `suanli up` (once it exists; until then the catalog is shown).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release

if build/release/suanli up --help >/dev/null 2>&1; then
  exec build/release/suanli up "$@"
fi
echo "suanli: the server ('suanli up') is not built yet; here is the GPU catalog it will rent out."
echo "Try: build/release/suanli compare 4090 a100-80g h100"
echo
exec build/release/suanli gpus
