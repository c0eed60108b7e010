#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (and for trying `suanli server --store postgres://`
# by hand): initdb in a folder of its own, run by a non-root user, listening on loopback only, on
# the first free port from 55432; trust authentication, so no password is involved.
#
#   postgres.sh start DIR   starts it (a new cluster if DIR has none) and prints its URL, which it
#                           also writes to DIR/url
#   postgres.sh stop DIR    stops it (fast shutdown) and removes DIR
#
# As root it runs PostgreSQL as the `postgres` user that Debian's package creates (PostgreSQL
# refuses to run as root). Needs postgresql-15 (scripts/install-deps.sh installs it).
set -euo pipefail

action=${1:-}
dir=${2:-}
if [ -z "$action" ] || [ -z "$dir" ]; then
  echo "usage: postgres.sh start|stop DIR" >&2
  exit 2
fi
bin=/usr/lib/postgresql/15/bin
if [ ! -x "$bin/initdb" ]; then
  echo "postgres.sh: $bin/initdb is missing: install postgresql-15 (sudo bash scripts/install-deps.sh)" >&2
  exit 1
fi

as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi

case "$action" in
  start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    if [ -f "$dir/url" ] && "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      cat "$dir/url"
      exit 0
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      "${as_owner[@]}" "$bin/initdb" -D "$dir/data" --username=suanli --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    port=55432
    while (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" \
      >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    url="postgres://suanli@127.0.0.1:$port/postgres"
    echo "$url" >"$dir/url"
    echo "$url"
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "postgres.sh: unknown action '$action' (start or stop)" >&2
    exit 2
    ;;
esac
