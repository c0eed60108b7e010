#!/usr/bin/env bash
# scripts/install-service.sh into a scratch root: the binary, the systemd units and their options
# land where the units expect them, the options file is private, systemd accepts both units
# (systemd-analyze verify, with the paths moved into the scratch root), and bad options are refused.
#   bash tests/install_service_test.sh path/to/suanli
set -euo pipefail
suanli=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
install() { bash "$repo/scripts/install-service.sh" "$@" --root "$root" --binary "$suanli"; }

install server --listen 127.0.0.1:7071 --store postgres://suanli@db/suanli >/dev/null
install agent --server http://10.0.0.2:7070 --join-token slj_abc --name gpu1 >/dev/null

cmp -s "$suanli" "$root/usr/local/bin/suanli" || fail "the binary was not installed"
"$root/usr/local/bin/suanli" gpus --json | grep -q '"RTX 4090"' || fail "the installed suanli does not run"
for role in server agent; do
  [ -f "$root/etc/systemd/system/suanli-$role.service" ] || fail "no suanli-$role.service"
  [ "$(stat -c %a "$root/etc/suanli/$role.env")" = 600 ] || fail "$role.env is readable by others"
done
grep -qx 'SUANLI_SERVER_ARGS="--listen 127.0.0.1:7071 --data-dir /var/lib/suanli --store postgres://suanli@db/suanli"' \
  "$root/etc/suanli/server.env" || fail "server.env: $(cat "$root/etc/suanli/server.env")"
grep -qx 'SUANLI_AGENT_ARGS="--server http://10.0.0.2:7070 --state-dir /var/lib/suanli-agent --join-token slj_abc --name gpu1"' \
  "$root/etc/suanli/agent.env" || fail "agent.env: $(cat "$root/etc/suanli/agent.env")"

# systemd reads both units (ExecStart's binary and the options file must exist: moved under root).
mkdir "$root/check"
for role in server agent; do
  sed "s|/usr/local/bin/suanli|$root/usr/local/bin/suanli|; s|/etc/suanli/|$root/etc/suanli/|" \
    "$root/etc/systemd/system/suanli-$role.service" >"$root/check/suanli-$role.service"
done
systemd-analyze verify "$root/check/suanli-server.service" "$root/check/suanli-agent.service" ||
  fail "systemd-analyze verify refused the units"

# Bad options: refused with the reason, nothing half-written.
if out=$(install agent --join-token slj_abc 2>&1); then fail "an agent without --server was accepted"; fi
grep -q "agent needs --server URL" <<<"$out" || fail "no reason given: $out"
if out=$(install server --listen '127.0.0.1:70"71' 2>&1); then fail "a quote was accepted"; fi
grep -q "not allowed in the options" <<<"$out" || fail "no reason given: $out"
grep -q 7071 "$root/etc/suanli/server.env" || fail "a refused install changed server.env"
if out=$(install cluster 2>&1); then fail "an unknown role was accepted"; fi
echo "install-service: both units installed and verified; bad options refused"
