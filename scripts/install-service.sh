#!/usr/bin/env bash
# Installs suanli as a systemd service: the control plane, or the agent of a GPU host.
#
#   bash scripts/install-service.sh server [--listen HOST:PORT] [--store URL]
#   bash scripts/install-service.sh agent --server URL --join-token slj_... [--name NAME]
#
# Copies build/release/suanli to /usr/local/bin, the unit from deploy/systemd/ to
# /etc/systemd/system, writes the options to /etc/suanli/<role>.env (mode 0600: a join token or a
# store password may be in it), then enables and starts the service. The server runs as the
# system user `suanli` with its data in /var/lib/suanli; the agent runs as root (engine socket,
# NVML) with its identity in /var/lib/suanli-agent. Logs: journalctl -u suanli-server (or -agent).
#
# --root DIR installs under DIR instead of / and starts nothing (packaging, and the test);
# --binary PATH installs that suanli rather than build/release/suanli.
# Run as root. Idempotent: running it again rewrites the options and restarts the service.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '4,5p' "$0" | sed 's/^# *//' >&2
  exit 2
}

role=${1:-}
[ "$role" = server ] || [ "$role" = agent ] || usage
shift
root=
binary=build/release/suanli
listen=0.0.0.0:7070
store=
server_url=
join_token=
name=
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "install-service: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --root) root=$2 ;;
    --binary) binary=$2 ;;
    --listen) listen=$2 ;;
    --store) store=$2 ;;
    --server) server_url=$2 ;;
    --join-token) join_token=$2 ;;
    --name) name=$2 ;;
    *) echo "install-service: unknown option $1" >&2; usage ;;
  esac
  shift 2
done

[ -x "$binary" ] || { echo "install-service: no $binary; run: bash scripts/build.sh release" >&2; exit 1; }
if [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then
  echo "install-service: run as root (or with sudo)" >&2
  exit 1
fi

if [ "$role" = server ]; then
  args="--listen $listen --data-dir /var/lib/suanli"
  [ -n "$store" ] && args+=" --store $store"
  variable=SUANLI_SERVER_ARGS
else
  [ -n "$server_url" ] || { echo "install-service: agent needs --server URL" >&2; exit 2; }
  args="--server $server_url --state-dir /var/lib/suanli-agent"
  # Needed only for the first start; kept so that a lost state directory can join again.
  [ -n "$join_token" ] && args+=" --join-token $join_token"
  [ -n "$name" ] && args+=" --name $name"
  variable=SUANLI_AGENT_ARGS
fi
case "$args" in
  *[\'\"\\\$]*) echo "install-service: quotes, backslashes and \$ are not allowed in the options" >&2; exit 2 ;;
esac

unit=suanli-$role.service
install -D -m 0755 "$binary" "$root/usr/local/bin/suanli"
install -D -m 0644 "deploy/systemd/$unit" "$root/etc/systemd/system/$unit"
install -D -m 0644 README.md "$root/usr/local/share/doc/suanli/README.md"
install -d -m 0755 "$root/etc/suanli"
umask 077
printf '# Options of %s (scripts/install-service.sh)\n%s="%s"\n' "$unit" "$variable" "$args" \
  >"$root/etc/suanli/$role.env"
echo "installed $unit: suanli $role $args"

[ -z "$root" ] || exit 0
if [ "$role" = server ] && ! id suanli >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/suanli --shell /usr/sbin/nologin suanli
fi
systemctl daemon-reload
systemctl enable "$unit"
systemctl restart "$unit"
systemctl --no-pager --lines=5 status "$unit" || true
