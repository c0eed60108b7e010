#!/usr/bin/env bash
# Durable pod creates on SQLite and on PostgreSQL in one run, with what an fsync costs each:
# api_create_bench (POST /v1/pods, each answered once its commit is durable) for SECONDS on
# SQLite, then on a fresh database of a throwaway PostgreSQL cluster (scripts/postgres.sh), then
# pgbench's own write test on that cluster (its TPS is PostgreSQL's durable-commit rate here, the
# fsync cost beside ours) and pg_test_fsync's fdatasync rate on the same disk. Results in
# docs/benchmarks.md.
#
#   bash bench/store_compare.sh [BUILD_DIR (build/release)] [SECONDS (30)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
seconds=${2:-30}
bench="$build/bench/api_create_bench"
[ -x "$bench" ] || { echo "no $bench; build the release flavour first" >&2; exit 1; }
bin=/usr/lib/postgresql/15/bin
cluster=$(mktemp -d /tmp/suanli-store-compare-XXXXXX)
trap 'bash scripts/postgres.sh stop "$cluster"' EXIT
url=$(bash scripts/postgres.sh start "$cluster" | tail -n 1)
base=${url%/*}
as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi
psql() { "${as_owner[@]}" "$bin/psql" -q -X "$@"; }
psql "$url" -c "CREATE DATABASE bench_creates" -c "CREATE DATABASE bench_pgbench"

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== SQLite (WAL, synchronous=FULL), $seconds s"
"$bench" --seconds "$seconds"
echo "== PostgreSQL 15 (synchronous_commit on), $seconds s"
"$bench" --seconds "$seconds" --store "$base/bench_creates"
echo "== pgbench -N (simple writes, one durable commit each), 64 clients, 10 s"
"${as_owner[@]}" "$bin/pgbench" -q -i -s 10 "$base/bench_pgbench" >/dev/null 2>&1
"${as_owner[@]}" "$bin/pgbench" -N -c 64 -j 2 -T 10 "$base/bench_pgbench" 2>/dev/null |
  grep -E "tps|latency average"
echo "== pg_test_fsync: fdatasync on this disk"
(cd "$cluster" && "${as_owner[@]}" "$bin/pg_test_fsync" -s 2 -f "$cluster/fsync.test" 2>/dev/null |
  grep -m1 -E "^ +fdatasync ")
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
